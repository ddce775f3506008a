"""What "nothing is written after shutdown" can and cannot promise, on the real kube-apiserver and etcd.

etcd stopped (SIGSTOP) while the leader's spec write is on its way to it: the drain deadline cuts the write, the
shutdown report counts it as a write that may still land, and no request is sent after the shutdown. When etcd
resumes, that write may be applied after the process exited; no client can recall it. What makes it harmless is
the fence: it carries the resourceVersion its pass read, so once the next leader has written a newer decision,
the same write is refused with 409, and the binding keeps the newer decision."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import (
    Journal,
    Objects,
    OperatorIdentity,
    condition,
    e2e_config,
    start_operator,
    unique,
)
from testsupport.operator.harness import OperatorThread, binding_doc, cluster_doc, wait_until
from testsupport.realcluster.controlplane import SCHEDULER_NAMESPACE, ControlPlane
from testsupport.realcluster.kube import KubeClient, path_of
from testsupport.realcluster.webhook import Fault, admission_faults

DRAIN = 1.0
ELECTION = {"leaseDuration": "8s", "renewDeadline": "6s", "retryPeriod": "500ms"}
"""A renewal begun just before etcd stops must not run out its deadline before the stop cancels the keeper (after
the drain and the Events, ~2 s): the old leader would lose the Lease and exit 1."""
STOP_BUDGET = DRAIN + 4.0 + 2.0  # the drain, the stop's tail, the thread's exit


def placed_on(cluster: str) -> dict[str, Any]:
    return {"clusterAffinity": {"clusterNames": [cluster]},
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}


def etcd_pid(plane: ControlPlane) -> int:
    """etcd's pid as the control plane recorded it (`setpriv` execs etcd, so the pid is etcd's own)."""
    entry = json.loads((plane.state / "pids.json").read_text())["etcd"]
    pid = int(entry["pid"]) if isinstance(entry, dict) else int(entry)
    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
        assert b"etcd" in cmdline.read().split(b"\0")[0], f"pid {pid} is not etcd any more"
    return pid


@contextlib.contextmanager
def etcd_stopped(plane: ControlPlane) -> Iterator[None]:
    pid = etcd_pid(plane)
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.fixture
def namespace(objects: Objects) -> str:
    name = unique("e2e-late")
    objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def test_write_cut_with_etcd_stalled_never_overwrites_next_leader(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, namespace: str,
    scheduler_name: str, tmp_path: Path,
) -> None:
    first, second = unique("member"), unique("member")
    objects.create(cluster_doc(first), cluster_doc(second))
    read = objects.create(binding_doc("web", namespace=namespace, replicas=2, placement=placed_on(first),
                                      scheduler_name=scheduler_name))[0]
    config = e2e_config(tmp_path / "config.yaml", scheduler_name, leaderElection=ELECTION,
                        shutdown={"drainTimeout": f"{DRAIN:g}s"})
    with admission_faults(control_plane, namespace) as faults:
        held = faults.add(Fault(resource="resourcebindings", name="web", hold=True))
        old = start_operator(control_plane, config, identity="old")
        held.wait_hit()  # the old leader's spec write is inside kube-apiserver
        with etcd_stopped(control_plane):
            held.release()  # on to etcd, which answers nothing
            time.sleep(0.5)
            signalled = time.monotonic()
            assert old.stop() == 0
            stopped_in = time.monotonic() - signalled
            stopped = time.time()

    report = old.app.service.report if old.app.service is not None else None
    assert report is not None
    assert stopped_in < STOP_BUDGET
    assert (report.drained, report.cut) == (0, 1)
    assert report.in_doubt >= 1, report.line()
    assert "may still be applied (binding and Lease writes are fenced: only where nobody wrote since)" in report.line()
    assert [str(e) for e in journal.operator() if e.received >= stopped] == []  # nothing sent after the stop

    # A newer spec, decided by the next leader.
    kube.patch("ResourceBinding", "web", {"spec": {"placement": placed_on(second)}}, namespace)
    new = OperatorThread(OperatorIdentity(control_plane.operator_kubeconfig_path), config, identity="new",
                         namespace=SCHEDULER_NAMESPACE).start(timeout=40)  # once the old Lease expired
    try:
        body = wait_until(lambda: _placed(kube, namespace, second), 30, "the next leader's decision")
        newer = body["metadata"]["resourceVersion"]

        # The old leader's write applied now, as etcd may apply it late: refused, the newer decision stays.
        late = {"metadata": {"resourceVersion": read["metadata"]["resourceVersion"]},
                "spec": {"clusters": [{"name": first, "replicas": 2}]}}
        as_old_leader = KubeClient.from_kubeconfig(control_plane.operator_kubeconfig_path)
        status, answer = as_old_leader.request("PATCH", path_of("ResourceBinding", "web", namespace), late)
        assert status == 409, answer
        after = kube.get("ResourceBinding", "web", namespace)
        assert after is not None
        assert after["spec"]["clusters"] == [{"name": second, "replicas": 2}]
        assert after["metadata"]["resourceVersion"] == newer
    finally:
        assert new.stop() == 0


def _placed(kube: KubeClient, namespace: str, cluster: str) -> dict[str, Any] | None:
    body = kube.get("ResourceBinding", "web", namespace)
    if body is None or body["spec"].get("clusters") != [{"name": cluster, "replicas": 2}]:
        return None
    verdict = condition(body)
    observed = (body.get("status") or {}).get("schedulerObservedGeneration")
    if verdict is None or verdict["status"] != "True" or observed != body["metadata"]["generation"]:
        return None
    return body
