"""Topology grouping and group scores (Karmada's `pkg/scheduler/core/spreadconstraint/group_clusters.go`:
`GroupClustersWithScore`, `calcGroupScore`, `calcGroupScoreForDuplicate`).

Candidates are put in the one total order of `sort_candidates`, and, when the spread constraints ask for
topology, into zone, region and provider groups, each scored the way Karmada scores them. Only region groups
drive selection; zone and provider groups exist for the scores and for `explain`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from types import MappingProxyType

from ...model import Binding, DivisionPreference, Placement, ReplicaSchedulingType, SpreadField
from ..candidates import ClusterDetail, sort_candidates

WEIGHT_UNIT = 1000
"""A group score is `replicas * WEIGHT_UNIT + mean cluster score`: capacity first, score as tie-breaker."""


@dataclass(frozen=True, slots=True)
class ClusterGroup:
    """Clusters sharing one zone, region or provider, best first (the order of `sort_candidates`)."""

    name: str
    clusters: tuple[ClusterDetail, ...]
    available: int
    score: int


_NO_GROUPS: Mapping[str, ClusterGroup] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ClusterGroups:
    """Karmada's `GroupClustersInfo`: the ordered candidates and the topology groups asked for.

    A map is empty when its field has no spread constraint or when topology is ignored. Maps keep the order
    in which their groups first appear among the ordered clusters.
    """

    clusters: tuple[ClusterDetail, ...]
    zones: Mapping[str, ClusterGroup] = field(default_factory=lambda: _NO_GROUPS)
    regions: Mapping[str, ClusterGroup] = field(default_factory=lambda: _NO_GROUPS)
    providers: Mapping[str, ClusterGroup] = field(default_factory=lambda: _NO_GROUPS)


def spread_ignored_for_static_weight(placement: Placement) -> bool:
    """Divided + Weighted with no dynamic weight: static weights decide, spread constraints are ignored.

    That is: no `weightPreference` at all, or a non-empty `staticWeightList` and no `dynamicWeight`.
    """
    strategy = placement.replica_scheduling
    if strategy is None or strategy.type is not ReplicaSchedulingType.DIVIDED:
        return False
    if strategy.division_preference is not DivisionPreference.WEIGHTED:
        return False
    weights = strategy.weight_preference
    return weights is None or (bool(weights.static_weight_list) and not weights.dynamic_weight)


def topology_ignored(placement: Placement) -> bool:
    """No groups are built: no constraints, a lone `cluster` constraint, or the static-weight rule."""
    constraints = placement.spread_constraints
    if not constraints:
        return True
    if len(constraints) == 1 and constraints[0].spread_by_field == SpreadField.CLUSTER.value:
        return True
    return spread_ignored_for_static_weight(placement)


def _trunc_div(numerator: int, denominator: int) -> int:
    """Integer division rounding toward zero, as Go's `/` on int64 does."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def duplicated_group_score(clusters: Sequence[ClusterDetail], replicas: int) -> int:
    """Count the clusters that can hold every replica, then add their mean score; 0 when none can."""
    valid = 0
    score_sum = 0
    for cluster in clusters:
        if cluster.available >= replicas:
            valid += 1
            score_sum += cluster.score
    if valid == 0:
        return 0
    return valid * WEIGHT_UNIT + _trunc_div(score_sum, valid)


def _cluster_min_groups(placement: Placement) -> int:
    """The `cluster` constraint's minGroups, 0 when there is none."""
    constraint = placement.spread(SpreadField.CLUSTER)
    return constraint.min_groups if constraint is not None else 0


def divided_group_score(clusters: Sequence[ClusterDetail], placement: Placement, replicas: int, min_groups: int) -> int:
    """How much of this group's share (`ceil(replicas / minGroups)`) its best clusters can take.

    The walk takes clusters best first until it has at least `max(cluster minGroups, minGroups)` of them
    and their available replicas reach the share; a group that cannot reach the share scores its whole
    capacity instead, with the mean score over all its clusters.
    """
    target = -(-replicas // min_groups)
    cluster_min = max(_cluster_min_groups(placement), min_groups)
    available_sum = 0
    score_sum = 0
    walked = 0
    for cluster in clusters:
        available_sum += cluster.available
        score_sum += cluster.score
        walked += 1
        if walked >= cluster_min and available_sum >= target:
            break
    if available_sum < target:
        return available_sum * WEIGHT_UNIT + _trunc_div(score_sum, len(clusters))
    return target * WEIGHT_UNIT + _trunc_div(score_sum, walked)


def group_score(clusters: Sequence[ClusterDetail], binding: Binding, min_groups: int) -> int:
    """Karmada's `calcGroupScore`: the Duplicated formula when the placement is absent or Duplicated."""
    placement = binding.placement
    if placement is None or placement.scheduling_type is ReplicaSchedulingType.DUPLICATED:
        return duplicated_group_score(clusters, binding.replicas)
    return divided_group_score(clusters, placement, binding.replicas, min_groups)


_AVAILABLE = attrgetter("available")


def _build_groups(
    keyed: Iterable[tuple[str, ClusterDetail]], binding: Binding, min_groups: int
) -> dict[str, ClusterGroup]:
    """Groups in order of first appearance, each keeping its clusters in the given (sorted) order."""
    members: dict[str, list[ClusterDetail]] = {}
    for key, cluster in keyed:
        bucket = members.get(key)
        if bucket is None:
            members[key] = [cluster]
        else:
            bucket.append(cluster)
    return {
        name: ClusterGroup(
            name, tuple(clusters), sum(map(_AVAILABLE, clusters)), group_score(clusters, binding, min_groups)
        )
        for name, clusters in members.items()
    }


def zone_groups(clusters: Sequence[ClusterDetail], binding: Binding, min_groups: int) -> dict[str, ClusterGroup]:
    """A cluster spanning several zones belongs to every one of them."""
    return _build_groups(((zone, c) for c in clusters for zone in c.cluster.zones), binding, min_groups)


def region_groups(clusters: Sequence[ClusterDetail], binding: Binding, min_groups: int) -> dict[str, ClusterGroup]:
    """Clusters without a region belong to no region group."""
    keyed = zip(map(attrgetter("cluster.region"), clusters), clusters, strict=True)
    return _build_groups(((region, c) for region, c in keyed if region), binding, min_groups)


def provider_groups(clusters: Sequence[ClusterDetail], binding: Binding, min_groups: int) -> dict[str, ClusterGroup]:
    """Keyed by `spec.provider` as it is, so "" is a provider here. Karmada's `generateProviderInfo` skips
    clusters with an empty provider; no decision differs, since provider groups never drive selection and the
    SpreadConstraint filter drops clusters without a provider whenever a provider constraint exists."""
    return _build_groups(zip(map(attrgetter("cluster.provider"), clusters), clusters, strict=True), binding, min_groups)


def group_clusters(binding: Binding, candidates: Sequence[ClusterDetail]) -> ClusterGroups:
    """Karmada's `GroupClustersWithScore`, given candidates that already carry their estimates."""
    ordered = tuple(sort_candidates(list(candidates)))
    placement = binding.placement or Placement()
    if topology_ignored(placement):
        return ClusterGroups(clusters=ordered)
    zone = placement.spread(SpreadField.ZONE)
    region = placement.spread(SpreadField.REGION)
    provider = placement.spread(SpreadField.PROVIDER)
    return ClusterGroups(
        clusters=ordered,
        zones=zone_groups(ordered, binding, zone.min_groups) if zone else _NO_GROUPS,
        regions=region_groups(ordered, binding, region.min_groups) if region else _NO_GROUPS,
        providers=provider_groups(ordered, binding, provider.min_groups) if provider else _NO_GROUPS,
    )
