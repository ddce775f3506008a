"""Which binding changes lead to a pass (Karmada's pkg/scheduler/event_handler.go: onResourceBindingUpdate,
schedulerNameFilter): generation changes only, our scheduler only."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    at_rest,
    binding_doc,
    binding_writes,
    cluster_doc,
    get,
    patch,
    rb_path,
    running_operator,
    scheduled,
    wait_until,
)


def clusters_of(api: DevCluster, name: str) -> list[dict[str, object]] | None:
    body = get(api, "resourcebindings", name, "default")
    return None if body is None else body["spec"].get("clusters")


def test_scaling_up_reschedules_with_scale_write(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=2))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        patch(api, rb_path("web"), {"spec": {"replicas": 6}})
        wait_until(lambda: clusters_of(api, "web") == [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}],
                   what="the scale-up")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert len(writes) == 4
    assert writes[2].body["spec"] == {"clusters": [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}]}
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]


def test_scaling_down_reschedules(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=6))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        patch(api, rb_path("web"), {"spec": {"replicas": 1}})
        wait_until(lambda: sum(int(c.get("replicas", 0)) for c in clusters_of(api, "web") or []) == 1,  # type: ignore[call-overload]
                   what="the scale-down")
        at_rest(api, operator)
    assert len(clusters_of(api, "web") or []) == 1
    assert len(binding_writes(api, "web")) == 4


def test_status_only_change_of_binding_starts_no_pass(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        patch(api, rb_path("web", subresource="status"), {"status": {"aggregatedStatus": [{"clusterName": "m1"}]}})
        patch(api, rb_path("web"), {"metadata": {"labels": {"extra": "yes"}}})
        at_rest(api, operator)
    assert len(binding_writes(api, "web")) == 2


def test_explicit_reschedule_reschedules_divided(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3))
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        last = body["status"]["lastScheduledTime"]
        patch(api, rb_path("web"), {"spec": {"rescheduleTriggeredAt": "2999-01-01T00:00:00Z"}})
        wait_until(lambda: len(binding_writes(api, "web")) >= 3, what="the reschedule")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    # the same result: the spec write is skipped (no empty diff), the status write records the new time
    assert [w.path for w in writes[2:]] == [rb_path("web", subresource="status")]
    assert writes[2].body["status"]["lastScheduledTime"] >= last
    final = get(api, "resourcebindings", "web", "default")
    assert final is not None and final["status"]["schedulerObservedGeneration"] == final["metadata"]["generation"]


def test_old_explicit_reschedule_does_nothing(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        patch(api, rb_path("web"), {"spec": {"rescheduleTriggeredAt": "2000-01-01T00:00:00Z"}})
        wait_until(lambda: len(binding_writes(api, "web")) >= 3, what="the observed generation")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert len(writes) == 3
    assert writes[2].body["status"] == {"schedulerObservedGeneration": 3}


def test_binding_of_another_scheduler_is_never_written(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("other", scheduler_name="karmada-scheduler-2"),
          binding_doc("mine", replicas=1))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "mine"), what="our binding to be scheduled")
        patch(api, rb_path("other"), {"spec": {"replicas": 5}})
        at_rest(api, operator)
    assert binding_writes(api, "other") == []
    assert get(api, "resourcebindings", "other", "default")["spec"].get("clusters") is None  # type: ignore[index]


def test_binding_without_policy_label_is_never_written(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("orphan", labels={}), binding_doc("mine", replicas=1))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "mine"), what="our binding to be scheduled")
        at_rest(api, operator)
    assert binding_writes(api, "orphan") == []


def test_unsuspending_binding_schedules_it(api: DevCluster, config_file: Path) -> None:
    doc = binding_doc("web", replicas=1)
    doc["spec"]["suspension"] = {"scheduling": True}
    apply(api, cluster_doc("m1"), doc)
    with running_operator(api, config_file) as operator:
        at_rest(api, operator)
        assert binding_writes(api, "web") == []
        patch(api, rb_path("web"), {"spec": {"suspension": {"scheduling": False}}})
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled once unsuspended")
    assert clusters_of(api, "web") == [{"name": "m1", "replicas": 1}]
