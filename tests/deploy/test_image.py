"""The image `python3 dev.py image` builds, run for real: imported into a containerd of the test's own (Debian's
containerd and runc) and started with runc, its root filesystem read-only, as the image's own user.

Root only (the build runs debootstrap and chroot; containerd needs root): elsewhere the module skips with one
line. The first build debootstraps Debian (about a minute and a half); `dev.py test` does it before the tests
start, and a build whose inputs did not change returns at once."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from scripts import image as recipe
from tests.cli.test_karmada_flags import ARTIFACTS_ARGS
from tests.deploy.containerd import Containerd, ContainerdError, containerd
from tests.deploy.observe import blob_name, get, read_json
from tests.estimation.helpers import make_certificates
from testsupport.operator.harness import apply, binding_doc, cluster_doc, namespaces, scheduled, wait_until
from testsupport.realcluster.controlplane import ROOT, dying_with_parent, free_port

NEEDS = "image tier: needs root and Debian's debootstrap, containerd and runc (apt-get installs them as root)"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
REFERENCE = f"docker.io/library/binding-scheduler:{VERSION}"

pytestmark = pytest.mark.timeout(900)  # a first build on an empty cache debootstraps; each wait has its own bound


@pytest.fixture(scope="module")
def built() -> tuple[str, Path]:
    """`python3 dev.py image`'s stdout and the archive it names."""
    if os.geteuid() != 0:
        pytest.skip(NEEDS)
    result = subprocess.run([sys.executable, str(ROOT / "dev.py"), "image"], capture_output=True, text=True,
                            timeout=840, check=False)
    if result.returncode == recipe.EXIT_CANNOT:
        pytest.skip(f"{NEEDS}: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    match = re.fullmatch(r"image: (\S+) at (\S+) \(oci-archive\)\n", result.stdout)
    assert match is not None, result.stdout
    return result.stdout, Path(match[2])


@pytest.fixture(scope="module")
def engine(built: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Containerd]:
    """A containerd of our own with the archive imported."""
    try:
        recipe.ensure_commands({"containerd": "containerd", "ctr": "containerd", "runc": "runc"})
    except recipe.BuildError as error:
        pytest.skip(f"{NEEDS}: {error}")
    folder = tmp_path_factory.mktemp("containerd")
    namespace = f"binding-scheduler-test-{os.getpid()}"
    try:
        with containerd(folder, namespace, launcher=dying_with_parent) as daemon:
            imported = daemon.ctr("images", "import", str(built[1]), timeout=120)
            assert imported.returncode == 0, imported.stderr
            yield daemon
    except ContainerdError as error:
        pytest.fail(str(error), pytrace=False)


def image_config(archive: Path) -> dict[str, Any]:
    """The config the archive's index leads to."""
    with tarfile.open(archive) as tar:
        index = read_json(tar, "index.json")
        manifest = read_json(tar, blob_name(index["manifests"][0]))
        return read_json(tar, blob_name(manifest["config"]))




def test_dev_py_image_prints_contract_line(built: tuple[str, Path]) -> None:
    stdout, archive = built
    assert stdout == f"image: binding-scheduler:{VERSION} at {archive} (oci-archive)\n"
    assert archive.is_file() and archive.name.endswith(".oci.tar")
    assert not archive.resolve().is_relative_to(ROOT)  # outside the clone


def test_images_config_is_recipe(built: tuple[str, Path]) -> None:
    """What scripts/image.py says (and the Containerfile, test_image_recipes.py) is what the archive holds."""
    document = image_config(built[1])
    config = document["config"]
    assert (config["User"], config["Entrypoint"], config["Cmd"]) == (
        recipe.USER, list(recipe.ENTRYPOINT), list(recipe.CMD))
    assert sorted(config["ExposedPorts"]) == sorted(f"{port}/tcp" for port in recipe.PORTS)
    assert {f"{key}={value}" for key, value in recipe.ENV.items()} <= set(config["Env"])
    assert config["Labels"]["org.opencontainers.image.version"] == VERSION
    assert (document["os"], len(document["rootfs"]["diff_ids"])) == ("linux", 2)


def test_archive_is_imported_under_name(engine: Containerd) -> None:
    assert REFERENCE in engine.ctr("images", "ls", "-q").stdout.split()


def test_entrypoint_answers_version(
    engine: Containerd, built: tuple[str, Path]
) -> None:
    """ctr takes a command as the whole argv, so the image's own entrypoint is read from its config."""
    config = image_config(built[1])["config"]
    version = engine.run(REFERENCE, *config["Entrypoint"], "--version")
    assert (version.returncode, version.stdout.splitlines()[0]) == (0, f"binding-scheduler {VERSION}"), (
        version.stderr)
    who = engine.run(REFERENCE, "id")
    assert who.stdout == "uid=10001(scheduler) gid=10001(scheduler) groups=10001(scheduler)\n", who.stderr


PROBE = """
import importlib.util, json, os, shutil, sys
import aiohttp, grpc, kopf, numpy, orjson, prometheus_client, yaml
import binding_scheduler.cli.main, binding_scheduler.cli.run, binding_scheduler.operator.app
stale = []
for name, module in sorted(sys.modules.items()):
    source = getattr(module, "__file__", None) or ""
    if source.endswith(".py"):
        try:
            with open(importlib.util.cache_from_source(source), "rb") as pyc:
                flags = int.from_bytes(pyc.read(8)[4:], "little")
        except OSError:
            flags = None
        if flags != 1:  # 0b01: hash-based, never checked against the source
            stale.append(name)
try:
    open("/written-by-the-probe", "w").close()
    written = "written"
except OSError as error:
    written = error.strerror
print(json.dumps({
    "tools": sorted(tool for tool in sys.argv[1:] if shutil.which(tool)),
    "pip": importlib.util.find_spec("pip") is not None,
    "stale": stale, "modules": len(sys.modules), "root": written,
    "karmada-scheduler": os.path.realpath("/bin/karmada-scheduler"),
    "python": sys.executable, "dont_write_bytecode": sys.dont_write_bytecode,
}))
"""


def test_image_has_no_compiler_no_pip_and_bytecode(engine: Containerd) -> None:
    """Hash-based .pyc for every module the scheduler's run path imports: a start on the read-only root
    compiles nothing (PYTHONDONTWRITEBYTECODE could not save it anyway)."""
    probe = engine.run(REFERENCE, "python3", "-c", PROBE, *recipe.FORBIDDEN)
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert (found["tools"], found["pip"]) == ([], False)
    assert found["root"] == "Read-only file system"
    assert found["stale"] == [] and found["modules"] > 300
    assert found["karmada-scheduler"] == recipe.KARMADA_SCHEDULER
    assert (found["python"], found["dont_write_bytecode"]) == ("/usr/bin/python3", True)


def test_bin_karmada_scheduler_answers_with_karmadas_flags(engine: Containerd) -> None:
    result = engine.run(REFERENCE, "/bin/karmada-scheduler", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: binding-scheduler run ")
    assert "--kubeconfig" in result.stdout


def readable_copy(source: Path, target: Path) -> Path:
    """The image's user reads the mounted files: world-readable copies (only the test's tmp folder sees them)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.parent.chmod(0o755)
    shutil.copyfile(source, target)
    target.chmod(0o644)
    return target



@pytest.fixture
def api() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as cluster:
        namespaces(cluster, "default", "karmada-system")
        yield cluster


def test_karmadas_command_schedules_in_container(
    engine: Containerd, api: DevCluster, tmp_path: Path
) -> None:
    """Karmada's own Deployment command and paths (artifacts/deploy/karmada-scheduler.yaml), the files mounted
    where Karmada mounts them, the root read-only, the host's network (devcluster listens on its loopback):
    tini is PID 1, the binding is scheduled, probes and metrics answer, and SIGTERM to the container ends it
    with status 0 after the drain."""
    certs = make_certificates(tmp_path)
    config = readable_copy(api.kubeconfig_path, tmp_path / "mounted" / "config" / "karmada.config")
    pki = tmp_path / "mounted" / "pki"
    for name, source in (("ca.crt", "ca.crt"), ("tls.crt", "client.crt"), ("tls.key", "client.key")):
        readable_copy(certs[source], pki / name)
    health, metrics = free_port(), free_port()
    args = [arg.replace("$(POD_IP):8080", f"127.0.0.1:{metrics}").replace("$(POD_IP):10351", f"127.0.0.1:{health}")
            for arg in ARTIFACTS_ARGS]
    mounts = [f"type=bind,src={config},dst=/etc/karmada/config/karmada.config,options=rbind:ro",
              f"type=bind,src={pki},dst=/etc/karmada/pki/scheduler-estimator-client,options=rbind:ro"]
    apply(api, cluster_doc("m1"), binding_doc("web", placement={"replicaScheduling": {
        "replicaSchedulingType": "Duplicated"}}))
    name, command = engine.run_command(REFERENCE, ["/bin/karmada-scheduler", *args], net_host=True, mounts=mounts)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: scheduled(api, "web"), timeout=60, what="the binding to be scheduled")
        assert get(health, "/readyz") == 200
        assert get(metrics, "/metrics") == 200
        first = engine.ctr("tasks", "exec", "--exec-id", "probe", "--fifo-dir", str(engine.folder / "fifo"), name,
                           "cat", "/proc/1/cmdline")
        assert first.stdout.split("\0")[:3] == ["/usr/bin/tini", "--", "binding-scheduler"], first.stderr
        assert engine.ctr("tasks", "kill", "--signal", "SIGTERM", name).returncode == 0
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            engine.ctr("tasks", "kill", "--signal", "SIGKILL", name)
            process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "lease released; write gate closed" in output
    body = scheduled(api, "web")
    assert body is not None and body["spec"]["clusters"] == [{"name": "m1", "replicas": 1}]
