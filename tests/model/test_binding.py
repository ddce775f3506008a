"""ResourceBinding / ClusterResourceBinding parsing (Karmada's pkg/apis/work/v1alpha2/binding_types.go:
ResourceBinding): fields, derived facts and exact errors."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from binding_scheduler.model import (
    DEFAULT_SCHEDULER_NAME,
    PreemptionPolicy,
    ReplicaSchedulingType,
    Scope,
    TargetCluster,
    TargetComponent,
    ValidationError,
    parse_binding,
)
from testsupport.builders import DUPLICATED, binding, make_binding, placement


def error_of(data: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        parse_binding(data)
    return str(caught.value)


# --- identity and scope ---------------------------------------------------------------------------------


def test_rb_is_keyed_namespace_slash_name() -> None:
    rb = make_binding("web", namespace="shop")
    assert (rb.scope, rb.namespace, rb.name, rb.key) == (Scope.NAMESPACED, "shop", "web", "shop/web")


def test_cluster_resource_binding_is_keyed_by_name_alone() -> None:
    crb = make_binding("web", cluster_scoped=True)
    assert (crb.scope, crb.namespace, crb.key) == (Scope.CLUSTER, "", "web")


def test_metadata_is_read() -> None:
    rb = make_binding("web", generation=4, uid="u-9")
    assert (rb.generation, rb.uid, rb.resource_version) == (4, "u-9", "7")


def test_resource_reference_is_read() -> None:
    rb = make_binding("web", resource=("apps/v1", "StatefulSet"))
    assert (rb.resource.api_version, rb.resource.kind, rb.resource.name) == ("apps/v1", "StatefulSet", "web")
    assert rb.resource.namespace == "default"


def test_empty_scheduler_name_means_default_scheduler() -> None:
    assert make_binding().scheduler_name == DEFAULT_SCHEDULER_NAME == "default-scheduler"


def test_scheduler_name_is_kept() -> None:
    data = binding()
    data["spec"]["schedulerName"] = "other"
    assert parse_binding(data).scheduler_name == "other"


# --- IsWorkload and ReplicaSchedulingType ----------------------------------------------------------------


def test_replicas_make_workload() -> None:
    assert make_binding(replicas=1).is_workload


def test_replica_requirements_alone_make_workload() -> None:
    assert make_binding(replicas=0, requests={"cpu": "1"}).is_workload


def test_one_component_makes_workload() -> None:
    data = binding()
    data["spec"]["components"] = [{"name": "a", "replicas": 0}]
    assert parse_binding(data).is_workload


def test_bare_binding_is_not_workload() -> None:
    assert not make_binding(replicas=0).is_workload


def test_no_replica_scheduling_means_duplicated() -> None:
    assert make_binding(placement=placement()).scheduling_type is ReplicaSchedulingType.DUPLICATED


def test_no_placement_means_duplicated() -> None:
    assert make_binding().scheduling_type is ReplicaSchedulingType.DUPLICATED


def test_explicit_replica_scheduling_type_is_used() -> None:
    rb = make_binding(placement=placement(scheduling={"replicaSchedulingType": "Divided"}))
    assert rb.scheduling_type is ReplicaSchedulingType.DIVIDED


# --- previous result, evictions, suspension, priority, groups --------------------------------------------


def test_spec_clusters_is_previous_result_in_order() -> None:
    rb = make_binding(clusters={"m2": 1, "m1": 0})
    assert rb.clusters == (TargetCluster("m2", 1), TargetCluster("m1", 0))
    assert rb.target_names == frozenset({"m1", "m2"})


def test_target_cluster_omits_zero_replicas_on_wire() -> None:
    assert TargetCluster("m1").to_dict() == {"name": "m1"}
    assert TargetCluster("m1", 2).to_dict() == {"name": "m1", "replicas": 2}


def test_only_from_cluster_of_eviction_tasks_is_kept() -> None:
    assert make_binding(evicting=["m1", "m3"]).eviction_clusters == frozenset({"m1", "m3"})


def test_suspended_scheduling_is_read() -> None:
    data = binding()
    data["spec"]["suspension"] = {"scheduling": True, "dispatching": False}
    assert parse_binding(data).suspend_scheduling


def test_schedule_priority_defaults_to_zero_and_may_be_negative() -> None:
    assert make_binding().schedule_priority == 0
    data = binding()
    data["spec"]["schedulePriority"] = {"priority": -5}
    assert parse_binding(data).schedule_priority == -5


def with_schedule_priority(**fields: Any) -> dict[str, Any]:
    data = binding()
    data["spec"]["schedulePriority"] = dict(fields)
    return data


@pytest.mark.parametrize(("fields", "policy"), [
    ({}, PreemptionPolicy.NEVER),
    ({"priority": 1000}, PreemptionPolicy.NEVER),
    ({"priority": 1000, "preemptionPolicy": ""}, PreemptionPolicy.NEVER),
    ({"priority": 1000, "preemptionPolicy": "Never"}, PreemptionPolicy.NEVER),
    ({"priority": 1000, "preemptionPolicy": "PreemptLowerPriority"}, PreemptionPolicy.PREEMPT_LOWER_PRIORITY),
], ids=["no-priority", "priority-only", "empty", "never", "preempt-lower-priority"])
def test_preemption_policy_is_read_and_absent_means_never(fields: dict[str, Any], policy: PreemptionPolicy) -> None:
    assert parse_binding(with_schedule_priority(**fields)).preemption_policy is policy
    assert make_binding().preemption_policy is PreemptionPolicy.NEVER


def test_unknown_preemption_policy_refused() -> None:
    message = error_of(with_schedule_priority(priority=5, preemptionPolicy="PreemptAlways"))
    assert message == ("spec.schedulePriority.preemptionPolicy: 'PreemptAlways' is not one of PreemptLowerPriority, "
                       "Never")


def test_non_string_preemption_policy_refused() -> None:
    message = error_of(with_schedule_priority(preemptionPolicy=True))
    assert message.startswith("spec.schedulePriority.preemptionPolicy: ")


def test_workload_affinity_groups_are_read() -> None:
    data = binding()
    data["spec"]["workloadAffinityGroups"] = {"affinityGroup": "a", "antiAffinityGroup": "b"}
    rb = parse_binding(data)
    assert (rb.affinity_group, rb.anti_affinity_group) == ("a", "b")


def test_integral_float_is_integer() -> None:
    assert make_binding(replicas=3.0).replicas == 3  # type: ignore[arg-type]


# --- status ------------------------------------------------------------------------------------------------


def test_status_scheduler_reads_is_parsed() -> None:
    data = binding(observed_affinity="a1", last_scheduled="2024-05-01T10:00:00Z")
    data["status"]["schedulerObservedGeneration"] = 3
    data["status"]["conditions"] = [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "m",
         "lastTransitionTime": "2024-05-01T10:00:00Z"},
    ]
    status = parse_binding(data).status
    assert status.scheduler_observing_affinity_name == "a1"
    assert status.scheduler_observed_generation == 3
    assert status.last_scheduled_time == datetime(2024, 5, 1, 10, tzinfo=UTC)
    scheduled = status.condition("Scheduled")
    assert scheduled is not None and (scheduled.status, scheduled.reason) == ("True", "Success")
    assert status.condition("FullyApplied") is None


# --- explicit reschedule (Karmada's pkg/util/binding.go: RescheduleRequired) -----------------------------


def test_reschedule_pending_if_after_last_schedule() -> None:
    rb = make_binding(reschedule_at="2024-05-01T10:00:01Z", last_scheduled="2024-05-01T10:00:00Z")
    assert rb.reschedule_pending


def test_reschedule_at_same_instant_is_not_pending() -> None:
    rb = make_binding(reschedule_at="2024-05-01T10:00:00Z", last_scheduled="2024-05-01T10:00:00Z")
    assert not rb.reschedule_pending


def test_reschedule_without_last_scheduled_time_is_not_pending() -> None:
    assert not make_binding(reschedule_at="2024-05-01T10:00:00Z").reschedule_pending


def test_time_zones_are_compared_as_instants() -> None:
    rb = make_binding(reschedule_at="2024-05-01T12:00:01+02:00", last_scheduled="2024-05-01T10:00:00Z")
    assert rb.reschedule_pending


# --- validation errors name the field and the value ------------------------------------------------------


def test_kind_must_be_binding_kind() -> None:
    data = binding()
    data["kind"] = "Deployment"
    assert error_of(data) == "kind: 'Deployment' is not one of ResourceBinding, ClusterResourceBinding"


def test_resource_binding_needs_namespace() -> None:
    data = binding()
    del data["metadata"]["namespace"]
    assert error_of(data) == "metadata.namespace: is required for a ResourceBinding"


def test_cluster_resource_binding_has_no_namespace() -> None:
    data = binding(cluster_scoped=True)
    data["metadata"]["namespace"] = "x"
    assert error_of(data) == "metadata.namespace: must be empty for a ClusterResourceBinding, got 'x'"


def test_spec_is_required() -> None:
    data = binding()
    del data["spec"]
    assert error_of(data) == "spec: is required"


def test_resource_name_is_required() -> None:
    data = binding()
    del data["spec"]["resource"]["name"]
    assert error_of(data) == "spec.resource.name: is required"


def test_replicas_must_not_be_negative() -> None:
    assert error_of(binding(replicas=-1)) == "spec.replicas: -1 is less than 0"


def test_replicas_must_fit_int32() -> None:
    assert error_of(binding(replicas=2**31)) == "spec.replicas: 2147483648 is greater than 2147483647"


def test_replicas_must_be_integer() -> None:
    assert error_of(binding(replicas="3")) == "spec.replicas: expected an integer, got '3'"  # type: ignore[arg-type]
    assert error_of(binding(replicas=True)) == "spec.replicas: expected an integer, got true"  # type: ignore[arg-type]
    assert error_of(binding(replicas=1.5)) == "spec.replicas: expected an integer, got 1.5"  # type: ignore[arg-type]


def test_previous_result_needs_names() -> None:
    data = binding()
    data["spec"]["clusters"] = [{"name": "m1"}, {"replicas": 1}]
    assert error_of(data) == "spec.clusters[1].name: is required"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "m1", "replicas": True}, "spec.clusters[1].replicas: expected an integer, got true"),
        ({"name": "m1", "replicas": -1}, "spec.clusters[1].replicas: -1 is less than 0"),
        ({"name": "m1", "replicas": 2**31}, "spec.clusters[1].replicas: 2147483648 is greater than 2147483647"),
        ({"name": "", "replicas": 1}, "spec.clusters[1].name: is required"),
        ({"name": 7}, "spec.clusters[1].name: expected a string, got 7"),
        ("m1", "spec.clusters[1]: expected an object, got 'm1'"),
    ],
)
def test_previous_result_entry_is_checked_field_by_field(entry: object, message: str) -> None:
    data = binding()
    data["spec"]["clusters"] = [{"name": "m0", "replicas": 1}, entry]
    assert error_of(data) == message


def test_previous_entries_parse_components() -> None:
    data = binding()
    data["spec"]["clusters"] = [{"name": "m1"}, {"name": "m2", "replicas": 2.0}, {"name": "m3", "replicas": None},
                                {"name": "m4", "replicas": 3, "components": [{"name": "web", "replicas": 3}]}]
    assert parse_binding(data).clusters == (
        TargetCluster("m1", 0), TargetCluster("m2", 2), TargetCluster("m3", 0),
        TargetCluster("m4", 3, (TargetComponent("web", 3),)),
    )


def test_eviction_task_needs_from_cluster() -> None:
    data = binding()
    data["spec"]["gracefulEvictionTasks"] = [{"reason": "x"}]
    assert error_of(data) == "spec.gracefulEvictionTasks[0].fromCluster: is required"


def test_suspension_scheduling_must_be_boolean() -> None:
    data = binding()
    data["spec"]["suspension"] = {"scheduling": "yes"}
    assert error_of(data) == "spec.suspension.scheduling: expected true or false, got 'yes'"


def test_workload_affinity_groups_must_be_object() -> None:
    data = binding()
    data["spec"]["workloadAffinityGroups"] = "app=shop"
    assert error_of(data) == "spec.workloadAffinityGroups: expected an object, got 'app=shop'"


@pytest.mark.parametrize("field", ["affinityGroup", "antiAffinityGroup"])
def test_workload_affinity_group_must_be_string(field: str) -> None:
    data = binding()
    data["spec"]["workloadAffinityGroups"] = {field: 3}
    assert error_of(data) == f"spec.workloadAffinityGroups.{field}: expected a string, got 3"


def test_times_need_time_zone() -> None:
    assert error_of(binding(reschedule_at="2024-05-01T10:00:00")) == (
        "spec.rescheduleTriggeredAt: '2024-05-01T10:00:00' has no time zone"
    )


def test_times_must_be_rfc3339() -> None:
    assert error_of(binding(last_scheduled="yesterday")) == (
        "status.lastScheduledTime: 'yesterday' is not an RFC 3339 time"
    )


def test_label_values_must_be_strings() -> None:
    data = binding()
    data["metadata"]["labels"] = {"team": 7}
    assert error_of(data) == "metadata.labels.team: expected a string, got 7"


def test_label_keys_must_be_strings() -> None:
    data = binding()
    data["metadata"]["labels"] = {1: "a"}
    assert error_of(data) == "metadata.labels: expected string keys, got 1"


def test_huge_integer_is_reported_without_printing_it() -> None:
    assert error_of(binding(replicas=10**5000)) == "spec.replicas: an integer out of range is greater than 2147483647"


def test_placement_must_be_object() -> None:
    data = binding()
    data["spec"]["placement"] = ["x"]
    assert error_of(data) == "spec.placement: expected an object, got list"


def test_root_must_be_object() -> None:
    assert error_of("rb") == "<root>: expected an object, got 'rb'"


def test_duplicated_keeps_no_preference() -> None:
    rb = make_binding(placement=placement(scheduling=DUPLICATED))
    assert rb.placement is not None and rb.placement.replica_scheduling is not None
    assert rb.placement.replica_scheduling.division_preference is None
