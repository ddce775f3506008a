"""Overflow tiers: fill the observed term's own clusters first, then each overflow tier (Karmada's
`pkg/scheduler/core/common.go: assignWorkloadReplicas`, enabled by `enableOverflow`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..model import Binding, TargetCluster
from .candidates import ClusterDetail
from .errors import UnschedulableError

TierAssigner = Callable[[Sequence[ClusterDetail], int], list[TargetCluster]]
"""Assigns a replica count within one tier with the binding's normal strategy."""

NOT_ENOUGH = "Clusters available replicas are not enough to schedule."


def overflow_enabled(binding: Binding) -> bool:
    """Only with `clusterAffinities` (not `clusterAffinity`), an observed term and its overflow list."""
    placement = binding.placement
    if placement is None or placement.cluster_affinity is not None or placement.cluster_affinities is None:
        return False
    observed = binding.status.scheduler_observing_affinity_name
    if not observed:
        return False
    term = placement.term(observed)
    return term is not None and term.overflow_affinities is not None


def tiers(selected: Sequence[ClusterDetail]) -> list[list[ClusterDetail]]:
    """The selected clusters grouped by overflow order, lowest order first, selection order kept inside."""
    groups: dict[int, list[ClusterDetail]] = {}
    for detail in selected:
        groups.setdefault(detail.overflow_order, []).append(detail)
    return [groups[order] for order in sorted(groups)]


def assign_by_tiers(
    selected: Sequence[ClusterDetail], replicas: int, assign_tier: TierAssigner
) -> list[TargetCluster]:
    """Each tier takes min(remaining, its available replicas) until nothing remains.

    A tier's steady scale-up/down sees only the previous placement on its own clusters, because the tier
    assigner only gets the tier's clusters as candidates. On scale-down the higher tiers shrink first.
    """
    remaining = replicas
    result: list[TargetCluster] = []
    for tier in tiers(selected):
        share = min(remaining, sum(detail.available for detail in tier))
        result.extend(assign_tier(tier, share))
        remaining -= share
        if remaining <= 0:
            break
    if remaining > 0:
        raise UnschedulableError(NOT_ENOUGH)
    return result
