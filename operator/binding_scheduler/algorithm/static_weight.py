"""StaticWeight division: fixed weights from `staticWeightList`, capacity ignored (Karmada's
`pkg/scheduler/core/assignment.go: assignByStaticWeightStrategy`, with
`pkg/scheduler/core/division_algorithm.go: getStaticWeightInfoList`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from ..model import Cluster, ClusterAffinity, TargetCluster, WeightPreference
from .affinity import cluster_matches
from .candidates import ClusterDetail, OrderedCandidates, names_of
from .fleet import FleetColumns
from .webster import ARRAYS_FROM, VOTES_LIMIT, Seats, allocate_webster, allocate_webster_array


class WeightedParties(NamedTuple):
    """Selected clusters as Webster's parties, in name order: party k is `names[at[k]]` with `votes[k]`."""

    names: Sequence[str]
    at: npt.NDArray[np.intp]
    votes: Seats


class WeightSource(Protocol):
    """Rule weights a caller computes once per snapshot and policy instead of once per binding."""

    def table(self, preference: WeightPreference) -> Mapping[str, int]:
        """Every cluster's rule weight (0 when no rule matches)."""

    def parties(self, selected: Sequence[ClusterDetail], preference: WeightPreference) -> WeightedParties | None:
        """The selected clusters with their rule weights as arrays, when the selection is held as columns."""


def rule_weights(clusters: Iterable[Cluster], preference: WeightPreference) -> dict[str, int]:
    """Each cluster's weight: the maximum over the rules whose `targetCluster` matches it, 0 for none."""
    rules = [
        (rule.weight, _names_only(rule.target_cluster), rule.target_cluster) for rule in preference.static_weight_list
    ]
    weights: dict[str, int] = {}
    for cluster in clusters:
        weight = 0
        for rule_weight, names, target in rules:
            if rule_weight > weight and (
                cluster.name in names if names is not None else cluster_matches(cluster, target)
            ):
                weight = rule_weight
        weights[cluster.name] = weight
    return weights


def static_weights(
    candidates: Sequence[ClusterDetail], preference: WeightPreference | None, source: WeightSource | None = None
) -> list[tuple[str, int]]:
    """(name, weight) per candidate with a weight, in candidate order.

    A nil preference gives every candidate weight 1 (Karmada writes that default into its in-memory spec;
    our model is immutable, so the default is simply applied here). A candidate's weight is the maximum over
    the rules whose `targetCluster` matches it; candidates left at 0 are dropped, unless every candidate is
    at 0, and then all of them get weight 1.
    """
    names = names_of(candidates)
    if preference is None:
        return [(name, 1) for name in names]
    weights = (
        source.table(preference) if source is not None else rule_weights([d.cluster for d in candidates], preference)
    )
    weighted = [(name, weight) for name in names if (weight := weights.get(name, 0)) > 0]
    return weighted or [(name, 1) for name in names]


def _names_only(target: ClusterAffinity) -> frozenset[str] | None:
    """For a rule that only lists cluster names, the set of them: `cluster_matches` then means membership.

    Any other rule (selectors, exclude, or nothing at all) returns None and goes through `cluster_matches`.
    """
    if target.label_selector is None and target.field_selector is None and not target.exclude and target.cluster_names:
        return frozenset(target.cluster_names)
    return None


def assign_static_weight(
    candidates: Sequence[ClusterDetail],
    replicas: int,
    preference: WeightPreference | None,
    *,
    descending: bool,
    source: WeightSource | None = None,
) -> list[TargetCluster]:
    """Webster from zero over the static weights; previous placement and capacity are ignored.

    The result is sorted by cluster name ascending; clusters that get nothing are left out.
    """
    if preference is not None and source is not None and len(candidates) >= ARRAYS_FROM:
        parties = source.parties(candidates, preference)
        if parties is not None:
            return _assign_parties(parties, replicas, descending)
    allocation = allocate_webster(replicas, static_weights(candidates, preference, source), descending=descending)
    return [TargetCluster(name, seats) for name, seats in allocation if seats > 0]


def _assign_parties(parties: WeightedParties, replicas: int, descending: bool) -> list[TargetCluster]:
    """`static_weights` and Webster over arrays: a party at weight 0 wins nothing (unless all are at 0, and then
    each counts 1), which is what leaving it out of the election does."""
    votes = parties.votes if parties.votes.any() else np.ones(len(parties.votes), dtype=np.int64)
    won = allocate_webster_array(replicas, votes, descending=descending)
    winners = np.flatnonzero(won)
    names, at = parties.names, parties.at[winners].tolist()
    return [TargetCluster(names[i], seats) for i, seats in zip(at, won[winners].tolist(), strict=True)]


class SnapshotWeights:
    """Static rule weights memoised on the snapshot: by cluster name, and as a column over the fleet that a
    selection of every candidate (`OrderedCandidates` of this fleet) reads by position."""

    __slots__ = ("_fleet",)

    def __init__(self, fleet: FleetColumns) -> None:
        self._fleet = fleet

    def table(self, preference: WeightPreference) -> Mapping[str, int]:
        snapshot = self._fleet.snapshot
        return snapshot.memo(("static-weights", preference.static_weight_list),
                             lambda: rule_weights(snapshot.clusters, preference))

    def parties(self, selected: Sequence[ClusterDetail], preference: WeightPreference) -> WeightedParties | None:
        fleet = self._fleet
        if not isinstance(selected, OrderedCandidates) or selected.fleet_names is not fleet.names:
            return None
        at = selected.by_name()
        if at is None:
            return None
        column = fleet.snapshot.memo(("static-weight-column", preference.static_weight_list),
                                     lambda: self._column(preference))
        if column is None:
            return None
        return WeightedParties(fleet.names, at, column[at])

    def _column(self, preference: WeightPreference) -> npt.NDArray[np.int64] | None:
        """Every cluster's weight in fleet order; None when their total could overflow int64 (Python's integers
        then divide)."""
        weights = self.table(preference)
        values = [weights[name] for name in self._fleet.names]
        if max(values, default=0) * max(len(values), 1) >= VOTES_LIMIT:
            return None
        return np.array(values, dtype=np.int64)
