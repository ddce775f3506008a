"""A pass whose spec write landed but whose status write did not leaves the binding so that a later pass writes
the condition (Karmada would only record the generation, and the Scheduled condition would be missing for
good)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.model import APPLIED_PLACEMENT_ANNOTATION, parse_binding
from testsupport.operator.harness import (
    apply,
    binding_doc,
    binding_writes,
    cluster_doc,
    condition,
    config_spec,
    get,
    metric,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)


def test_status_write_failing_twice_still_ends_scheduled(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=4))
    failing = api.faults.add(method="PATCH", path=r"/resourcebindings/web/status$", status=500, times=2)
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, "web"), timeout=30, what="the Scheduled condition")
        errors = metric(operator, "binding_scheduler_writes_total", kind="status", result="error")
    assert failing.hits == 2
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}]
    scheduled_condition = condition(body)
    assert scheduled_condition is not None
    assert (scheduled_condition["status"], scheduled_condition["reason"]) == ("True", "Success")
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]
    writes = [(w.path.endswith("/status"), w.status) for w in binding_writes(api, "web")]
    assert writes == [(False, 200), (True, 500), (True, 500), (True, 200)]  # the spec is written once
    assert errors == 2


def test_unobserved_generation_without_condition_is_decided(
    api: DevCluster, config_file: Path
) -> None:
    """The state a lost status write leaves: spec.clusters and the applied placement match, no condition."""
    doc = binding_doc("web", replicas=2, clusters=[{"name": "m1", "replicas": 2}])
    placement = parse_binding(doc).placement
    assert placement is not None
    doc["metadata"]["annotations"] = {
        APPLIED_PLACEMENT_ANNOTATION: json.dumps(placement.to_dict(), separators=(",", ":"))
    }
    apply(api, cluster_doc("m1"), doc)
    with running_operator(api, config_file):
        body = wait_until(lambda: scheduled(api, "web"), what="the Scheduled condition")
    assert [(w.path.endswith("/status"), w.status) for w in binding_writes(api, "web")] == [(True, 200)]
    assert (condition(body) or {}).get("reason") == "Success"
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]


def test_lost_spec_write_answer_still_ends_scheduled(
    api: DevCluster, config_file: Path
) -> None:
    """The PATCH lands but the connection is cut before its answer: the status write that follows (from the
    old version) gets 409, and a later pass must still write the condition."""
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=4))
    lost = api.faults.add(method="PATCH", path=r"/resourcebindings/web$", lose_answer=True, times=1)
    with running_operator(api, config_file):
        body = wait_until(lambda: success(api, "web"), timeout=30, what="the Success condition")
    assert lost.hits == 1
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}]
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]
    writes = [(w.path.endswith("/status"), w.status) for w in binding_writes(api, "web")]
    assert writes[0] == (False, 0)  # applied, answer lost
    assert writes[-1] == (True, 200)


def success(api: DevCluster, name: str) -> dict[str, Any] | None:
    body = scheduled(api, name)
    found = condition(body) if body is not None else None
    return body if found is not None and found["reason"] == "Success" else None


def test_deciding_again_for_lost_condition_never_moves_binding(api: DevCluster, config_file: Path) -> None:
    """Its spec was written (annotation and clusters) but no condition, and one of its clusters is no longer
    selected by its affinity: Karmada would leave it; so do we, recording only the generation."""
    placement = {"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
                 "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}
    stale = binding_doc("web", replicas=4, placement=placement)
    stale["metadata"]["annotations"] = {APPLIED_PLACEMENT_ANNOTATION: json.dumps(placement, separators=(",", ":"))}
    stale["spec"]["clusters"] = [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}]
    apply(api, cluster_doc("m1", labels={"env": "prod"}), cluster_doc("m2", labels={"env": "staging"}), stale)
    with running_operator(api, config_file):
        wait_until(lambda: (get(api, "resourcebindings", "web", "default") or {}).get("status", {}).get(
            "schedulerObservedGeneration") == 1, what="the generation to be recorded")
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}]
    assert "conditions" not in body["status"]
    assert [w.path.endswith("/status") for w in binding_writes(api, "web")] == [True]


def test_lost_condition_of_pruned_components_is_written(
    api: DevCluster, tmp_path: Path,
) -> None:
    """Found by Karmada's own e2e suite (schedule_multi_template_test.go) on a real Karmada v1.18.2: its binding
    CRD has no `spec.clusters[].components` (#7837), so the API server prunes what we write there; when the
    status write after the spec write then meets a 409 (Karmada's binding controller writes the status at
    once), the pass that recovers the condition must not take the pruned results for another decision."""
    placement = {"clusterAffinity": {"clusterNames": ["m1", "m2"]},
                 "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
                 "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}]}
    doc = binding_doc("job", replicas=0, placement=placement, clusters=[{"name": "m1"}])
    doc["spec"].pop("replicas")
    doc["spec"]["components"] = [{"name": "leader", "replicas": 1}, {"name": "worker", "replicas": 2}]
    doc["metadata"]["annotations"] = {APPLIED_PLACEMENT_ANNOTATION: json.dumps(placement, separators=(",", ":"))}
    apply(api, cluster_doc("m1"), cluster_doc("m2"), doc)
    config = write_config(tmp_path / "config.yaml", config_spec(featureGates={"MultiplePodTemplatesScheduling": True}))
    with running_operator(api, config):
        body = wait_until(lambda: success(api, "job"), timeout=30, what="the Success condition")
    assert [c["name"] for c in body["spec"]["clusters"]] == ["m1"]
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]


def test_next_leader_writes_condition_of_cut_pass(
    api: DevCluster, tmp_path: Path
) -> None:
    """Across a stop: the old leader's spec write lands, the drain deadline cuts its status write, and the binding
    still carries the `Scheduled=False` of its previous generation. That condition is stale, not the outcome of the
    landed decision: the next leader decides again and writes `Success`, without writing the spec a second time."""
    doc = binding_doc("web", replicas=4)
    doc["status"] = {"schedulerObservedGeneration": 1, "conditions": [
        {"type": "Scheduled", "status": "False", "reason": "NoClusterFit", "message": "0/0 clusters are available",
         "lastTransitionTime": "2026-12-01T00:00:00Z"}]}
    apply(api, cluster_doc("m1"), cluster_doc("m2"), doc)
    config = write_config(tmp_path / "config.yaml", config_spec(shutdown={"drainTimeout": "200ms"}))
    held = api.faults.add(method="PATCH", path=r"/resourcebindings/web/status$", hang=True)
    with running_operator(api, config, identity="old"):
        wait_until(lambda: held.hits >= 1, what="the old leader's status write to be held")
    held.remove()
    cut = get(api, "resourcebindings", "web", "default")
    assert cut is not None and cut["metadata"]["generation"] == 2
    assert (condition(cut) or {}).get("status") == "False"

    with running_operator(api, config, identity="new"):
        body = wait_until(lambda: success(api, "web"), timeout=30, what="the Success condition")
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}]
    assert body["status"]["schedulerObservedGeneration"] == 2
    spec_writes = [w for w in binding_writes(api, "web") if not w.path.endswith("/status")]
    assert len(spec_writes) == 1
