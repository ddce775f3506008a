"""Binding priority preemption on the real kube-apiserver, as the scheduler's least-privileged ServiceAccount, judged
by the audit log: the CRDs keep `preemptionPolicy` and the eviction task, the victim's eviction is one fenced
PATCH, and the preemptor is scheduled once the freed capacity shows in the cluster's summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.harness import Journal, Objects, condition, e2e_config, start_operator, unique
from testsupport.fencing import fence
from testsupport.operator.harness import binding_doc, wait_until
from testsupport.realcluster.kube import KubeClient

GATES = {"PriorityBasedScheduling": True, "PriorityBasedPreemptiveScheduling": True}


def member_of(objects: Objects, kube: KubeClient, used: str) -> str:
    """A member Cluster of this test's own: 30m of CPU, `used` of it allocated."""
    name = unique("member")
    objects.create({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
        "spec": {"syncMode": "Push"},
        "status": {"apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments",
                                                                                  "kind": "Deployment"}]}]},
    })
    summary(kube, name, used)
    return name


def summary(kube: KubeClient, cluster: str, used: str) -> None:
    kube.patch("Cluster", cluster, {"status": {"resourceSummary": {
        "allocatable": {"cpu": "30m", "pods": "110"}, "allocated": {"cpu": used, "pods": "0"}}}},
        subresource="status")


def prioritized(name: str, namespace: str, scheduler: str, cluster: str, priority: int, policy: str,
                placed: bool = False) -> dict[str, Any]:
    body = binding_doc(name, namespace=namespace, replicas=3, scheduler_name=scheduler,
                       clusters=[{"name": cluster, "replicas": 3}] if placed else (),
                       placement={"clusterAffinity": {"clusterNames": [cluster]}, "replicaScheduling": {
                           "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}})
    body["spec"]["replicaRequirements"] = {"resourceRequest": {"cpu": "10m"}}
    body["spec"]["schedulePriority"] = {"priority": priority, "preemptionPolicy": policy}
    return body


def _landed(body: dict[str, Any] | None) -> dict[str, Any] | None:
    """The binding, once its own body says Success (one read: a second one could be newer than the body)."""
    found = condition(body) if body is not None else None
    return body if found is not None and found["reason"] == "Success" else None


def reason(kube: KubeClient, name: str, namespace: str) -> str | None:
    found = condition(kube.get("ResourceBinding", name, namespace))
    return found["reason"] if found is not None else None


def test_preemption_evicts_with_one_fenced_patch(
    kube: KubeClient, objects: Objects, journal: Journal, scheduler_name: str, tmp_path: Path,
) -> None:
    namespace = unique("preempt")
    objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    member = member_of(objects, kube, used="30m")
    objects.create(prioritized("low", namespace, scheduler_name, member, 100, "Never", placed=True))
    config = e2e_config(tmp_path / "config.yaml", scheduler_name, featureGates=GATES)
    operator = start_operator(journal.plane, config)
    try:
        wait_until(lambda: reason(kube, "low", namespace) == "Success", 30, "the low-priority binding")
        objects.create(prioritized("high", namespace, scheduler_name, member, 1000, "PreemptLowerPriority"))
        wait_until(lambda: reason(kube, "high", namespace) == "Preempting", 30, "the preemptor to wait")
        low = kube.get("ResourceBinding", "low", namespace)
        assert low is not None and not low["spec"].get("clusters")
        (task,) = low["spec"]["gracefulEvictionTasks"]
        assert {k: task[k] for k in ("fromCluster", "reason", "producer", "purgeMode", "gracePeriodSeconds")} == {
            "fromCluster": member, "reason": "BindingPreempted", "producer": "Scheduler", "purgeMode": "Gracefully",
            "gracePeriodSeconds": 30}
        summary(kube, member, used="0m")  # the eviction took the workload off the member
        high = wait_until(lambda: _landed(kube.get("ResourceBinding", "high", namespace)), 30, "the preemptor to land")
    finally:
        assert operator.stop() == 0
    assert high["spec"]["clusters"] == [{"name": member, "replicas": 3}]
    evictions = [e for e in journal.operator_writes("/resourcebindings/low") if not e.subresource
                 and "gracefulEvictionTasks" in (e.body or {}).get("spec", {})]
    assert [e.code for e in evictions] == [200]
    fence(evictions[0].body, evictions[0])
