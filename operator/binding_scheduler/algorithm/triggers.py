"""Does a binding need scheduling, and of which kind (Karmada's `pkg/scheduler/scheduler.go: doScheduleBinding`
and `pkg/scheduler/helper.go: placementChanged`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum

from ..model import Binding, Cluster, Placement, ReplicaSchedulingType, ValidationError
from ..model.conditions import SCHEDULED
from ..model.fields import Fields
from ..model.placement import parse_placement


class ScheduleType(StrEnum):
    RECONCILE = "ReconcileSchedule"
    SCALE = "ScaleSchedule"


def parse_applied_placement(annotation: str) -> Placement | None:
    """The placement recorded in the applied-placement annotation; None when it is not a valid Placement."""
    try:
        data = json.loads(annotation)
        return parse_placement(Fields(data, "annotation"))
    except (ValueError, ValidationError):
        return None


def placement_changed(placement: Placement, annotation: str, observed_affinity_name: str) -> bool:
    """Karmada's `placementChanged`; absent and empty lists compare equal (a deliberate fix)."""
    if not annotation:
        return True
    applied = parse_applied_placement(annotation)
    if applied is None:
        return False
    if applied == placement:
        return False
    if (
        applied.cluster_affinity != placement.cluster_affinity
        or applied.cluster_tolerations != placement.cluster_tolerations
        or applied.spread_constraints != placement.spread_constraints
        or applied.replica_scheduling != placement.replica_scheduling
    ):
        return True
    return affinity_terms_changed(placement, applied, observed_affinity_name)


def affinity_terms_changed(placement: Placement, applied: Placement, observed_affinity_name: str) -> bool:
    """Only the observed term counts: adding, removing or editing other terms is not a change."""
    if not observed_affinity_name:
        return True
    current, before = placement.term(observed_affinity_name), applied.term(observed_affinity_name)
    if current is None or before is None:
        return True
    return current != before


def replicas_changed(binding: Binding, multiple_pod_templates: bool = False) -> bool:
    placement = binding.placement
    if placement is None or placement.replica_scheduling is None:
        return False
    if multiple_pod_templates and binding.components and not binding.clusters:
        return True
    if placement.replica_scheduling.type is ReplicaSchedulingType.DUPLICATED:
        return any(t.replicas != binding.replicas for t in binding.clusters)
    return sum(t.replicas for t in binding.clusters) != binding.replicas


def schedule_trigger(
    binding: Binding, clusters: Mapping[str, Cluster], *, multiple_pod_templates: bool = False
) -> ScheduleType | None:
    """The triggers of Karmada's `doScheduleBinding`, in its order (placement changed, replicas changed
    (`pkg/util/binding.go: IsBindingReplicasChanged`), explicit reschedule (`RescheduleRequired`), non-workload or
    Duplicated, a terminating target (`HasTerminatingTargetClusters`)): the first true condition decides; None
    means no scheduling."""
    placement = binding.placement
    if placement is None:
        return None
    observed = binding.status.scheduler_observing_affinity_name
    if placement_changed(placement, binding.applied_placement, observed):
        return ScheduleType.RECONCILE
    if replicas_changed(binding, multiple_pod_templates):
        return ScheduleType.SCALE
    if binding.reschedule_pending:
        return ScheduleType.RECONCILE
    if not binding.is_workload or placement.scheduling_type is ReplicaSchedulingType.DUPLICATED:
        return ScheduleType.RECONCILE
    if any((c := clusters.get(t.name)) is None or c.deleting for t in binding.clusters):
        return ScheduleType.RECONCILE  # ours: a target that no longer exists counts as deleting
    return None


def condition_owed(binding: Binding) -> bool:
    """A binding that needs no scheduling by `schedule_trigger` but still lacks the outcome of its last decision:
    a newer generation than the scheduler observed, and no `Scheduled=True` condition. That is what a pass leaves
    when its spec write landed and its status write did not (a 5xx, or the spec write's answer lost so the status
    write got 409). Karmada would only record the generation, and the condition would be missing for good; we
    decide again (the result usually matches, so only the status is written). A deliberate difference."""
    if binding.generation == binding.status.scheduler_observed_generation:
        return False
    scheduled = binding.status.condition(SCHEDULED)
    return scheduled is None or scheduled.status != "True"


def observed_term_index(placement: Placement, observed_affinity_name: str) -> int:
    """Karmada's `getAffinityIndex`: the index of the named term; 0 for an empty or unknown name."""
    for i, term in enumerate(placement.cluster_affinities or ()):
        if term.affinity_name == observed_affinity_name:
            return i
    return 0


def affinity_index(binding: Binding) -> int:
    """Where the walk through clusterAffinities starts: the observed term, or 0 (always 0 on a reschedule)."""
    placement = binding.placement
    if placement is None or not placement.cluster_affinities or binding.reschedule_pending:
        return 0
    return observed_term_index(placement, binding.status.scheduler_observing_affinity_name)
