"""The `select_best_clusters` entry: when constraints apply, capacity rules, dispatch and the trace (Karmada's
pkg/scheduler/core/spreadconstraint/select_clusters.go: SelectBestClusters)."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.algorithm.candidates import ClusterDetail
from binding_scheduler.algorithm.errors import SchedulingError
from binding_scheduler.algorithm.spread import select_best_clusters
from binding_scheduler.model import Binding
from testsupport.builders import make_binding, make_cluster

AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
WEIGHTED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
UNSUPPORTED = "just support cluster and region spread constraint"


def detail(name: str, available: int, score: int = 0, region: str = "", zone: str = "") -> ClusterDetail:
    cluster = make_cluster(name, region=region, provider="aws", zones=[zone] if zone else [])
    return ClusterDetail(cluster, score=score, allocatable=available, available=available)


def binding(replicas: int, placement: dict[str, Any] | None) -> Binding:
    return make_binding("nginx", replicas=replicas, placement=placement)


def select(b: Binding, trace: list[str] | None = None) -> list[str]:
    return [c.name for c in select_best_clusters(b, FLEET, b.replicas, trace)]


def error_of(b: Binding) -> str:
    with pytest.raises(SchedulingError) as caught:
        select(b)
    return str(caught.value)


FLEET = [
    detail("c", 5, region="west", zone="west-a"),
    detail("a", 5, region="east", zone="east-a"),
    detail("d", 50, region="west", zone="west-b"),
    detail("b", 1, score=100, region="east", zone="east-b"),
]
ALL_SORTED = ["b", "d", "a", "c"]
ONE_CLUSTER = {"spreadByField": "cluster", "maxGroups": 1}


def test_no_placement_selects_every_cluster_best_first() -> None:
    assert select(binding(3, None)) == ALL_SORTED


def test_no_spread_constraints_select_every_cluster_best_first() -> None:
    assert select(binding(3, {"replicaScheduling": AGGREGATED})) == ALL_SORTED


def test_weightless_weighted_ignores_spread() -> None:
    assert select(binding(3, {"replicaScheduling": WEIGHTED, "spreadConstraints": [ONE_CLUSTER]})) == ALL_SORTED


def test_dynamic_weight_applies_spread_constraints() -> None:
    scheduling = {**WEIGHTED, "weightPreference": {"dynamicWeight": "AvailableReplicas"}}
    assert select(binding(3, {"replicaScheduling": scheduling, "spreadConstraints": [ONE_CLUSTER]})) == ["d"]


def test_dynamic_weight_list_applies_spread() -> None:
    weights = {
        "staticWeightList": [{"targetCluster": {"clusterNames": ["a"]}, "weight": 1}],
        "dynamicWeight": "AvailableReplicas",
    }
    scheduling = {**WEIGHTED, "weightPreference": weights}
    assert select(binding(1, {"replicaScheduling": scheduling, "spreadConstraints": [ONE_CLUSTER]})) == ["b"]


def test_empty_weight_preference_applies_spread_constraints() -> None:
    scheduling = {**WEIGHTED, "weightPreference": {}}
    assert select(binding(1, {"replicaScheduling": scheduling, "spreadConstraints": [ONE_CLUSTER]})) == ["b"]


def test_spread_by_label_is_not_supported() -> None:
    placement = {"replicaScheduling": AGGREGATED, "spreadConstraints": [{"spreadByLabel": "team", "maxGroups": 2}]}
    assert error_of(binding(3, placement)) == UNSUPPORTED


def test_zone_constraint_alone_is_not_supported() -> None:
    placement = {"replicaScheduling": AGGREGATED, "spreadConstraints": [{"spreadByField": "zone", "maxGroups": 2}]}
    assert error_of(binding(3, placement)) == UNSUPPORTED


def test_provider_constraint_alone_is_not_supported() -> None:
    placement = {
        "replicaScheduling": AGGREGATED,
        "spreadConstraints": [{"spreadByField": "provider", "maxGroups": 1}],
    }
    assert error_of(binding(3, placement)) == UNSUPPORTED


def test_zone_and_provider_together_are_not_supported() -> None:
    placement = {
        "replicaScheduling": AGGREGATED,
        "spreadConstraints": [{"spreadByField": "zone", "maxGroups": 2}, {"spreadByField": "provider", "maxGroups": 1}],
    }
    assert error_of(binding(3, placement)) == UNSUPPORTED


def test_zone_beside_cluster_selects_by_cluster() -> None:
    placement = {
        "replicaScheduling": AGGREGATED,
        "spreadConstraints": [{"spreadByField": "zone", "maxGroups": 4}, {"spreadByField": "cluster", "maxGroups": 2}],
    }
    assert select(binding(3, placement)) == ["b", "d"]


def test_label_spread_beside_cluster_spread_selects_by_cluster() -> None:
    placement = {
        "replicaScheduling": AGGREGATED,
        "spreadConstraints": [{"spreadByLabel": "team", "maxGroups": 4}, {"spreadByField": "cluster", "maxGroups": 2}],
    }
    assert select(binding(3, placement)) == ["b", "d"]


def test_candidates_in_any_order_give_same_selection() -> None:
    two = {"spreadByField": "cluster", "maxGroups": 2}
    b = binding(3, {"replicaScheduling": AGGREGATED, "spreadConstraints": [two]})
    forward = select_best_clusters(b, FLEET, 3)
    backward = select_best_clusters(b, list(reversed(FLEET)), 3)
    assert [c.name for c in forward] == [c.name for c in backward] == ["b", "d"]


def test_trace_tells_groups_region_path_and_selection() -> None:
    placement = {
        "replicaScheduling": AGGREGATED,
        "spreadConstraints": [{"spreadByField": "region", "minGroups": 1, "maxGroups": 1},
                              {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}],
    }
    trace: list[str] = []
    assert select(binding(10, placement), trace) == ["d", "c"]
    assert trace == [
        "region east: 2 clusters (b, a), room for 6 replicas, score 6050 (6 replicas of its share (the replicas over "
        "minGroups) it can take x 1000 + its clusters' mean score 50)",
        "region west: 2 clusters (d, c), room for 55 replicas, score 10000 (10 replicas of its share (the replicas "
        "over minGroups) it can take x 1000 + its clusters' mean score 0)",
        "2 combinations of 1 region hold at least 1 cluster (the region spread's minGroups and maxGroups, the "
        "cluster spread's minGroups)",
        "best: west, the highest total score (10000, the sum of its regions' scores)",
        "chosen regions west: the best cluster of each (d (west)), then 1 more of the 1 left in them, up to the "
        "cluster spread's maxGroups (2)",
        "selected: d, c",
    ]


def test_trace_tells_each_capacity_swap() -> None:
    placement = {"replicaScheduling": AGGREGATED, "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1}]}
    trace: list[str] = []
    assert select(binding(10, placement), trace) == ["d"]
    assert trace == [
        "cluster spread: the best 1 of 4 clusters by score (minGroups 1, maxGroups 1)",
        "not room enough for 10 replicas: b (room for 1) gives its place to d (room for 50)",
        "selected: d",
    ]


def test_trace_tells_when_every_cluster_is_selected() -> None:
    trace: list[str] = []
    select(binding(3, None), trace)
    assert trace == ["no spread constraints: all 4 feasible clusters selected"]


def test_trace_of_one_feasible_region_says_it_was_only_one() -> None:
    placement = {
        "replicaScheduling": AGGREGATED,
        "spreadConstraints": [{"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
                              {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 4}],
    }
    trace: list[str] = []
    select(binding(10, placement), trace)
    assert trace[2:4] == [
        "1 combination of 2 regions holds at least 2 clusters (the region spread's minGroups and maxGroups, the "
        "cluster spread's minGroups)",
        "best: east, west, the only one (total score 10050, the sum of its regions' scores)",
    ]
