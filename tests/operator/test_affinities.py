"""The ClusterAffinities path (Karmada's pkg/scheduler/scheduler.go: scheduleResourceBindingWithClusterAffinities):
ordered fallback, the term name in the status write, resume from the observed term, and an explicit reschedule
restarting at term 0."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    at_rest,
    binding_doc,
    binding_writes,
    cluster_doc,
    cluster_path,
    events,
    get,
    patch,
    rb_path,
    running_operator,
    scheduled,
    wait_until,
)

PLACEMENT = {
    "clusterAffinities": [
        {"affinityName": "primary", "clusterNames": ["m1"]},
        {"affinityName": "backup", "clusterNames": ["m2"]},
    ],
    "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
}
TAINT = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]


def body_of(api: DevCluster) -> dict[str, object]:
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None
    return body


def test_second_term_used_when_first_fails(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1", taints=TAINT), cluster_doc("m2"), binding_doc("web", replicas=2, placement=PLACEMENT))
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
    spec_write, status_write = binding_writes(api, "web")
    assert spec_write.body["spec"] == {"clusters": [{"name": "m2", "replicas": 2}]}
    assert status_write.body["status"]["schedulerObservingAffinityName"] == "backup"
    assert status_write.body["status"]["conditions"][0]["reason"] == "Success"
    assert body["status"]["schedulerObservingAffinityName"] == "backup"
    warnings = [e for e in events(api, name="web") if e["type"] == "Warning"]
    assert [e["involvedObject"]["kind"] for e in warnings] == ["ResourceBinding", "Deployment"]
    assert warnings[0]["reason"] == "ScheduleBindingFailed"
    assert warnings[0]["message"].startswith(
        "failed to schedule ResourceBinding(default/web) with clusterAffiliates index(0): "
    )
    assert "taint" in warnings[0]["message"]


def test_first_term_fits_and_name_is_written(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=2, placement=PLACEMENT))
    with running_operator(api, config_file):
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
    spec_write, status_write = binding_writes(api, "web")
    assert spec_write.body["spec"] == {"clusters": [{"name": "m1", "replicas": 2}]}
    assert status_write.body["status"]["schedulerObservingAffinityName"] == "primary"


def test_later_pass_resumes_from_observed_term(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1", taints=TAINT), cluster_doc("m2"), binding_doc("web", replicas=2, placement=PLACEMENT))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        patch(api, cluster_path("m1"), {"spec": {"taints": None}})
        at_rest(api, operator)
        patch(api, rb_path("web"), {"spec": {"replicas": 4}})
        wait_until(lambda: len(binding_writes(api, "web")) >= 4, what="the scale pass")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert len(writes) == 4
    assert writes[2].body["spec"] == {"clusters": [{"name": "m2", "replicas": 4}]}
    assert "schedulerObservingAffinityName" not in writes[3].body["status"]
    assert body_of(api)["status"]["schedulerObservingAffinityName"] == "backup"  # type: ignore[index]


def test_explicit_reschedule_restarts_at_first_term(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1", taints=TAINT), cluster_doc("m2"), binding_doc("web", replicas=2, placement=PLACEMENT))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        patch(api, cluster_path("m1"), {"spec": {"taints": None}})
        at_rest(api, operator)  # the operator has seen m1 untainted (observing "backup", the change requeues nothing)
        patch(api, rb_path("web"), {"spec": {"rescheduleTriggeredAt": "2999-01-01T00:00:00Z"}})
        wait_until(lambda: len(binding_writes(api, "web")) >= 4, what="the rescheduling pass")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert len(writes) == 4
    assert writes[2].body["spec"] == {"clusters": [{"name": "m1", "replicas": 2}]}
    assert writes[3].body["status"]["schedulerObservingAffinityName"] == "primary"
    assert body_of(api)["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]  # type: ignore[index]


def test_all_terms_failing_keep_observed_name(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1", taints=TAINT), cluster_doc("m2", taints=TAINT),
          binding_doc("web", replicas=2, placement=PLACEMENT, clusters=[{"name": "m3", "replicas": 2}]))
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, "web"), what="web to get a condition")
        at_rest(api, operator)
    spec_write, status_write = binding_writes(api, "web")
    assert spec_write.body["spec"] == {"clusters": None}
    condition = status_write.body["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("False", "NoClusterFit")
    assert "schedulerObservingAffinityName" not in status_write.body["status"]
    assert "clusters" not in body["spec"]
    warnings = [e["message"] for e in events(api, name="web") if e["involvedObject"]["kind"] == "ResourceBinding"]
    assert [m.split(":")[0] for m in warnings[:2]] == [
        "failed to schedule ResourceBinding(default/web) with clusterAffiliates index(0)",
        "failed to schedule ResourceBinding(default/web) with clusterAffiliates index(1)",
    ]
    assert warnings[2] == condition["message"]
