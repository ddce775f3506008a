"""Grouping, ordering and group scores (Karmada's Test_GroupClustersWithScore, Test_CalcGroupScore,
Test_CalcGroupScoreForDuplicate and Test_sortClusters, rebuilt from their descriptions)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.candidates import ClusterDetail, sort_candidates
from binding_scheduler.algorithm.spread import group_clusters, group_score, topology_ignored
from binding_scheduler.algorithm.spread.by_region import _best_rest
from binding_scheduler.algorithm.spread.groups import ClusterGroup, Members, group_scores
from binding_scheduler.model import Binding, Placement
from testsupport.builders import make_binding, make_cluster

AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
DUPLICATED = {"replicaSchedulingType": "Duplicated"}


def detail(
    name: str,
    available: int = 0,
    score: int = 0,
    *,
    region: str = "",
    zones: tuple[str, ...] = (),
    provider: str = "",
    overflow_order: int = 0,
) -> ClusterDetail:
    cluster = make_cluster(name, region=region, zones=zones, provider=provider)
    return ClusterDetail(cluster, score=score, allocatable=available, available=available,
                         overflow_order=overflow_order)


def spread(field: str, min_groups: int = 1, max_groups: int = 0) -> dict[str, Any]:
    return {"spreadByField": field, "minGroups": min_groups, "maxGroups": max_groups}


def binding(replicas: int, placement: dict[str, Any] | None = None) -> Binding:
    return make_binding("nginx", replicas=replicas, placement=placement)


def names(clusters: Any) -> list[str]:
    return [c.name for c in clusters]


def placement_of(b: Binding) -> Placement:
    assert b.placement is not None
    return b.placement


FLEET = [
    detail("member1", 10, 0, region="east", zones=("east-a",), provider="aws"),
    detail("member2", 30, 100, region="east", zones=("east-a", "east-b"), provider="aws"),
    detail("member3", 20, 0, region="west", zones=("west-a",), provider="gcp"),
    detail("member4", 5, 0, region="", zones=(), provider="gcp"),
]


# --- Test_sortClusters -------------------------------------------------------------------------------------


def test_ordering_puts_higher_score_first() -> None:
    groups = group_clusters(binding(1), [detail("a", 50, 0), detail("b", 10, 100)])
    assert names(groups.clusters) == ["b", "a"]


def test_ordering_breaks_score_ties_by_more_available_replicas() -> None:
    groups = group_clusters(binding(1), [detail("a", 10, 100), detail("b", 50, 100), detail("c", 30, 100)])
    assert names(groups.clusters) == ["b", "c", "a"]


def test_ordering_breaks_score_and_capacity_ties_by_name() -> None:
    groups = group_clusters(binding(1), [detail("c", 10), detail("a", 10), detail("b", 10)])
    assert names(groups.clusters) == ["a", "b", "c"]


def test_lower_overflow_order_sorts_first() -> None:
    candidates = [detail("a", 99, 100, overflow_order=1), detail("b", 1, 0, overflow_order=0)]
    assert names(group_clusters(binding(1), candidates).clusters) == ["b", "a"]


# --- Test_GroupClustersWithScore ---------------------------------------------------------------------------


def test_grouping_without_spread_constraints_builds_no_groups() -> None:
    groups = group_clusters(binding(10, {"replicaScheduling": AGGREGATED}), FLEET)
    assert names(groups.clusters) == ["member2", "member3", "member1", "member4"]
    assert not groups.zones and not groups.regions and not groups.providers


def test_grouping_with_only_cluster_constraint_ignores_topology() -> None:
    placement = {"replicaScheduling": AGGREGATED, "spreadConstraints": [spread("cluster", 1, 2)]}
    groups = group_clusters(binding(10, placement), FLEET)
    assert names(groups.clusters) == ["member2", "member3", "member1", "member4"]
    assert not groups.zones and not groups.regions and not groups.providers


def test_grouping_by_zone_puts_multi_zone_cluster_in_every_zone() -> None:
    placement = {"replicaScheduling": AGGREGATED, "spreadConstraints": [spread("zone", 1, 3), spread("cluster", 1, 3)]}
    groups = group_clusters(binding(10, placement), FLEET)
    assert {z: names(g.clusters) for z, g in groups.zones.items()} == {
        "east-a": ["member2", "member1"],
        "east-b": ["member2"],
        "west-a": ["member3"],
    }
    assert {z: g.available for z, g in groups.zones.items()} == {"east-a": 40, "east-b": 30, "west-a": 20}
    assert not groups.regions and not groups.providers


def test_grouping_by_region_skips_clusters_without_region() -> None:
    placement = {"replicaScheduling": AGGREGATED, "spreadConstraints": [spread("region", 1, 2)]}
    groups = group_clusters(binding(10, placement), FLEET)
    assert {r: names(g.clusters) for r, g in groups.regions.items()} == {
        "east": ["member2", "member1"],
        "west": ["member3"],
    }
    assert {r: g.available for r, g in groups.regions.items()} == {"east": 40, "west": 20}
    # target 10: member2 alone covers it -> 10*1000 + 100; member3 alone covers it -> 10*1000 + 0
    assert {r: g.score for r, g in groups.regions.items()} == {"east": 10100, "west": 10000}
    assert not groups.zones and not groups.providers


def test_grouping_by_provider_groups_by_provider() -> None:
    placement = {"replicaScheduling": AGGREGATED, "spreadConstraints": [spread("provider", 2, 2)]}
    groups = group_clusters(binding(10, placement), FLEET)
    assert {p: names(g.clusters) for p, g in groups.providers.items()} == {
        "aws": ["member2", "member1"],
        "gcp": ["member3", "member4"],
    }
    # target ceil(10/2) = 5 over at least 2 clusters: aws 5*1000 + 100/2, gcp 5*1000 + 0/2
    assert {p: g.score for p, g in groups.providers.items()} == {"aws": 5050, "gcp": 5000}


def test_grouping_ignores_topology_when_static_weights_decide() -> None:
    placement = {
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
        "spreadConstraints": [spread("region", 1, 2), spread("zone", 1, 2)],
    }
    groups = group_clusters(binding(10, placement), FLEET)
    assert not groups.zones and not groups.regions and not groups.providers


def test_topology_is_not_ignored_for_dynamic_weights() -> None:
    placement = {
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        },
        "spreadConstraints": [spread("region", 1, 2)],
    }
    assert not topology_ignored(placement_of(binding(10, placement)))


def test_static_weights_ignore_topology() -> None:
    placement = {
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [{"targetCluster": {"clusterNames": ["member1"]}, "weight": 1}]},
        },
        "spreadConstraints": [spread("region", 1, 2)],
    }
    assert topology_ignored(placement_of(binding(10, placement)))


# --- Test_CalcGroupScore (Divided) -------------------------------------------------------------------------


def divided(replicas: int, *constraints: dict[str, Any]) -> Binding:
    return binding(replicas, {"replicaScheduling": AGGREGATED, "spreadConstraints": list(constraints)})


def test_divided_score_stops_at_first_cluster_that_covers_share() -> None:
    clusters = [detail("a", 12, 100), detail("b", 5, 0)]
    assert group_score(clusters, divided(10, spread("region", 1, 2)), 1) == 10 * 1000 + 100


def test_divided_score_walks_min_groups() -> None:
    clusters = [detail("a", 12, 100), detail("b", 5, 0)]
    b = divided(10, spread("region", 1, 2), spread("cluster", 2, 4))
    assert group_score(clusters, b, 1) == 10 * 1000 + 100 // 2


def test_divided_score_walks_at_least_group_min_groups() -> None:
    clusters = [detail("a", 12, 100), detail("b", 5, 0)]
    assert group_score(clusters, divided(10, spread("region", 2, 2)), 2) == 5 * 1000 + 100 // 2


def test_divided_score_of_group_below_share_is_whole_capacity() -> None:
    clusters = [detail("a", 12, 100), detail("b", 5, 0), detail("c", 3, 50)]
    assert group_score(clusters, divided(30, spread("region", 1, 2)), 1) == 20 * 1000 + 150 // 3


def test_divided_score_rounds_share_up() -> None:
    clusters = [detail("a", 3, 90), detail("b", 1, 10), detail("c", 9, 0)]
    # share ceil(7/2) = 4 needs a and b (3 + 1), walked 2
    assert group_score(clusters, divided(7, spread("region", 2, 2)), 2) == 4 * 1000 + 100 // 2


def test_divided_score_truncates_mean_cluster_score() -> None:
    clusters = [detail("a", 5, 100), detail("b", 5, 0), detail("c", 5, 1)]
    b = divided(10, spread("region", 1, 2), spread("cluster", 3, 3))
    assert group_score(clusters, b, 1) == 10 * 1000 + 33


# --- Test_CalcGroupScoreForDuplicate -----------------------------------------------------------------------


def test_duplicated_score_counts_roomy_clusters() -> None:
    clusters = [detail("a", 10, 100), detail("b", 20, 50), detail("c", 5, 0)]
    b = binding(10, {"replicaScheduling": DUPLICATED, "spreadConstraints": [spread("region", 1, 2)]})
    assert group_score(clusters, b, 1) == 2 * 1000 + 150 // 2


def test_duplicated_score_zero_without_room() -> None:
    clusters = [detail("a", 9, 100), detail("b", 1, 50)]
    b = binding(10, {"replicaScheduling": DUPLICATED, "spreadConstraints": [spread("region", 1, 2)]})
    assert group_score(clusters, b, 1) == 0


def test_duplicated_score_without_scheduling() -> None:
    clusters = [detail("a", 10, 100), detail("b", 9, 0)]
    b = binding(10, {"spreadConstraints": [spread("region", 2, 2)]})
    assert group_score(clusters, b, 2) == 1 * 1000 + 100


# --- every group's score at once -----------------------------------------------------------------------------


@st.composite
def laid_out_groups(draw: st.DrawFn) -> tuple[list[list[tuple[int, int]]], Binding, int]:
    """Groups of (available, score) clusters laid end to end, and a binding whose placement picks the formula."""
    groups = draw(st.lists(
        st.lists(st.tuples(st.integers(0, 40), st.integers(-20, 200)), min_size=1, max_size=8),
        min_size=1, max_size=6,
    ))
    scheduling = draw(st.sampled_from([None, DUPLICATED, AGGREGATED]))
    constraints = [spread("region", 1, 3)]
    if draw(st.booleans()):
        constraints.append(spread("cluster", draw(st.integers(1, 6)), 6))
    placement: dict[str, Any] = {"spreadConstraints": constraints}
    if scheduling is not None:
        placement["replicaScheduling"] = scheduling
    return groups, binding(draw(st.integers(0, 90)), placement), draw(st.integers(1, 4))


@settings(max_examples=400, deadline=None)
@given(laid_out_groups())
def test_group_scores_over_arrays_are_each_groups_walk(case: tuple[list[list[tuple[int, int]]], Binding, int]) -> None:
    groups, b, min_groups = case
    available = np.array([a for group in groups for a, _ in group], dtype=np.int64)
    scores = np.array([s for group in groups for _, s in group], dtype=np.int64)
    starts = np.cumsum([0] + [len(group) for group in groups[:-1]])
    one_by_one = [
        group_score([ClusterDetail(make_cluster(f"m{k}"), score=s, available=a) for k, (a, s) in enumerate(group)],
                    b, min_groups)
        for group in groups
    ]
    assert group_scores(available, scores, starts, b, min_groups) == one_by_one


def test_best_of_rest_by_position_is_best_by_sort_key() -> None:
    ordered = sort_candidates([detail(f"m{i}", available=(i * 7) % 11, score=(i % 3) * 50) for i in range(12)])
    east = Members(ordered, [0, 3, 4, 9])
    west = Members(ordered, [1, 2, 7, 8, 11])
    as_groups = [ClusterGroup("east", east, 0, 0), ClusterGroup("west", west, 0, 0)]
    as_lists = [ClusterGroup("east", list(east), 0, 0), ClusterGroup("west", list(west), 0, 0)]
    best = names(ordered[p] for p in (2, 3, 4, 7, 8))
    assert names(_best_rest(as_groups, 5)) == names(_best_rest(as_lists, 5)) == best
