"""Binding priority preemption through the whole operator on devcluster (gates PriorityBasedScheduling and
PriorityBasedPreemptiveScheduling; the flow of Karmada's open PR #7832 e2e test
test/e2e/suites/base/binding_preemption_test.go, ported): a high-priority binding that fits nowhere evicts a
lower-priority one, waits Preempting, and is scheduled once the capacity shows free; nothing happens without
the gates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from binding_scheduler.devcluster import DevCluster
from testsupport.builders import AGGREGATED, binding, cluster, names, placement
from testsupport.operator.harness import (
    apply,
    at_rest,
    cluster_path,
    condition,
    config_spec,
    events,
    get,
    patch,
    running_operator,
    wait_until,
    write_config,
)

GATES = {"PriorityBasedScheduling": True, "PriorityBasedPreemptiveScheduling": True}


def prioritized(name: str, priority: int, policy: str, clusters: dict[str, int] | None = None) -> dict[str, Any]:
    body = binding(name, replicas=3, requests={"cpu": "10m"}, clusters=clusters, uid=f"uid-{name}",
                   placement=placement(affinity=names("m1"), scheduling=AGGREGATED))
    body["apiVersion"] = "work.karmada.io/v1alpha2"
    body["metadata"].pop("resourceVersion", None)
    body["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": name}
    body["spec"]["schedulePriority"] = {"priority": priority, "preemptionPolicy": policy}
    return body


def full_m1() -> dict[str, Any]:
    """One cluster whose 30m of CPU the low-priority binding (3 x 10m) takes, as its summary reports."""
    return cluster("m1", allocatable={"cpu": "30m", "pods": "110"}, allocated={"cpu": "30m", "pods": "3"})


def reason(api: DevCluster, name: str) -> str | None:
    body = get(api, "resourcebindings", name, "default")
    found = condition(body) if body is not None else None
    return found["reason"] if found is not None else None


def test_high_priority_preempts_low_and_lands(
    api: DevCluster, tmp_path: Path,
) -> None:
    apply(api, full_m1(), prioritized("low", 100, "Never", {"m1": 3}))
    config = write_config(tmp_path / "config.yaml", config_spec(featureGates=GATES))
    with running_operator(api, config) as operator:
        wait_until(lambda: reason(api, "low") == "Success", what="the low-priority binding to be scheduled")
        apply(api, prioritized("high", 1000, "PreemptLowerPriority"))
        wait_until(lambda: reason(api, "high") == "Preempting", what="the preemptor to wait, preempting")
        low = get(api, "resourcebindings", "low", "default")
        assert low is not None
        assert [(t["fromCluster"], t["reason"], t["producer"]) for t in low["spec"]["gracefulEvictionTasks"]] == [
            ("m1", "BindingPreempted", "Scheduler")]
        assert not low["spec"].get("clusters")
        # Events are posted beside the passes: they may land after the condition.
        wait_until(lambda: [e["reason"] for e in events(api, name="low") if e["reason"] == "Preempted"]
                   == ["Preempted"], what="the victim's Preempted event")
        wait_until(lambda: [e["reason"] for e in events(api, name="high") if e["reason"] == "PreemptionInitiated"]
                   == ["PreemptionInitiated"], what="the preemptor's PreemptionInitiated event")

        # Karmada's graceful-eviction controller takes the workload off m1; its summary shows the CPU free.
        patch(api, cluster_path("m1") + "/status", {"status": {"resourceSummary": {
            "allocatable": {"cpu": "30m", "pods": "110"}, "allocated": {"cpu": "0m", "pods": "0"}}}})
        # No unschedulable flush for 5 minutes: the summary's change wakes the preemptor.
        wait_until(lambda: reason(api, "high") == "Success", 30, "the preemptor to be scheduled")
        at_rest(api, operator)
    high = get(api, "resourcebindings", "high", "default")
    assert high is not None and high["spec"]["clusters"] == [{"name": "m1", "replicas": 3}]
    assert reason(api, "low") != "Success"  # the claim kept it from taking the freed capacity back


def test_without_preemption_gates_nothing_is_preempted(api: DevCluster, tmp_path: Path) -> None:
    apply(api, full_m1(), prioritized("low", 100, "Never", {"m1": 3}))
    config = write_config(tmp_path / "config.yaml", config_spec(featureGates={"PriorityBasedScheduling": True}))
    with running_operator(api, config) as operator:
        wait_until(lambda: reason(api, "low") == "Success", what="the low-priority binding to be scheduled")
        apply(api, prioritized("high", 1000, "PreemptLowerPriority"))
        wait_until(lambda: reason(api, "high") == "Unschedulable", what="the high-priority binding to be refused")
        at_rest(api, operator)
    low = get(api, "resourcebindings", "low", "default")
    assert low is not None and low["spec"]["clusters"] == [{"name": "m1", "replicas": 3}]
    assert not low["spec"].get("gracefulEvictionTasks")
    assert not [e for e in events(api) if e["reason"] in ("Preempted", "PreemptionInitiated")]


def test_preemptors_behind_claim_run_when_it_lands_not_at_flush(
    api: DevCluster, tmp_path: Path,
) -> None:
    """Three equal-priority preemptors at once: one claims m1 and evicts the victim; the other two find its claim
    and hold none themselves. Once the first lands on the freed capacity, what is left takes them both: they must
    not wait for the unschedulable flush (5 minutes)."""
    apply(api, full_m1(), prioritized("low", 100, "Never", {"m1": 3}))
    config = write_config(tmp_path / "config.yaml", config_spec(featureGates=GATES))
    with running_operator(api, config):
        wait_until(lambda: reason(api, "low") == "Success", what="the low-priority binding to be scheduled")
        preemptors = ("high-a", "high-b", "high-c")
        for name in preemptors:
            body = prioritized(name, 1000, "PreemptLowerPriority")
            body["spec"]["replicas"] = 1
            apply(api, body)
        wait_until(lambda: get(api, "resourcebindings", "low", "default")["spec"].get("gracefulEvictionTasks"),
                   what="the victim's eviction")
        wait_until(lambda: sorted(str(reason(api, name)) for name in preemptors) == [
            "Preempting", "Unschedulable", "Unschedulable"], what="one preemptor to claim m1, two to find its claim")
        patch(api, cluster_path("m1") + "/status", {"status": {"resourceSummary": {
            "allocatable": {"cpu": "30m", "pods": "110"}, "allocated": {"cpu": "0m", "pods": "0"}}}})
        wait_until(lambda: all(reason(api, name) == "Success" for name in preemptors), 30,
                   "every preemptor to be scheduled")
