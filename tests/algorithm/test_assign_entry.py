"""The AssignReplicas entry (Karmada's pkg/scheduler/core/common.go: AssignReplicas; TestAssignReplicas and
Test_assignByDuplicatedStrategy): which path, which strategy, overflow tiers and the error texts and kinds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from binding_scheduler.algorithm.assign import Strategy, assign_replicas, select_strategy
from binding_scheduler.algorithm.candidates import ClusterDetail
from binding_scheduler.algorithm.errors import SchedulingError, UnschedulableError
from binding_scheduler.model import (
    Binding,
    Placement,
    ReplicaScheduling,
    ReplicaSchedulingType,
    TargetCluster,
)
from testsupport.builders import make_binding, make_cluster, term

DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
STATIC = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}
DYNAMIC_WEIGHT = {
    "replicaScheduling": {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"},
    }
}
AGGREGATED = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}


def detail(name: str, allocatable: int = 0, *, available: int | None = None, tier: int = 0) -> ClusterDetail:
    return ClusterDetail(
        make_cluster(name),
        allocatable=allocatable,
        available=allocatable if available is None else available,
        overflow_order=tier,
    )


def binding(
    replicas: int,
    placement: dict[str, Any] | None,
    previous: dict[str, int] | None = None,
    *,
    requirements: bool = True,
    components: int = 0,
    observed: str = "",
) -> Binding:
    return make_binding(
        "web", replicas=replicas, requests={"cpu": "100m"} if requirements else None,
        components=[{"name": f"c{i}", "replicas": 1} for i in range(components)], placement=placement,
        clusters=previous or {}, observed_affinity=observed, resource_uid="",
    )


def with_overflow(strategy: dict[str, Any], *, overflow: bool = True) -> dict[str, Any]:
    """A placement whose term `primary` (clusters m1, m2) overflows to `backup` (m3, m4) when asked."""
    backup = [term("backup", "m3", "m4")] if overflow else []
    return {"clusterAffinities": [term("primary", "m1", "m2", overflow=backup)], **strategy}


# --- 2.8 entry ---------------------------------------------------------------------------------------------


def test_no_selected_cluster_is_scheduler_error() -> None:
    with pytest.raises(SchedulingError) as caught:
        assign_replicas(binding(3, DYNAMIC_WEIGHT), [])
    assert str(caught.value) == "no clusters available to schedule"
    assert not isinstance(caught.value, UnschedulableError)


def test_single_cluster_gets_every_replica() -> None:
    assert assign_replicas(binding(3, DYNAMIC_WEIGHT), [detail("m1", 10)]) == [TargetCluster("m1", 3)]


def test_non_workload_lists_selected_clusters_in_order() -> None:
    selected = [detail("m2"), detail("m1"), detail("m3")]
    result = assign_replicas(binding(0, DYNAMIC_WEIGHT, requirements=False), selected)
    assert result == [TargetCluster("m2", 0), TargetCluster("m1", 0), TargetCluster("m3", 0)]


def test_non_workload_skips_strategy_check() -> None:
    assert assign_replicas(unsupported(binding(0, None, requirements=False)), [detail("m1")]) == [TargetCluster("m1")]


def test_multi_component_workload_gets_cluster_names_only() -> None:
    result = assign_replicas(binding(4, DYNAMIC_WEIGHT, components=2), [detail("m1", 10), detail("m2", 10)])
    assert result == [TargetCluster("m1", 0), TargetCluster("m2", 0)]


def test_single_component_workload_is_divided_by_spec_replicas() -> None:
    result = assign_replicas(binding(4, DYNAMIC_WEIGHT, components=1), [detail("m1", 10), detail("m2", 10)])
    assert result == [TargetCluster("m1", 2), TargetCluster("m2", 2)]


def test_workload_scaled_to_zero_gets_empty_result() -> None:
    assert assign_replicas(binding(0, DYNAMIC_WEIGHT, {"m1": 3}), [detail("m1", 10)]) == []


# --- 2.9.1 strategy selection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("placement", "expected"),
    [
        (None, Strategy.DUPLICATED),
        ({}, Strategy.DUPLICATED),
        (DUPLICATED, Strategy.DUPLICATED),
        (AGGREGATED, Strategy.AGGREGATED),
        (DYNAMIC_WEIGHT, Strategy.DYNAMIC_WEIGHT),
        (STATIC, Strategy.STATIC_WEIGHT),
        ({"replicaScheduling": {}}, Strategy.STATIC_WEIGHT),
    ],
    ids=["no-placement", "no-replicaScheduling", "duplicated", "aggregated", "dynamic", "weighted", "defaults"],
)
def test_strategy_selection(placement: dict[str, Any] | None, expected: Strategy) -> None:
    assert select_strategy(binding(1, placement)) is expected


def unsupported(base: Binding) -> Binding:
    """Divided with no division preference: the webhook never lets this through, the model can carry it."""
    scheduling = ReplicaScheduling(type=ReplicaSchedulingType.DIVIDED, division_preference=None)
    return dataclasses.replace(base, placement=Placement(replica_scheduling=scheduling))


def test_divided_without_preference_is_unsupported_strategy() -> None:
    with pytest.raises(SchedulingError) as caught:
        assign_replicas(unsupported(binding(2, None)), [detail("m1", 10)])
    assert str(caught.value) == (
        "unsupported replica scheduling strategy, replicaSchedulingType: Divided, "
        "replicaDivisionPreference: , please try another scheduling strategy"
    )
    assert not isinstance(caught.value, UnschedulableError)


# --- 2.9.2 Duplicated --------------------------------------------------------------------------------------


def test_duplicated_gives_all_replicas_everywhere() -> None:
    result = assign_replicas(binding(2, DUPLICATED), [detail("cluster2"), detail("cluster1")])
    assert result == [TargetCluster("cluster2", 2), TargetCluster("cluster1", 2)]


def test_missing_placement_means_duplicated() -> None:
    result = assign_replicas(binding(2, None), [detail("cluster1"), detail("cluster2")])
    assert result == [TargetCluster("cluster1", 2), TargetCluster("cluster2", 2)]


def test_duplicated_with_zero_replicas_gives_empty_result() -> None:
    assert assign_replicas(binding(0, DUPLICATED), [detail("cluster1"), detail("cluster2")]) == []


def test_duplicated_ignores_capacity() -> None:
    assert assign_replicas(binding(5, DUPLICATED), [detail("m1", 0)]) == [TargetCluster("m1", 5)]


# --- 2.9.6 overflow tiers ----------------------------------------------------------------------------------


def overflow_fleet() -> list[ClusterDetail]:
    return [detail("m1", 4, tier=0), detail("m2", 4, tier=0), detail("m3", 10, tier=1), detail("m4", 10, tier=1)]


def test_overflow_not_needed_stays_in_primary_tier() -> None:
    result = assign_replicas(binding(6, with_overflow(DYNAMIC_WEIGHT), observed="primary"), overflow_fleet())
    assert result == [TargetCluster("m1", 3), TargetCluster("m2", 3)]


def test_overflow_spills_rest_into_next_tier() -> None:
    result = assign_replicas(binding(12, with_overflow(DYNAMIC_WEIGHT), observed="primary"), overflow_fleet())
    assert result == [TargetCluster("m1", 4), TargetCluster("m2", 4), TargetCluster("m3", 2), TargetCluster("m4", 2)]


def test_overflow_exhausted_is_unschedulable() -> None:
    with pytest.raises(UnschedulableError) as caught:
        assign_replicas(binding(40, with_overflow(DYNAMIC_WEIGHT), observed="primary"), overflow_fleet())
    assert str(caught.value) == "Clusters available replicas are not enough to schedule."


def test_overflow_tier_capacity_counts_replicas_already_assigned() -> None:
    # m1 already runs 8 and can take 2 more: tier 0 holds 10, so 2 spill into tier 1.
    selected = [detail("m1", 2, available=10, tier=0), detail("m3", 10, tier=1)]
    result = assign_replicas(binding(12, with_overflow(AGGREGATED), {"m1": 8}, observed="primary"), selected)
    assert result == [TargetCluster("m1", 10), TargetCluster("m3", 2)]


def test_overflow_scale_down_shrinks_higher_tier_first() -> None:
    selected = [detail("m1", 0, available=10, tier=0), detail("m3", 8, available=10, tier=1)]
    placement = with_overflow(AGGREGATED)
    result = assign_replicas(binding(10, placement, {"m1": 10, "m3": 2}, observed="primary"), selected)
    assert result == [TargetCluster("m1", 10)]


def test_overflow_tiers_fill_in_order() -> None:
    selected = [detail("m3", 10, tier=1), detail("m1", 4, tier=0)]
    result = assign_replicas(binding(6, with_overflow(DYNAMIC_WEIGHT), observed="primary"), selected)
    assert result == [TargetCluster("m1", 4), TargetCluster("m3", 2)]


def test_no_overflow_without_observed_term() -> None:
    result = assign_replicas(binding(12, with_overflow(DYNAMIC_WEIGHT)), overflow_fleet())
    assert sorted(result, key=lambda t: t.name) == [
        TargetCluster("m1", 2),
        TargetCluster("m2", 2),
        TargetCluster("m3", 4),
        TargetCluster("m4", 4),
    ]


def test_no_overflow_without_overflow_terms() -> None:
    placement = with_overflow(DYNAMIC_WEIGHT, overflow=False)
    with pytest.raises(UnschedulableError) as caught:
        assign_replicas(binding(40, placement, observed="primary"), overflow_fleet())
    assert str(caught.value) == "failed to scale up: Clusters available replicas 28 are not enough to schedule."


def test_no_overflow_when_observed_term_is_not_in_placement() -> None:
    with pytest.raises(UnschedulableError) as caught:
        assign_replicas(binding(40, with_overflow(DYNAMIC_WEIGHT), observed="gone"), overflow_fleet())
    assert str(caught.value).startswith("failed to scale up: ")
