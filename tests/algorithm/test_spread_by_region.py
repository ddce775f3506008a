"""Region spread selection through `select_best_clusters` (Karmada's Test_selectBestClustersByRegion, rebuilt from its
description)."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.algorithm.candidates import ClusterDetail
from binding_scheduler.algorithm.errors import SchedulingError
from binding_scheduler.algorithm.spread import select_best_clusters
from binding_scheduler.model import Binding
from testsupport.builders import make_binding, make_cluster, placement

AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
FEWER_REGIONS = "the number of feasible region is less than spreadConstraint.MinGroups"
NO_FEASIBLE_REGIONS = "the number of clusters is less than the cluster spreadConstraint.MinGroups"


def detail(name: str, region: str, available: int, score: int = 0) -> ClusterDetail:
    return ClusterDetail(make_cluster(name, region=region), score=score, allocatable=available, available=available)


def spread(field: str, min_groups: int, max_groups: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {"spreadByField": field, "minGroups": min_groups}
    if max_groups:
        spec["maxGroups"] = max_groups
    return spec


def binding(replicas: int, *constraints: dict[str, Any]) -> Binding:
    return make_binding("nginx", replicas=replicas, placement=placement(spread=constraints, scheduling=AGGREGATED))


def select(b: Binding, candidates: list[ClusterDetail] | None = None) -> list[str]:
    return [c.name for c in select_best_clusters(b, FLEET if candidates is None else candidates, b.replicas)]


def error_of(b: Binding) -> str:
    with pytest.raises(SchedulingError) as caught:
        select(b)
    return str(caught.value)


FLEET = [
    detail("e1", "east", 10),
    detail("e2", "east", 5),
    detail("e3", "east", 1),
    detail("w1", "west", 20, score=100),
    detail("w2", "west", 2),
    detail("n1", "north", 3),
    detail("x1", "", 100),
]


# --- Test_selectBestClustersByRegion -----------------------------------------------------------------------


def test_best_scored_region_gives_best_cluster() -> None:
    # share 15: east 15*1000 + 0, west 15*1000 + 100, north 3*1000
    assert select(binding(15, spread("region", 1, 1), spread("cluster", 1, 1))) == ["w1"]


def test_regions_give_one_cluster_each_then_best_rest() -> None:
    # share 8 over >= 2 clusters: west 8050, east 8000, north 3000; west+east is heaviest
    b = binding(15, spread("region", 2, 2), spread("cluster", 2, 4))
    assert select(b) == ["w1", "e1", "e2", "w2"]


def test_each_region_gives_one_cluster() -> None:
    assert select(binding(15, spread("region", 2, 2))) == ["w1", "e1"]


def test_regions_keep_cluster_past_max_groups() -> None:
    b = binding(15, spread("region", 3, 3), spread("cluster", 1, 2))
    assert select(b) == ["w1", "e1", "n1"]


def test_fewer_regions_than_region_min_groups_fails() -> None:
    assert error_of(binding(15, spread("region", 4, 4), spread("cluster", 1, 4))) == FEWER_REGIONS


def test_regions_that_cannot_reach_cluster_min_groups_fail() -> None:
    # one region at most, and the largest (east) has 3 clusters
    assert error_of(binding(15, spread("region", 1, 1), spread("cluster", 4, 4))) == NO_FEASIBLE_REGIONS


def test_clusters_without_region_are_never_selected() -> None:
    b = binding(15, spread("region", 1, 3), spread("cluster", 1, 10))
    assert select(b) == ["w1", "w2"]


# --- Details and QUIRKs ------------------------------------------------------------------------------------


def test_region_selection_does_not_check_capacity() -> None:
    assert select(binding(1000, spread("region", 1, 1), spread("cluster", 1, 1))) == ["w1"]


def test_region_max_groups_zero_never_finds_regions() -> None:
    assert error_of(binding(15, spread("region", 1), spread("cluster", 1, 2))) == NO_FEASIBLE_REGIONS


def test_only_clusters_without_region_count_as_no_region_at_all() -> None:
    b = binding(15, spread("region", 1, 1))
    with pytest.raises(SchedulingError) as caught:
        select(b, [detail("x1", "", 100), detail("x2", "", 5)])
    assert str(caught.value) == FEWER_REGIONS


def test_region_constraint_beats_cluster() -> None:
    # cluster selection would take the two best clusters overall (w1, x1); region selection stays in west
    b = binding(15, spread("cluster", 2, 2), spread("region", 1, 1))
    assert select(b) == ["w1", "w2"]


def test_shorter_feasible_prefix_of_heaviest_region_set_wins() -> None:
    candidates = [
        detail("a1", "a", 50, score=100), detail("a2", "a", 50), detail("a3", "a", 50),
        detail("b1", "b", 1), detail("b2", "b", 1),
        detail("c1", "c", 1),
    ]
    # scores (share 4 over >= 3 clusters): a 4033, b 2000, c 1000. Feasible for 3 clusters: b+c, a+c, a+b
    # and a alone; a+b is heaviest, and a, its strict prefix, is preferred
    b = binding(4, spread("region", 1, 3), spread("cluster", 3, 3))
    assert select(b, candidates) == ["a1", "a2", "a3"]
