"""Topology grouping and group scores (Karmada's `pkg/scheduler/core/spreadconstraint/group_clusters.go`:
`GroupClustersWithScore`, `calcGroupScore`, `calcGroupScoreForDuplicate`).

Candidates are put in the one total order of `sort_candidates`, and, when the spread constraints ask for
topology, into zone, region and provider groups, each scored the way Karmada scores them. Only region groups
drive selection; zone and provider groups exist for the scores and for `explain`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeAlias, overload

import numpy as np
import numpy.typing as npt

from ...model import Binding, Cluster, DivisionPreference, Placement, ReplicaSchedulingType, SpreadField
from ..candidates import ClusterDetail, sort_candidates
from ..fleet import Indices

IntColumn: TypeAlias = npt.NDArray[np.int64]

WEIGHT_UNIT = 1000
"""A group score is `replicas * WEIGHT_UNIT + mean cluster score`: capacity first, score as tie-breaker."""


@dataclass(frozen=True, slots=True)
class ClusterGroup:
    """Clusters sharing one zone, region or provider, best first (the order of `sort_candidates`)."""

    name: str
    clusters: Sequence[ClusterDetail]
    available: int
    score: int


_NO_GROUPS: Mapping[str, ClusterGroup] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ClusterGroups:
    """Karmada's `GroupClustersInfo`: the ordered candidates and the topology groups asked for.

    A map is empty when its field has no spread constraint or when topology is ignored. Maps keep the order
    in which their groups first appear among the ordered clusters.
    """

    clusters: Sequence[ClusterDetail]
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


def duplicated_group_score(available: Sequence[int], scores: Sequence[int], replicas: int) -> int:
    """Count the clusters that can hold every replica, then add their mean score; 0 when none can."""
    valid = 0
    score_sum = 0
    for cluster_available, score in zip(available, scores, strict=True):
        if cluster_available >= replicas:
            valid += 1
            score_sum += score
    if valid == 0:
        return 0
    return valid * WEIGHT_UNIT + _trunc_div(score_sum, valid)


def _cluster_min_groups(placement: Placement) -> int:
    """The `cluster` constraint's minGroups, 0 when there is none."""
    constraint = placement.spread(SpreadField.CLUSTER)
    return constraint.min_groups if constraint is not None else 0


def divided_group_score(
    available: Sequence[int], scores: Sequence[int], placement: Placement, replicas: int, min_groups: int
) -> int:
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
    for cluster_available, score in zip(available, scores, strict=True):
        available_sum += cluster_available
        score_sum += score
        walked += 1
        if walked >= cluster_min and available_sum >= target:
            break
    if available_sum < target:
        return available_sum * WEIGHT_UNIT + _trunc_div(sum(scores), len(scores))
    return target * WEIGHT_UNIT + _trunc_div(score_sum, walked)


def group_score(clusters: Sequence[ClusterDetail], binding: Binding, min_groups: int) -> int:
    """Karmada's `calcGroupScore`: the Duplicated formula when the placement is absent or Duplicated."""
    return _score([c.available for c in clusters], [c.score for c in clusters], binding, min_groups)


def _score(available: Sequence[int], scores: Sequence[int], binding: Binding, min_groups: int) -> int:
    placement = binding.placement
    if placement is None or placement.scheduling_type is ReplicaSchedulingType.DUPLICATED:
        return duplicated_group_score(available, scores, binding.replicas)
    return divided_group_score(available, scores, placement, binding.replicas, min_groups)


@dataclass(frozen=True, slots=True)
class Keyed:
    """Group membership as pairs: pair k puts the cluster at `positions[k]` (in the ordered clusters) into the group
    named `names[codes[k]]`. Pairs follow the clusters' order, and a cluster's own keys in their order (a cluster
    spans several zones), so a group's first pair is where it first appears."""

    positions: Indices
    codes: IntColumn
    names: Sequence[str]


def keyed_by_codes(codes: IntColumn, names: Sequence[str]) -> Keyed:
    """One key per ordered cluster as a code into `names`; a negative code is no group."""
    positions = np.flatnonzero(codes >= 0)
    return Keyed(positions, codes[positions], names)


def keyed_by_values(values: Iterable[Iterable[str]]) -> Keyed:
    """The keys of each ordered cluster as strings (a zone list, a one-element region or provider)."""
    codes: dict[str, int] = {}
    positions: list[int] = []
    pair_codes: list[int] = []
    for position, keys in enumerate(values):
        for key in keys:
            positions.append(position)
            pair_codes.append(codes.setdefault(key, len(codes)))
    return Keyed(np.array(positions, dtype=np.intp), np.array(pair_codes, dtype=np.int64), list(codes))


def keyed_by_cluster_field(field: SpreadField, clusters: Iterable[Cluster]) -> Keyed:
    """Zones, region (none when empty) or provider (`""` is a provider) of each ordered cluster."""
    if field is SpreadField.ZONE:
        return keyed_by_values(c.zones for c in clusters)
    if field is SpreadField.REGION:
        return keyed_by_values((c.region,) if c.region else () for c in clusters)
    return keyed_by_values((c.provider,) for c in clusters)


@dataclass(frozen=True, slots=True)
class OrderedClusters:
    """The candidates in the one total order of `sort_candidates`, with their available replicas and scores as
    columns (the grouping reads those, not the objects, which may be built lazily) and the group keys of each."""

    clusters: Sequence[ClusterDetail]
    available: IntColumn
    score: IntColumn
    keyed: Callable[[SpreadField], Keyed]

    @classmethod
    def of_details(cls, candidates: Iterable[ClusterDetail]) -> OrderedClusters:
        ordered = tuple(sort_candidates(candidates))
        return cls(
            ordered,
            np.fromiter((c.available for c in ordered), dtype=np.int64, count=len(ordered)),
            np.fromiter((c.score for c in ordered), dtype=np.int64, count=len(ordered)),
            lambda field: keyed_by_cluster_field(field, (c.cluster for c in ordered)),
        )


class Members(Sequence[ClusterDetail]):
    """Some of the ordered clusters, by position (`base[positions[k]]`, positions ascending, so in the order of
    `sort_candidates`): a group's clusters without copying (or building) them."""

    __slots__ = ("_positions", "base")

    def __init__(self, base: Sequence[ClusterDetail], positions: Sequence[int] | Indices) -> None:
        self.base = base
        self._positions = positions

    @property
    def position_column(self) -> Indices:
        positions = self._positions
        return positions if isinstance(positions, np.ndarray) else np.array(positions, dtype=np.intp)

    @property
    def positions(self) -> list[int]:
        positions = self._positions
        if not isinstance(positions, list):
            positions = self._positions = positions.tolist() if isinstance(positions, np.ndarray) else list(positions)
        return positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> ClusterDetail: ...

    @overload
    def __getitem__(self, index: slice) -> Members: ...

    def __getitem__(self, index: int | slice) -> ClusterDetail | Members:
        if isinstance(index, slice):
            return Members(self.base, self._positions[index])
        return self.base[int(self._positions[index])]

    def __iter__(self) -> Iterator[ClusterDetail]:
        base = self.base
        return (base[position] for position in self.positions)


def _build_groups(ordered: OrderedClusters, keyed: Keyed, binding: Binding, min_groups: int) -> dict[str, ClusterGroup]:
    """Groups in order of first appearance, each keeping its clusters in the given (sorted) order: a stable sort
    of the pairs by group code keeps each group's clusters in order, and each group's first pair says where it
    first appears. Group sums and scores are array operations over the grouped pairs."""
    if not len(keyed.codes):
        return {}
    by_group = np.argsort(keyed.codes, kind="stable")
    codes = keyed.codes[by_group]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    bounds = np.append(starts, len(codes)).tolist()
    positions = keyed.positions[by_group]
    available = ordered.available[positions]
    scores = group_scores(available, ordered.score[positions], starts, binding, min_groups)
    totals = np.add.reduceat(available, starts).tolist()
    first_codes = codes[starts].tolist()
    groups = {}
    for g in np.argsort(by_group[starts]).tolist():
        name = keyed.names[first_codes[g]]
        members = Members(ordered.clusters, positions[bounds[g]:bounds[g + 1]])
        groups[name] = ClusterGroup(name, members, totals[g], scores[g])
    return groups


def group_scores(
    available: IntColumn, scores: IntColumn, starts: Indices, binding: Binding, min_groups: int
) -> list[int]:
    """`_score` of each group, the groups laid end to end (group g is `[starts[g], starts[g + 1])`): the Duplicated
    formula as array operations, the divided walk in Python (it stops after a few clusters of each group, and
    array operations over a few hundred clusters cost more than that), with the groups' sums as array operations."""
    placement = binding.placement
    if placement is None or placement.scheduling_type is ReplicaSchedulingType.DUPLICATED:
        fits = available >= binding.replicas
        valid = np.add.reduceat(fits.astype(np.int64), starts).tolist()
        summed = np.add.reduceat(np.where(fits, scores, 0), starts).tolist()
        return [count * WEIGHT_UNIT + _trunc_div(score, count) if count else 0
                for count, score in zip(valid, summed, strict=True)]
    target = -(-binding.replicas // min_groups)
    cluster_min = max(_cluster_min_groups(placement), min_groups)
    totals = np.add.reduceat(scores, starts).tolist()
    sizes = np.diff(np.append(starts, len(available))).tolist()
    capacities = available.tolist()
    each = scores.tolist()
    result = []
    for start, size, total in zip(starts.tolist(), sizes, totals, strict=True):
        available_sum = score_sum = walked = 0
        for at in range(start, start + size):
            available_sum += capacities[at]
            score_sum += each[at]
            walked += 1
            if walked >= cluster_min and available_sum >= target:
                break
        if available_sum < target:
            result.append(available_sum * WEIGHT_UNIT + _trunc_div(total, size))
        else:
            result.append(target * WEIGHT_UNIT + _trunc_div(score_sum, walked))
    return result


def group_clusters(binding: Binding, candidates: Sequence[ClusterDetail]) -> ClusterGroups:
    """Karmada's `GroupClustersWithScore`, given candidates that already carry their estimates."""
    return group_ordered(binding, OrderedClusters.of_details(candidates))


def group_ordered(binding: Binding, ordered: OrderedClusters) -> ClusterGroups:
    """`group_clusters` over candidates already in order. Zone groups: a cluster spanning several zones belongs
    to every one of them. Region groups: clusters without a region belong to none. Provider groups are keyed by
    `spec.provider` as it is, so "" is a provider here (Karmada's `generateProviderInfo` skips clusters with an
    empty provider; no decision differs, since provider groups never drive selection and the SpreadConstraint
    filter drops clusters without a provider whenever a provider constraint exists)."""
    placement = binding.placement or Placement()
    if topology_ignored(placement):
        return ClusterGroups(clusters=ordered.clusters)
    maps: dict[SpreadField, Mapping[str, ClusterGroup]] = {}
    for spread_field in (SpreadField.ZONE, SpreadField.REGION, SpreadField.PROVIDER):
        constraint = placement.spread(spread_field)
        maps[spread_field] = (
            _build_groups(ordered, ordered.keyed(spread_field), binding, constraint.min_groups)
            if constraint is not None else _NO_GROUPS
        )
    return ClusterGroups(ordered.clusters, maps[SpreadField.ZONE], maps[SpreadField.REGION],
                         maps[SpreadField.PROVIDER])
