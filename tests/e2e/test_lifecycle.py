"""Shutdown, fencing and leadership on the real kube-apiserver, judged by its audit log: after SIGTERM the only
write is the Lease release; a write held at the server is drained; a stale decision is refused with 409;
leadership moves between two processes; `kopf run` works too."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from binding_scheduler.estimation.stub import EstimatorStub
from tests.e2e.harness import (
    Journal,
    Objects,
    condition,
    e2e_config,
    start_operator,
    unique,
    wait_scheduled,
)
from tests.shutdown.helpers import HeldPasses, stubs_in_thread
from testsupport.operator.harness import binding_doc, cluster_doc, config_spec, wait_until
from testsupport.realcluster.controlplane import SCHEDULER_NAMESPACE, ControlPlane
from testsupport.realcluster.kube import KubeClient
from testsupport.realcluster.webhook import Fault, admission_faults

KOPF = shutil.which("kopf", path=str(Path(sys.executable).parent))


@pytest.fixture
def namespace(objects: Objects) -> str:
    name = unique("e2e-ns")
    objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


@pytest.fixture
def member(objects: Objects) -> str:
    """One member Cluster of this test's own (clusters are cluster-scoped and shared by every scheduler)."""
    name = unique("member")
    objects.create(cluster_doc(name))
    return name


def placed_on(cluster: str) -> dict[str, Any]:
    return {"clusterAffinity": {"clusterNames": [cluster]},
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}


def binding(name: str, namespace: str, scheduler_name: str, cluster: str, replicas: int = 2) -> dict[str, Any]:
    return binding_doc(name, namespace=namespace, replicas=replicas, placement=placed_on(cluster),
                       scheduler_name=scheduler_name)


def run_process(plane: ControlPlane, config: Path, *extra: str, log: Path | None = None) -> subprocess.Popen[str]:
    """`binding-scheduler run` as the scheduler's ServiceAccount; its log goes to `log` (else a pipe)."""
    output = log.open("w") if log is not None else subprocess.PIPE
    return subprocess.Popen(
        [sys.executable, "-m", "binding_scheduler.cli.main", "run", "--kubeconfig",
         str(plane.operator_kubeconfig_path), "--namespace", SCHEDULER_NAMESPACE, "--config-file", str(config),
         *extra],
        stdout=output, stderr=output, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()


def placed(kube: KubeClient, name: str, namespace: str, clusters: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The binding once it is scheduled onto exactly `clusters`."""
    body = kube.get("ResourceBinding", name, namespace)
    if body is None or condition(body) is None or body["spec"].get("clusters") != clusters:
        return None
    return body if body["status"].get("schedulerObservedGeneration") == body["metadata"]["generation"] else None


def lease_holder(kube: KubeClient, name: str) -> str | None:
    lease = kube.get("Lease", name, SCHEDULER_NAMESPACE)
    return None if lease is None else str(lease["spec"].get("holderIdentity") or "")


def test_sigterm_exits_in_2s_writing_only_lease(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, namespace: str,
    scheduler_name: str, tmp_path: Path, processes: list[subprocess.Popen[str]],
) -> None:
    names = [unique("member") for _ in range(3)]
    objects.create(*(cluster_doc(n) for n in names))
    objects.create(*(
        binding_doc(f"web-{i}", namespace=namespace, replicas=4, scheduler_name=scheduler_name) for i in range(4)
    ))
    with stubs_in_thread(*(EstimatorStub(n, replicas=10, mode="hang") for n in names)) as stubs:
        config = e2e_config(
            tmp_path / "config.yaml", scheduler_name, workers=4, shutdown={"drainTimeout": "60s"},
            estimator={"enabled": True, "timeout": "120s", "endpoints": {s.cluster_name: s.address for s in stubs}},
        )
        process = run_process(control_plane, config, log=tmp_path / "run.log")
        processes.append(process)
        wait_until(lambda: all(len(s.calls) >= 4 for s in stubs), timeout=60, what="4 passes in estimator calls")
        signalled = time.time()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        exited = time.time()
        stderr = (tmp_path / "run.log").read_text()

    assert process.returncode == 0, stderr
    assert exited - signalled < 2.0
    assert "4 passes cancelled before their commit point, 0 drained, 0 cut" in stderr
    after = [(e.verb, e.resource, e.name, e.code) for e in journal.operator_writes() if e.received >= signalled]
    assert after == [("update", "leases", scheduler_name, 200)]
    assert lease_holder(kube, scheduler_name) == ""
    assert [e for e in journal.operator_writes() if e.resource == "resourcebindings"] == []


def test_held_spec_write_is_drained_then_nothing_written(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, namespace: str,
    member: str, scheduler_name: str, tmp_path: Path,
) -> None:
    objects.create(binding("web", namespace, scheduler_name, member))
    with admission_faults(control_plane, namespace) as faults:
        held = faults.add(Fault(resource="resourcebindings", name="web", hold=True))
        operator = start_operator(control_plane, e2e_config(tmp_path / "config.yaml", scheduler_name))
        held.wait_hit()
        operator.call(operator.app.request_stop)
        held.release()
        assert operator.stop() == 0
        stopped = time.time()

    service = operator.app.service
    assert service is not None and service.report is not None
    assert (service.report.cancelled, service.report.drained, service.report.cut) == (0, 1, 0)
    body = kube.get("ResourceBinding", "web", namespace)
    assert body is not None and body["spec"]["clusters"] == [{"name": member, "replicas": 2}]
    assert (condition(body) or {}).get("reason") == "Success"
    writes = [(e.verb, e.subresource, e.code) for e in journal.operator_writes("/resourcebindings/web")]
    assert writes == [("patch", "", 200), ("patch", "status", 200)]
    assert [str(e) for e in journal.operator_writes() if e.received >= stopped] == []


def test_stale_decision_gets_409_newer_spec_scheduled(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, namespace: str,
    member: str, scheduler_name: str, tmp_path: Path,
) -> None:
    objects.create(binding("web", namespace, scheduler_name, member, replicas=2))
    held = HeldPasses()
    operator = start_operator(control_plane, e2e_config(tmp_path / "config.yaml", scheduler_name), plugins=[held])
    try:
        held.wait_entered()
        kube.patch("ResourceBinding", "web", {"spec": {"replicas": 5}}, namespace)
        held.release()
        body = wait_until(lambda: placed(kube, "web", namespace, [{"name": member, "replicas": 5}]),
                          what="the newer spec to be scheduled")
    finally:
        assert operator.stop() == 0
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]
    spec_writes = [e for e in journal.operator_writes("/resourcebindings/web") if not e.subresource]
    assert [e.code for e in spec_writes] == [409, 200]
    assert spec_writes[0].body["spec"]["clusters"] == [{"name": member, "replicas": 2}]
    assert all("/status" not in str(e) for e in journal.operator_writes() if e.code == 409)


def test_leadership_moves_to_standby_process_when_leader_stops(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, namespace: str,
    member: str, scheduler_name: str, tmp_path: Path, processes: list[subprocess.Popen[str]],
) -> None:
    config = e2e_config(tmp_path / "config.yaml", scheduler_name)
    objects.create(binding("first", namespace, scheduler_name, member))
    leader = run_process(control_plane, config, "--identity", "one", log=tmp_path / "one.log")
    processes.append(leader)
    wait_scheduled(kube, "ResourceBinding", "first", namespace, timeout=60)
    standby = run_process(control_plane, config, "--identity", "two", log=tmp_path / "two.log")
    processes.append(standby)
    wait_until(lambda: "waiting for lease" in (tmp_path / "two.log").read_text(), timeout=30,
               what="the second process to wait for the Lease")
    assert standby.poll() is None
    assert lease_holder(kube, scheduler_name) == "one"

    signalled = time.time()
    leader.send_signal(signal.SIGTERM)
    leader.communicate(timeout=30)
    assert leader.returncode == 0
    wait_until(lambda: lease_holder(kube, scheduler_name) == "two", timeout=15, what="the standby to take the Lease")
    objects.create(binding("second", namespace, scheduler_name, member))
    body = wait_scheduled(kube, "ResourceBinding", "second", namespace, timeout=30)
    assert body["spec"]["clusters"] == [{"name": member, "replicas": 2}]
    standby.send_signal(signal.SIGTERM)
    standby.communicate(timeout=30)
    assert standby.returncode == 0

    lease_writes = [e for e in journal.operator_writes(f"/leases/{scheduler_name}") if e.received >= signalled]
    holders = [str((e.body or {}).get("spec", {}).get("holderIdentity")) for e in lease_writes if e.code < 300]
    released = holders.index("")  # the leader's release; before it, only a renewal it had in flight when signalled
    assert set(holders[:released]) <= {"one"}
    assert holders[released:released + 2] == ["", "two"]  # then the standby's acquisition
    assert set(holders[released + 1:-1]) == {"two"} and holders[-1] == ""


def test_named_config_read_and_marked_valid(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, namespace: str, member: str,
    scheduler_name: str,
) -> None:
    lease = {"leaseName": scheduler_name, "leaseNamespace": SCHEDULER_NAMESPACE}
    objects.create({
        "apiVersion": "config.binding-scheduler.io/v1alpha1", "kind": "SchedulerConfiguration",
        "metadata": {"name": scheduler_name, "namespace": SCHEDULER_NAMESPACE},
        "spec": config_spec(schedulerName=scheduler_name, leaderElection=lease),
    })
    objects.create(binding("web", namespace, scheduler_name, member))
    operator = start_operator(control_plane, None, config_name=scheduler_name)
    try:
        wait_scheduled(kube, "ResourceBinding", "web", namespace)
        valid = wait_until(
            lambda: condition(kube.get("SchedulerConfiguration", scheduler_name, SCHEDULER_NAMESPACE), "Valid"),
            what="the Valid condition",
        )
    finally:
        assert operator.stop() == 0
    assert (valid["status"], valid["reason"], valid["message"]) == ("True", "Valid", "applied")


@pytest.mark.skipif(KOPF is None, reason="the kopf command is not installed next to this interpreter")
def test_kopf_run_schedules_on_real_server_and_stops_cleanly(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, namespace: str, member: str,
    scheduler_name: str, tmp_path: Path, processes: list[subprocess.Popen[str]],
) -> None:
    assert KOPF is not None
    objects.create(binding("web", namespace, scheduler_name, member))
    env = {
        **os.environ,
        "BINDING_SCHEDULER_KUBECONFIG": str(control_plane.operator_kubeconfig_path),
        "BINDING_SCHEDULER_NAMESPACE": SCHEDULER_NAMESPACE,
        "BINDING_SCHEDULER_CONFIG_FILE": str(e2e_config(tmp_path / "config.yaml", scheduler_name)),
    }
    process = subprocess.Popen(
        [KOPF, "run", "--standalone", "--all-namespaces", "-m", "binding_scheduler.operator.kopf_main"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    processes.append(process)
    body = wait_scheduled(kube, "ResourceBinding", "web", namespace, timeout=60)
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert body["spec"]["clusters"] == [{"name": member, "replicas": 2}]
    assert "shutdown complete" in output
    assert lease_holder(kube, scheduler_name) == ""

