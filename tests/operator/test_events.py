"""Events (Karmada's pkg/scheduler/scheduler.go: recordScheduleResultEventForResourceBinding): the same event on the
binding and on its resource template, with Karmada's messages."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    at_rest,
    binding_doc,
    cluster_doc,
    crb_doc,
    crb_scheduled,
    events,
    running_operator,
    scheduled,
    wait_until,
)

SUCCESS = "Binding has been scheduled successfully."


def summary(items: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [
        (e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["reason"], e["message"])  # type: ignore[index]
        for e in items
    ]


def test_success_is_recorded_on_binding_and_template_with_result(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        wait_until(lambda: len(events(api, name="web")) >= 2, what="the events")
        at_rest(api, operator)
    recorded = events(api, name="web")
    message = f"{SUCCESS} Result: {{m1:2, m2:1}}"
    assert summary(recorded) == [
        ("ResourceBinding", "web", "Normal", "ScheduleBindingSucceed", message),
        ("Deployment", "web", "Normal", "ScheduleBindingSucceed", message),
    ]
    assert recorded[1]["involvedObject"] == {
        "apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web", "uid": "uid-web",
    }
    assert {e["source"]["component"] for e in recorded} == {"default-scheduler"}


def test_cluster_resource_binding_success_message_has_no_colon(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), crb_doc("role"))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: crb_scheduled(api, "role"), what="the CRB to be scheduled")
        wait_until(lambda: len(events(api, name="role")) >= 2, what="the events")
        at_rest(api, operator)
    message = f"{SUCCESS} Result {{m1:0, m2:0}}"
    assert summary(events(api, name="role")) == [
        ("ClusterResourceBinding", "role", "Normal", "ScheduleBindingSucceed", message),
        ("ClusterRole", "role", "Normal", "ScheduleBindingSucceed", message),
    ]


def test_failure_is_recorded_as_warning_with_condition_message(api: DevCluster, config_file: Path) -> None:
    placement = {"clusterAffinity": {"clusterNames": ["nowhere"]},
                 "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1, placement=placement))
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, "web"), what="web to get its condition")
        wait_until(lambda: len(events(api, name="web")) >= 2, what="the events")
        at_rest(api, operator)
    condition = body["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("False", "NoClusterFit")
    assert summary(events(api, name="web")) == [
        ("ResourceBinding", "web", "Warning", "ScheduleBindingFailed", condition["message"]),
        ("Deployment", "web", "Warning", "ScheduleBindingFailed", condition["message"]),
    ]
