"""Aggregated and DynamicWeight assignment (Karmada's Test_dynamicScale, Test_dynamicScaleUp and
Test_dynamicDivideReplicas), driven through `assign_replicas`. Expected values are what Karmada's Webster division
gives.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.assign import assign_replicas
from binding_scheduler.algorithm.candidates import ClusterDetail, OrderedCandidates
from binding_scheduler.algorithm.errors import UnschedulableError
from binding_scheduler.model import Binding, TargetCluster
from testsupport.builders import make_binding, make_cluster

DYNAMIC_WEIGHT = {
    "replicaScheduling": {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"},
    }
}
AGGREGATED = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}


def capacity(**allocatable: int) -> list[ClusterDetail]:
    """Selected clusters in keyword order with their estimated (allocatable) replicas."""
    return [
        ClusterDetail(make_cluster(n), allocatable=count, available=count)
        for n, count in allocatable.items()
    ]


def binding(
    replicas: int, placement: dict[str, Any], previous: dict[str, int] | None = None, *, rescheduled: bool = False
) -> Binding:
    return make_binding(
        "web", replicas=replicas, requests={"cpu": "100m"}, placement=placement, clusters=previous or {},
        last_scheduled="2024-01-01T00:00:00Z", reschedule_at="2024-01-02T00:00:00Z" if rescheduled else None,
        resource_uid="",
    )


def as_set(result: list[TargetCluster]) -> dict[str, int]:
    """Karmada's IsScheduleResultEqual compares as a set; so do these tables (order is tested separately)."""
    names = [t.name for t in result]
    assert len(names) == len(set(names)), result
    return {t.name: t.replicas for t in result}


# --- Test_dynamicScale: steady scale down / up with a previous result -----------------------------------------

SCALE_ROWS = [
    ("12->6 dynamic 1:1:1", 6, DYNAMIC_WEIGHT, {"m1": 2, "m2": 4, "m3": 6}, capacity(m1=1, m2=1, m3=1),
     {"m1": 1, "m2": 2, "m3": 3}),
    ("12->24 dynamic 10:10:10", 24, DYNAMIC_WEIGHT, {"m1": 2, "m2": 4, "m3": 6}, capacity(m1=10, m2=10, m3=10),
     {"m1": 6, "m2": 8, "m3": 10}),
    ("12->6 aggregated 1:1:1", 6, AGGREGATED, {"m1": 4, "m2": 8}, capacity(m1=1, m2=1, m3=1), {"m2": 6}),
    ("12->8 aggregated 100:100", 8, AGGREGATED, {"m1": 4, "m2": 8}, capacity(m1=100, m2=100), {"m2": 8}),
    ("12->24 aggregated 4:6:8", 24, AGGREGATED, {"m1": 4, "m2": 8}, capacity(m1=4, m2=6, m3=8),
     {"m1": 7, "m2": 12, "m3": 5}),
    ("12->24 aggregated 6:6:20", 24, AGGREGATED, {"m1": 4, "m2": 8}, capacity(m1=6, m2=6, m3=20),
     {"m1": 10, "m2": 14}),
    ("12->24 aggregated m2 gone m4 new", 24, AGGREGATED, {"m1": 4, "m2": 8}, capacity(m1=4, m3=8, m4=12),
     {"m1": 7, "m3": 7, "m4": 10}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("replicas", "placement", "previous", "selected", "expected"), [row[1:] for row in SCALE_ROWS],
    ids=[row[0] for row in SCALE_ROWS],
)  # fmt: skip
def test_dynamic_scale(
    replicas: int,
    placement: dict[str, Any],
    previous: dict[str, int],
    selected: list[ClusterDetail],
    expected: dict[str, int],
) -> None:
    assert as_set(assign_replicas(binding(replicas, placement, previous), selected)) == expected


@pytest.mark.parametrize("placement", [DYNAMIC_WEIGHT, AGGREGATED], ids=["dynamic", "aggregated"])
def test_scale_up_beyond_capacity_is_unschedulable(placement: dict[str, Any]) -> None:
    previous = {"m1": 2, "m2": 4, "m3": 6}
    with pytest.raises(UnschedulableError) as caught:
        assign_replicas(binding(24, placement, previous), capacity(m1=1, m2=1, m3=1))
    assert str(caught.value) == "failed to scale up: Clusters available replicas 3 are not enough to schedule."


# --- Test_dynamicScaleUp: first schedule --------------------------------------------------------------------

FIRST_ROWS = [
    ("dynamic 6:8:10", DYNAMIC_WEIGHT, capacity(m1=6, m2=8, m3=10), {"m1": 3, "m2": 4, "m3": 5}),
    ("dynamic 8:8:10", DYNAMIC_WEIGHT, capacity(m1=8, m2=8, m3=10), {"m1": 4, "m2": 4, "m3": 4}),
    ("aggregated 6:8:10", AGGREGATED, capacity(m1=6, m2=8, m3=10), {"m2": 5, "m3": 7}),
    ("aggregated 12:8:10", AGGREGATED, capacity(m1=12, m2=8, m3=10), {"m1": 12}),
]


@pytest.mark.parametrize(
    ("placement", "selected", "expected"), [row[1:] for row in FIRST_ROWS], ids=[row[0] for row in FIRST_ROWS]
)
def test_first_schedule(placement: dict[str, Any], selected: list[ClusterDetail], expected: dict[str, int]) -> None:
    assert as_set(assign_replicas(binding(12, placement), selected)) == expected


@pytest.mark.parametrize("placement", [DYNAMIC_WEIGHT, AGGREGATED], ids=["dynamic", "aggregated"])
def test_first_schedule_beyond_capacity_is_unschedulable(placement: dict[str, Any]) -> None:
    with pytest.raises(UnschedulableError) as caught:
        assign_replicas(binding(12, placement), capacity(m1=3, m2=3, m3=3))
    assert str(caught.value) == "failed to scale up: Clusters available replicas 9 are not enough to schedule."


def test_scale_up_forgets_replicas_on_cluster_no_longer_selected() -> None:
    result = assign_replicas(binding(12, DYNAMIC_WEIGHT, {"m1": 6, "m3": 6}), capacity(m1=3, m2=3))
    assert as_set(result) == {"m1": 9, "m2": 3}


# --- Test_dynamicDivideReplicas: Webster on the weights, Aggregated truncation -------------------------------

DIVIDE_ROWS = [
    ("dynamic 18:12:6", DYNAMIC_WEIGHT, capacity(m1=18, m2=12, m3=6), {"m1": 6, "m2": 4, "m3": 2}),
    ("dynamic 20:12:6", DYNAMIC_WEIGHT, capacity(m1=20, m2=12, m3=6), {"m1": 6, "m2": 4, "m3": 2}),
    ("dynamic 6:12:6", DYNAMIC_WEIGHT, capacity(m1=6, m2=12, m3=6), {"m1": 3, "m2": 6, "m3": 3}),
    ("aggregated 12:6:6", AGGREGATED, capacity(m2=12, m1=6, m3=6), {"m2": 12}),
    ("aggregated 6:6:6", AGGREGATED, capacity(m1=6, m2=6, m3=6), {"m1": 6, "m2": 6}),
]


@pytest.mark.parametrize(
    ("placement", "selected", "expected"), [row[1:] for row in DIVIDE_ROWS], ids=[row[0] for row in DIVIDE_ROWS]
)
def test_divide_replicas(placement: dict[str, Any], selected: list[ClusterDetail], expected: dict[str, int]) -> None:
    assert as_set(assign_replicas(binding(12, placement), selected)) == expected


# --- Steady details -----------------------------------------------------------------------------------------


def test_unchanged_replica_count_keeps_previous_result() -> None:
    result = assign_replicas(binding(6, DYNAMIC_WEIGHT, {"m2": 4, "m1": 2}), capacity(m1=0, m2=0, m3=50))
    assert result == [TargetCluster("m2", 4), TargetCluster("m1", 2)]


def test_scale_down_adds_no_new_cluster() -> None:
    result = assign_replicas(binding(3, AGGREGATED, {"m1": 2, "m2": 4}), capacity(m1=0, m2=0, m3=100))
    assert result == [TargetCluster("m2", 3)]


def test_scale_up_adds_to_previous_result() -> None:
    result = assign_replicas(binding(10, DYNAMIC_WEIGHT, {"m1": 5}), capacity(m1=0, m2=5))
    assert as_set(result) == {"m1": 5, "m2": 5}


def test_aggregated_scale_up_prefers_clusters_already_in_use() -> None:
    result = assign_replicas(binding(6, AGGREGATED, {"m1": 3}), capacity(m1=3, m2=100))
    assert result == [TargetCluster("m1", 6)]


def test_aggregated_keeps_candidate_order_between_equal_weights() -> None:
    assert assign_replicas(binding(6, AGGREGATED), capacity(m2=6, m1=6)) == [TargetCluster("m2", 6)]


def test_merge_appends_previous_only_clusters_by_name_ascending() -> None:
    # Target 2 fits on m1 alone, so m3 and m2 keep their replica and follow the new allocation, by name.
    result = assign_replicas(binding(5, AGGREGATED, {"m3": 1, "m1": 1, "m2": 1}), capacity(m1=10, m2=10, m3=10))
    assert result == [TargetCluster("m1", 3), TargetCluster("m2", 1), TargetCluster("m3", 1)]


def test_scale_to_zero_clears_result() -> None:
    assert assign_replicas(binding(0, DYNAMIC_WEIGHT, {"m1": 2, "m2": 4}), capacity(m1=5, m2=5)) == []


# --- Fresh mode (explicit reschedule pending) ---------------------------------------------------------------


def test_fresh_weighs_allocatable_plus_previous_and_does_not_add() -> None:
    result = assign_replicas(
        binding(10, DYNAMIC_WEIGHT, {"m1": 4, "m2": 8}, rescheduled=True), capacity(m1=2, m2=0, m3=6)
    )
    assert as_set(result) == {"m1": 3, "m2": 4, "m3": 3}


def test_fresh_aggregated_does_not_prefer_clusters_in_use() -> None:
    result = assign_replicas(binding(5, AGGREGATED, {"m1": 4}, rescheduled=True), capacity(m1=0, m2=10))
    assert result == [TargetCluster("m2", 5)]


def test_fresh_beyond_capacity_unschedulable() -> None:
    with pytest.raises(UnschedulableError) as caught:
        assign_replicas(binding(30, DYNAMIC_WEIGHT, {"m1": 4}, rescheduled=True), capacity(m1=6, m2=10))
    assert str(caught.value) == "failed to do fresh scale: Clusters available replicas 20 are not enough to schedule."


@pytest.mark.parametrize("placement", [DYNAMIC_WEIGHT, AGGREGATED], ids=["dynamic", "aggregated"])
def test_fresh_scale_from_zero_places_nothing(
    placement: dict[str, Any],
) -> None:
    # Replicas 0: nothing is estimated, every candidate offers MaxInt32. Karmada sums them in int32, which
    # wraps negative for an even count ("Clusters available replicas -2 are not enough to schedule."); we do
    # not wrap (docs/compatibility.md, found by the differential tests).
    most = 2**31 - 1
    for selected in (capacity(m1=most), capacity(m1=most, m2=most), capacity(m1=most, m2=most, m3=most)):
        assert assign_replicas(binding(0, placement, {"m1": 3}, rescheduled=True), selected) == []


def test_reschedule_older_than_last_schedule_is_steady() -> None:
    stale = binding(6, DYNAMIC_WEIGHT, {"m1": 6})
    assert not stale.reschedule_pending
    assert assign_replicas(stale, capacity(m1=0, m2=100)) == [TargetCluster("m1", 6)]


# --- candidates held as columns -------------------------------------------------------------------------------


def held_as_columns(details: list[ClusterDetail]) -> OrderedCandidates:
    """The same candidates as fleet positions with allocatable and name-rank columns, whose objects must not be
    needed."""

    def no_objects() -> list[ClusterDetail]:
        raise AssertionError("the division built the candidates' objects")

    names = tuple(d.name for d in details)
    ranks = np.array([sorted(names).index(name) for name in names], dtype=np.int64)
    allocatable = np.array([d.allocatable for d in details], dtype=np.int64)
    return OrderedCandidates(names, np.arange(len(details), dtype=np.intp), no_objects, allocatable=allocatable,
                             ranks=ranks)


NAMES = [f"m{i:03d}" for i in range(200)]


@settings(max_examples=300, deadline=None)
@given(
    allocatable=st.one_of(st.lists(st.integers(0, 40), min_size=1, max_size=12),
                          st.lists(st.integers(0, 40), min_size=96, max_size=200)),
    order=st.randoms(use_true_random=False),
    replicas=st.integers(1, 400),
    previous=st.lists(st.tuples(st.sampled_from([*NAMES[:8], "gone"]), st.integers(1, 30)), max_size=4),
    placement=st.sampled_from([DYNAMIC_WEIGHT, AGGREGATED]),
    rescheduled=st.booleans(),
    uid=st.sampled_from(["", "uid-1"]),
)
def test_dynamic_division_columns_match_objects(
    allocatable: list[int], order: Any, replicas: int, previous: list[tuple[str, int]], placement: dict[str, Any],
    rescheduled: bool, uid: str,
) -> None:
    details = [ClusterDetail(make_cluster(name), allocatable=count, available=count)
               for name, count in zip(NAMES, allocatable, strict=False)]
    order.shuffle(details)
    rb = make_binding(
        "web", replicas=replicas, requests={"cpu": "100m"}, placement=placement,
        clusters={"m000": 1}, last_scheduled="2024-01-01T00:00:00Z",
        reschedule_at="2024-01-02T00:00:00Z" if rescheduled else None, resource_uid=uid,
    )
    rb = dataclasses.replace(rb, clusters=tuple(TargetCluster(name, count) for name, count in previous))  # repeats
    try:
        expected: list[TargetCluster] | str = assign_replicas(rb, details)
    except UnschedulableError as error:
        expected = str(error)
    try:
        got: list[TargetCluster] | str = assign_replicas(rb, held_as_columns(details))
    except UnschedulableError as error:
        got = str(error)
    assert got == expected


def test_every_candidate_selection_orders_members_once() -> None:
    calls = []

    def order() -> Any:
        calls.append(1)
        return np.array([2, 0, 1], dtype=np.intp)

    selected = OrderedCandidates(("a", "b", "c"), np.arange(3, dtype=np.intp), list, order=order,
                                 allocatable=np.array([5, 6, 7], dtype=np.int64))
    first, again = selected.allocatable_column, selected.allocatable_column
    assert first is not None and again is not None
    assert (selected.names, first.tolist(), again.tolist()) == (["c", "a", "b"], [7, 5, 6], [7, 5, 6])
    assert calls == [1]
