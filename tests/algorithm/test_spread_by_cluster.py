"""Cluster spread selection through `select_best_clusters` (Karmada's TestSelectBestClusters, rebuilt from its
description; order-sensitive like the original)."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.algorithm.candidates import ClusterDetail
from binding_scheduler.algorithm.errors import SchedulingError
from binding_scheduler.algorithm.spread import select_best_clusters
from binding_scheduler.model import Binding
from testsupport.builders import make_binding, make_cluster, placement

AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
DUPLICATED = {"replicaSchedulingType": "Duplicated"}
STATIC_WEIGHTED = {
    "replicaSchedulingType": "Divided",
    "replicaDivisionPreference": "Weighted",
    "weightPreference": {"staticWeightList": [{"targetCluster": {"clusterNames": ["member1"]}, "weight": 1}]},
}


def detail(name: str, available: int, score: int = 0) -> ClusterDetail:
    return ClusterDetail(make_cluster(name), score=score, allocatable=available, available=available)


def binding(replicas: int, scheduling: dict[str, Any] | None, *constraints: dict[str, Any]) -> Binding:
    return make_binding("nginx", replicas=replicas, placement=placement(spread=constraints, scheduling=scheduling))


def cluster_spread(min_groups: int = 1, max_groups: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {"spreadByField": "cluster", "minGroups": min_groups}
    if max_groups:
        spec["maxGroups"] = max_groups
    return spec


def error_of(b: Binding, candidates: list[ClusterDetail]) -> str:
    with pytest.raises(SchedulingError) as caught:
        select(b, candidates)
    return str(caught.value)


def select(b: Binding, candidates: list[ClusterDetail], need: int | None = None) -> list[str]:
    return [c.name for c in select_best_clusters(b, candidates, b.replicas if need is None else need)]


# Best first by score: member4, member2, member3, member1.
FLEET = [detail("member1", 101, 20), detail("member2", 60, 40), detail("member3", 101, 30), detail("member4", 101, 60)]


# --- TestSelectBestClusters --------------------------------------------------------------------------------


def test_selects_best_max_groups_clusters_by_score() -> None:
    assert select(binding(100, AGGREGATED, cluster_spread(1, 2)), FLEET) == ["member4", "member2"]


def test_duplicated_ignores_capacity() -> None:
    assert select(binding(1000, DUPLICATED, cluster_spread(1, 2)), FLEET) == ["member4", "member2"]


def test_static_weights_select_every_cluster() -> None:
    assert select(binding(1000, STATIC_WEIGHTED, cluster_spread(1, 2)), FLEET) == [
        "member4", "member2", "member3", "member1"
    ]


def test_roomier_reserve_cluster_replaces_last_selected_one() -> None:
    # member4 + member2 hold 161 < 200; member3 (101 > 60) takes member2's place
    assert select(binding(200, AGGREGATED, cluster_spread(1, 2)), FLEET) == ["member4", "member3"]


def test_insufficient_capacity_after_every_swap_fails_with_count() -> None:
    assert error_of(binding(300, AGGREGATED, cluster_spread(1, 2)), FLEET) == (
        "no enough resource when selecting 2 clusters"
    )


def test_fewer_clusters_than_min_groups_fails() -> None:
    assert error_of(binding(10, AGGREGATED, cluster_spread(7, 8)), FLEET) == (
        "the number of feasible clusters is less than spreadConstraint.MinGroups"
    )


# --- Capacity swap details ---------------------------------------------------------------------------------


def test_swapped_out_cluster_can_return_at_earlier_position() -> None:
    candidates = [detail("a", 1, 100), detail("b", 5, 50), detail("c", 10, 0)]
    # position 1: b (5) <-> c (10) gives 11 < 14; position 0: a (1) <-> b (5) gives 15
    assert select(binding(14, AGGREGATED, cluster_spread(1, 2)), candidates) == ["b", "c"]


def test_swap_takes_roomiest_reserve_cluster_and_first_of_equals() -> None:
    # reserve in candidate order: d (9, score 10), c (9), b (7); d is roomiest and comes before c
    candidates = [detail("a", 1, 100), detail("b", 7, 0), detail("c", 9, 0), detail("d", 9, 10)]
    assert select(binding(9, AGGREGATED, cluster_spread(1, 1)), candidates) == ["d"]


def test_reserve_cluster_with_equal_capacity_is_not_swapped_in() -> None:
    candidates = [detail("a", 5, 100), detail("b", 5, 0)]
    assert error_of(binding(6, AGGREGATED, cluster_spread(1, 1)), candidates) == (
        "no enough resource when selecting 1 clusters"
    )


def test_swaps_stop_as_soon_as_capacity_suffices() -> None:
    candidates = [detail("a", 1, 100), detail("b", 2, 90), detail("c", 50, 0), detail("d", 40, 0)]
    # position 1: b -> c gives 51 >= 30, so a keeps its place though d is roomier
    assert select(binding(30, AGGREGATED, cluster_spread(1, 2)), candidates) == ["a", "c"]


def test_position_without_roomier_reserve_cluster_is_skipped() -> None:
    candidates = [detail("a", 1, 100), detail("b", 50, 90), detail("c", 10, 0)]
    # position 1 (b, 50) has no roomier reserve; position 0 (a, 1) takes c
    assert select(binding(60, AGGREGATED, cluster_spread(1, 2)), candidates) == ["c", "b"]


def test_capacity_counts_assigned_replicas() -> None:
    # available = estimate + replicas already there; the selection compares available, not allocatable
    held = ClusterDetail(detail("a", 0).cluster, score=100, allocatable=0, available=8)
    assert select(binding(8, AGGREGATED, cluster_spread(1, 1)), [held, detail("b", 7)]) == ["a"]


def test_need_replicas_comes_from_caller_not_binding() -> None:
    # the multi-template case: the caller asks for room for one set, whatever spec.replicas says
    assert select(binding(1000, AGGREGATED, cluster_spread(1, 1)), FLEET, need=1) == ["member4"]


def test_max_groups_above_cluster_count_selects_every_cluster() -> None:
    assert select(binding(10, AGGREGATED, cluster_spread(1, 10)), FLEET) == [
        "member4", "member2", "member3", "member1"
    ]


# --- QUIRK: maxGroups 0 -----------------------------------------------------------------------------------


def test_max_groups_zero_selects_no_cluster() -> None:
    assert error_of(binding(1, AGGREGATED, cluster_spread(1)), FLEET) == (
        "no enough resource when selecting 0 clusters"
    )


def test_max_groups_zero_fails_even_zero_replicas() -> None:
    assert error_of(binding(0, AGGREGATED, cluster_spread(1)), FLEET) == (
        "no enough resource when selecting 0 clusters"
    )


def test_max_groups_zero_selects_nothing() -> None:
    assert select(binding(1, DUPLICATED, cluster_spread(1)), FLEET) == []


def test_capacity_is_ignored_when_replica_scheduling_is_absent() -> None:
    assert select(binding(1000, None, cluster_spread(1, 1)), FLEET) == ["member4"]


def test_repeated_cluster_constraint_counts_as_last_one() -> None:
    # A binding created directly may repeat a field (a policy may not); Karmada keeps the constraints in a map
    # by field, so the last one decides. We used to refuse such a binding (found by the differential tests).
    assert select(binding(100, AGGREGATED, cluster_spread(1, 1), cluster_spread(1, 3)), FLEET) == [
        "member4", "member2", "member3"
    ]
    assert select(binding(100, AGGREGATED, cluster_spread(1, 3), cluster_spread(1, 1)), FLEET) == ["member4"]
