"""StaticWeight division: fixed weights from `staticWeightList`, capacity ignored (Karmada's
`pkg/scheduler/core/assignment.go: assignByStaticWeightStrategy`, with
`pkg/scheduler/core/division_algorithm.go: getStaticWeightInfoList`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..model import Cluster, ClusterAffinity, TargetCluster, WeightPreference
from .affinity import cluster_matches
from .candidates import ClusterDetail, names_of
from .webster import allocate_webster

WeightTable = Callable[[WeightPreference], Mapping[str, int]]
"""Given a preference, every cluster's rule weight (0 when no rule matches): lets a caller compute the table
once per snapshot and policy instead of once per binding."""


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
    candidates: Sequence[ClusterDetail], preference: WeightPreference | None, table: WeightTable | None = None
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
    weights = table(preference) if table is not None else rule_weights([d.cluster for d in candidates], preference)
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
    table: WeightTable | None = None,
) -> list[TargetCluster]:
    """Webster from zero over the static weights; previous placement and capacity are ignored.

    The result is sorted by cluster name ascending; clusters that get nothing are left out.
    """
    allocation = allocate_webster(replicas, static_weights(candidates, preference, table), descending=descending)
    return [TargetCluster(name, seats) for name, seats in allocation if seats > 0]
