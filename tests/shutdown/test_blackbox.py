"""Black-box: `binding-scheduler run` as a process, its passes blocked in hanging estimator calls, stopped
with SIGTERM. It exits 0 without waiting for the drain timeout (no pass was committing), writes nothing
after it exited, and leaves the Lease released for its successor."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.estimation.stub import EstimatorStub
from binding_scheduler.scheduling.lifecycle.stop_budget import STOP_TAIL
from tests.shutdown.helpers import lease_held_elsewhere, stubs_in_thread, writes_after
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    get,
    scheduled,
    wait_until,
    write_config,
)

DRAIN_TIMEOUT = 60.0



def run_process(api: DevCluster, config: Path) -> subprocess.Popen[str]:
    """`binding-scheduler run` against `api` with the configuration file `config`, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "binding_scheduler.cli.main", "run", "--kubeconfig", str(api.kubeconfig_path),
         "--namespace", "karmada-system", "--config-file", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def reap(process: subprocess.Popen[str]) -> None:
    """A process a failed test left running: killed and waited for."""
    if process.poll() is None:
        process.kill()
        process.communicate()

def test_sigterm_stops_process_in_estimator_calls(
    api: DevCluster, tmp_path: Path
) -> None:
    names = ("m1", "m2", "m3")
    with stubs_in_thread(*(EstimatorStub(n, replicas=10, mode="hang") for n in names)) as stubs:
        spec = config_spec(
            workers=4,
            estimator={"enabled": True, "timeout": "120s", "endpoints": {s.cluster_name: s.address for s in stubs}},
            shutdown={"drainTimeout": f"{DRAIN_TIMEOUT:g}s"},
        )
        config = write_config(tmp_path / "config.yaml", spec)
        apply(api, *(cluster_doc(n) for n in names), *(binding_doc(f"web-{i}") for i in range(4)))
        process = run_process(api, config)
        try:
            wait_until(lambda: all(len(s.calls) >= 4 for s in stubs), timeout=60, what="4 passes in estimator calls")
            process.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            _, stderr = process.communicate(timeout=DRAIN_TIMEOUT / 2)
        finally:
            reap(process)
        exited = time.monotonic()

        assert process.returncode == 0, stderr
        assert exited - signalled < DRAIN_TIMEOUT / 2
        assert "shutdown complete" in stderr
        assert "4 passes cancelled before their commit point, 0 drained, 0 cut" in stderr
        wait_until(lambda: all(s.cancelled.is_set() for s in stubs), what="every estimator call to be cancelled")
    assert writes_after(api, exited) == []
    assert [e.path for e in api.journal.filter(method="PATCH", path=r"/resourcebindings/")] == []
    lease = get(api, "leases", "karmada-scheduler", "karmada-system")
    assert lease is not None and lease["spec"]["holderIdentity"] == ""


def test_sigterm_stops_waiting_standby_at_once(
    api: DevCluster, tmp_path: Path
) -> None:
    """A standby pod is terminated in every rollout: it must leave at once, not after Kopf's 5 s wait for
    the tasks of a startup it cut short."""
    lease_held_elsewhere(api)
    config = write_config(tmp_path / "config.yaml", config_spec())
    process = run_process(api, config)
    try:
        wait_until(lambda: len(api.journal.filter(path=r"/leases/karmada-scheduler$")) >= 2,
                   what="the standby to poll the Lease")
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        _, stderr = process.communicate(timeout=30)
    finally:
        reap(process)
    exited = time.monotonic()

    assert process.returncode == 0, stderr
    assert "lease not held; write gate closed" in stderr
    assert exited - signalled < KOPF_WIND_DOWN - 2
    assert writes_after(api, exited) == []


KOPF_WIND_DOWN = 5.0  # seconds Kopf waits for the tasks left when it stops


STALLED_DRAIN = 2.0
KARMADA_ELECTION = {"leaseNamespace": "karmada-system", "leaseDuration": "15s", "renewDeadline": "10s",
                    "retryPeriod": "2s"}
"""karmada-scheduler's defaults: a Lease release waiting for its renewDeadline would take 10 s."""
EXIT_SLACK = 2.5
"""Seconds between the shutdown's end and the process's exit (Kopf's wind-down, the interpreter's exit)."""


def test_sigterm_with_stalled_server_exits_within_budget(
    api: DevCluster, tmp_path: Path
) -> None:
    """karmada-apiserver stopped (SIGSTOP) during a write burst: every request hangs. The stop ends within
    drainTimeout + its tail (so inside the chart's grace period of drainTimeout + 10 s), with no traceback, and its
    last line says the Lease was not released and how many writes may still land."""
    names = ("m1", "m2")
    spec = config_spec(workers=4, leaderElection=KARMADA_ELECTION,
                       shutdown={"drainTimeout": f"{STALLED_DRAIN:g}s"})
    config = write_config(tmp_path / "config.yaml", spec)
    apply(api, *(cluster_doc(n) for n in names), binding_doc("web-0"))
    process = run_process(api, config)
    stall = None
    try:
        wait_until(lambda: scheduled(api, "web-0"), timeout=60, what="the first binding to be scheduled")
        stall = api.faults.add(hang=True)
        apply(api, *(binding_doc(f"web-{i}") for i in range(1, 5)))  # the watch brings them: their writes hang
        wait_until(lambda: len(api.journal.filter(method="PATCH", path=r"/resourcebindings/web-[1-4]$")) >= 4,
                   timeout=30, what="four spec writes hanging")
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        _, stderr = process.communicate(timeout=60)
    finally:
        reap(process)
        if stall is not None:
            stall.remove()
    exited = time.monotonic()

    assert process.returncode == 0, stderr
    assert exited - signalled < STALLED_DRAIN + STOP_TAIL + EXIT_SLACK, stderr
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr
    report = [line for line in stderr.splitlines() if "shutdown complete" in line]
    assert len(report) == 1, stderr
    assert "0 drained, 4 cut at the drain deadline; lease not released (no answer within" in report[0]
    assert "it expires 15s after its last renewal; " in report[0]
    assert re.search(r"; [4-9] writes got no answer and may still be applied \(binding and Lease writes are "
                     r"fenced: only where nobody wrote since\); write gate closed$", report[0]), report[0]
