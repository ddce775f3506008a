"""`kopf run -m binding_scheduler.operator.kopf_main`: the same operator under Kopf's own CLI, configured from
the environment, stopped by SIGTERM through Kopf's cleanup."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import apply, binding_doc, cluster_doc, get, scheduled, wait_until

KOPF = shutil.which("kopf", path=str(Path(sys.executable).parent))


def start_kopf(api: DevCluster, config_file: Path) -> subprocess.Popen[str]:
    assert KOPF is not None
    env = {
        **os.environ,
        "BINDING_SCHEDULER_KUBECONFIG": str(api.kubeconfig_path),
        "BINDING_SCHEDULER_NAMESPACE": "karmada-system",
        "BINDING_SCHEDULER_CONFIG_FILE": str(config_file),
    }
    return subprocess.Popen(
        [KOPF, "run", "--standalone", "--all-namespaces", "-m", "binding_scheduler.operator.kopf_main"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.skipif(KOPF is None, reason="the kopf command is not installed next to this interpreter")
def test_kopf_run_schedules_and_shuts_down_cleanly(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=2))
    process = start_kopf(api, config_file)
    try:
        body = wait_until(lambda: scheduled(api, "web"), timeout=60, what="kopf run to schedule the binding")
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode == 0, output
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]
    assert "shutdown complete" in output
    assert "FutureWarning" not in output
    assert "Handler " not in output  # Kopf's per-event "Handler ... succeeded" lines are dropped
    lease = get(api, "leases", "karmada-scheduler", "karmada-system")
    assert lease is not None and lease["spec"]["holderIdentity"] == ""


@pytest.mark.skipif(KOPF is None, reason="the kopf command is not installed next to this interpreter")
def test_kopf_run_exits_non_zero_when_lease_is_lost(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=2))
    process = start_kopf(api, config_file)
    try:
        wait_until(lambda: scheduled(api, "web"), timeout=60, what="kopf run to lead and schedule")
        api.faults.add(method="PUT", path=r"/leases/karmada-scheduler$", status=500)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, output
    assert "lease lost" in output


@pytest.mark.skipif(KOPF is None, reason="the kopf command is not installed next to this interpreter")
def test_kopf_run_failing_start_says_why_exits_1(tmp_path: Path) -> None:
    """A missing kubeconfig: 76-79 lines with two tracebacks and a never-awaited coroutine before; now the line
    `binding-scheduler run` prints, and status 1."""
    missing = tmp_path / "missing-kubeconfig"
    env = {**os.environ, "BINDING_SCHEDULER_KUBECONFIG": str(missing), "BINDING_SCHEDULER_NAMESPACE": "karmada-system"}
    assert KOPF is not None
    result = subprocess.run([KOPF, "run", "--standalone", "--all-namespaces", "-m",
                             "binding_scheduler.operator.kopf_main"], env=env, capture_output=True, text=True,
                            timeout=60, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output and "never awaited" not in output, output
    (line,) = [text for text in output.splitlines() if "cannot start" in text]
    assert line.endswith(f"cannot start: kubeconfig {missing} does not exist"), line
    assert len(output.strip().splitlines()) == 1, output


def test_kopf_run_unknown_event_path_exits_1() -> None:
    env = {**os.environ, "BINDING_SCHEDULER_EVENT_PATH": "bogus"}
    assert KOPF is not None
    result = subprocess.run([KOPF, "run", "--standalone", "--all-namespaces", "-m",
                             "binding_scheduler.operator.kopf_main"], env=env, capture_output=True, text=True,
                            timeout=60, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert output.strip().splitlines() == [
        "cannot start: BINDING_SCHEDULER_EVENT_PATH: 'bogus' is not one of auto, kopf"], output
