"""Fewer writes than Karmada: at most two per successful pass (spec + status), and our own writes do not
trigger another pass."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.fencing import fence
from testsupport.operator.harness import (
    DUPLICATED,
    apply,
    at_rest,
    binding_doc,
    binding_writes,
    cluster_doc,
    metric,
    rb_path,
    running_operator,
    scheduled,
    wait_until,
)


def test_divided_binding_gets_exactly_two_writes(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        attempts = metric(operator, "karmada_scheduler_schedule_attempts_total",
                          result="scheduled", schedule_type="ReconcileSchedule")
        updates = metric(operator, "karmada_scheduler_queue_incoming_bindings_total", event="BindingUpdate")
    writes = binding_writes(api, "web")
    assert [(w.method, w.path) for w in writes] == [
        ("PATCH", rb_path("web")),
        ("PATCH", rb_path("web", "default", "status")),
    ]
    assert attempts == 1
    assert updates == 0


def test_duplicated_binding_is_not_rescheduled_by_own_spec_write(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=2, placement=DUPLICATED))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert [w.path for w in writes] == [rb_path("web"), rb_path("web", "default", "status")]


def test_status_write_fenced_by_spec_write(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    with running_operator(api, config_file):
        body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
    spec_write, status_write = binding_writes(api, "web")
    assert spec_write.status == 200 and status_write.status == 200
    # the spec write answered with version N: the status write was sent with exactly N and produced the last one
    assert int(fence(status_write.body, status_write)) == int(body["metadata"]["resourceVersion"]) - 1
    assert status_write.body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"] == 2


def test_many_bindings_each_get_at_most_two_writes(api: DevCluster, config_file: Path) -> None:
    names = [f"app{i}" for i in range(8)]
    apply(api, cluster_doc("m1"), cluster_doc("m2"),
          *(binding_doc(n, replicas=i + 1, placement=DUPLICATED if i % 2 else None) for i, n in enumerate(names)))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: all(scheduled(api, n) for n in names), what="every binding to be scheduled")
        at_rest(api, operator)
    for name in names:
        assert len(binding_writes(api, name)) == 2, name


def test_every_request_names_instance_that_sent_it(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    with running_operator(api, config_file, identity="scheduler-7"):
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
    ours = [e for e in api.journal if e.user_agent.startswith("binding-scheduler")]
    assert ours and {e.user_agent for e in ours} == {"binding-scheduler (scheduler-7)"}
