"""Replica assignment: how many replicas each selected cluster gets (Karmada's
`pkg/scheduler/core/common.go: AssignReplicas`, and the strategies of `pkg/scheduler/core/assignment.go`).

Entry point: `assign_replicas(binding, selected)`. Errors are raised unprefixed; the pipeline adds Karmada's
outer `failed to assign replicas: `.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..model import Binding, DivisionPreference, ReplicaSchedulingType, TargetCluster, WeightPreference
from .candidates import ClusterDetail, targets_each
from .dynamic import assign_dynamic
from .errors import PlacementError
from .overflow import assign_by_tiers, overflow_enabled
from .static_weight import WeightSource, assign_static_weight
from .webster import names_descending

NO_CLUSTERS = "no clusters available to schedule"


class Strategy(StrEnum):
    DUPLICATED = "Duplicated"
    AGGREGATED = "Aggregated"
    STATIC_WEIGHT = "StaticWeight"
    DYNAMIC_WEIGHT = "DynamicWeight"


def select_strategy(binding: Binding) -> Strategy:
    """Karmada's strategy table (`pkg/scheduler/core/assignment.go: newAssignState`)."""
    placement = binding.placement
    scheduling = placement.replica_scheduling if placement is not None else None
    if scheduling is None or scheduling.type is ReplicaSchedulingType.DUPLICATED:
        return Strategy.DUPLICATED
    preference = scheduling.division_preference
    if preference is DivisionPreference.AGGREGATED:
        return Strategy.AGGREGATED
    if preference is DivisionPreference.WEIGHTED:
        weights = scheduling.weight_preference
        return (
            Strategy.DYNAMIC_WEIGHT
            if weights is not None and weights.dynamic_weight
            else Strategy.STATIC_WEIGHT
        )
    raise PlacementError(
        f"unsupported replica scheduling strategy, replicaSchedulingType: {scheduling.type.value}, "
        f"replicaDivisionPreference: {preference.value if preference is not None else ''}, "
        "please try another scheduling strategy"
    )


@dataclass(frozen=True, slots=True)
class AssignState:
    """Everything about the binding that a division needs, resolved once per assignment."""

    strategy: Strategy
    weight_preference: WeightPreference | None
    previous: tuple[TargetCluster, ...]
    fresh: bool
    descending: bool
    weights: WeightSource | None = None

    @classmethod
    def of(cls, binding: Binding, weights: WeightSource | None = None) -> AssignState:
        placement = binding.placement
        scheduling = placement.replica_scheduling if placement is not None else None
        return cls(
            strategy=select_strategy(binding),
            weight_preference=scheduling.weight_preference if scheduling is not None else None,
            previous=binding.clusters,
            fresh=binding.reschedule_pending,
            descending=names_descending(binding.resource.uid),
            weights=weights,
        )

    def assign(self, candidates: Sequence[ClusterDetail], replicas: int) -> list[TargetCluster]:
        """One strategy over `candidates` for `replicas` (zero entries not yet removed)."""
        if self.strategy is Strategy.DUPLICATED:
            return targets_each(candidates, replicas)
        if self.strategy is Strategy.STATIC_WEIGHT:
            return assign_static_weight(
                candidates, replicas, self.weight_preference, descending=self.descending, source=self.weights
            )
        return assign_dynamic(
            candidates,
            replicas,
            self.previous,
            aggregated=self.strategy is Strategy.AGGREGATED,
            fresh=self.fresh,
            descending=self.descending,
        )


def remove_zeros(targets: Sequence[TargetCluster]) -> list[TargetCluster]:
    return [target for target in targets if target.replicas > 0]


def is_workload_assignment(binding: Binding) -> bool:
    """Replicas are divided only for single-template workloads; the rest get the cluster names only."""
    return (binding.replicas > 0 or binding.replica_requirements is not None) and len(binding.components) <= 1


def assign_replicas(
    binding: Binding, selected: Sequence[ClusterDetail], *, weights: WeightSource | None = None
) -> list[TargetCluster]:
    """Karmada's `AssignReplicas`: the new `spec.clusters` for `binding` over the selected clusters.

    `weights` optionally supplies static rule weights precomputed per snapshot (same answer, faster).

    Raises `SchedulingError` (no clusters, unsupported strategy) or `UnschedulableError` (not enough
    capacity, prefixed with `failed to scale up` / `failed to scale down` / `failed to do fresh scale`).
    """
    if not selected:
        raise PlacementError(NO_CLUSTERS)
    if not is_workload_assignment(binding):
        return targets_each(selected, 0)
    state = AssignState.of(binding, weights)
    if overflow_enabled(binding):
        return remove_zeros(assign_by_tiers(selected, binding.replicas, state.assign))
    if state.strategy is Strategy.DUPLICATED:
        return state.assign(selected, binding.replicas) if binding.replicas > 0 else []
    return remove_zeros(state.assign(selected, binding.replicas))
