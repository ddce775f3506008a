"""Spread selection over the candidates' columns (`schedule.select`: the order as one lexsort, groups keyed by the
fleet's topology codes, objects built only where selection looks) gives what `select_best_clusters` gives over
the candidates as objects: the same groups, members, group scores and selected clusters, or the same error."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.errors import SchedulingError
from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.schedule import Candidates, needed_replicas, select
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.algorithm.spread import ClusterGroups, group_clusters, select_best_clusters
from binding_scheduler.algorithm.spread.groups import group_ordered
from binding_scheduler.model import Binding, parse_binding, parse_cluster
from testsupport import builders

NAMES = ("b", "a", "m-10", "m-9", "Z", "é", "aa", "m-1", "c", "d")
SPREAD_SETS = (
    ("region",), ("cluster",), ("region", "cluster"), ("zone", "region", "cluster"),
    ("provider", "region"), ("zone", "cluster"), ("zone",),
)
DUPLICATED = {"replicaSchedulingType": "Duplicated"}
DYNAMIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}


@st.composite
def fleets(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=len(NAMES), unique=True))
    return [builders.cluster(
        name,
        provider=draw(st.sampled_from(["", "aws", "gcp"])),
        region=draw(st.sampled_from(["", "r1", "r2", "r3"])),
        zones=draw(st.sampled_from([(), ("z1",), ("z2", "z1"), ("z3",)])),
    ) for name in names]


@st.composite
def spread_bindings(draw: st.DrawFn) -> Binding:
    fields = draw(st.sampled_from(SPREAD_SETS))
    spread = [{"spreadByField": f, "minGroups": draw(st.integers(0, 3)), "maxGroups": draw(st.integers(0, 4))}
              for f in fields]
    duplicated = draw(st.booleans())
    return parse_binding(builders.binding(
        replicas=draw(st.integers(0, 40)),
        placement=builders.placement(spread=spread, scheduling=DUPLICATED if duplicated else DYNAMIC),
    ))


def candidates_over(snapshot: Snapshot, binding: Binding, draw: st.DrawFn) -> Candidates:
    fleet = len(snapshot)
    feasible = np.array(sorted(draw(st.sets(st.integers(0, fleet - 1), max_size=fleet))), dtype=np.intp)
    count = len(feasible)

    def column(low: int, high: int) -> Any:
        return np.array(draw(st.lists(st.integers(low, high), min_size=count, max_size=count)), dtype=np.int64)

    candidates = Candidates(binding, AttemptContext.of(binding, snapshot), feasible, column(0, 2) * 50,
                            column(0, 1))
    allocatable = column(0, 12)
    candidates.estimated(allocatable, allocatable + column(0, 3))
    return candidates


def described(groups: ClusterGroups) -> list[Any]:
    return [[c.name for c in groups.clusters]] + [
        [(g.name, [c.name for c in g.clusters], g.available, g.score) for g in kind.values()]
        for kind in (groups.zones, groups.regions, groups.providers)
    ]


@settings(max_examples=400, deadline=None)
@given(docs=fleets(), binding=spread_bindings(), data=st.data())
def test_grouping_over_columns_gives_groups_of_objects(
    docs: list[dict[str, Any]], binding: Binding, data: st.DataObject
) -> None:
    snapshot = Snapshot(parse_cluster(doc) for doc in docs)
    candidates = candidates_over(snapshot, binding, data.draw)
    over_columns = described(group_ordered(binding, candidates.ordered_clusters()))
    assert over_columns == described(group_clusters(binding, candidates.details))


@settings(max_examples=400, deadline=None)
@given(docs=fleets(), binding=spread_bindings(), data=st.data())
def test_column_selection_matches_object_selection(
    docs: list[dict[str, Any]], binding: Binding, data: st.DataObject
) -> None:
    snapshot = Snapshot(parse_cluster(doc) for doc in docs)
    candidates = candidates_over(snapshot, binding, data.draw)
    try:
        got: object = list(select(candidates))  # first: the objects it selects are built one by one
    except SchedulingError as error:
        got = str(error)
    try:
        expected: object = select_best_clusters(binding, candidates.details, needed_replicas(binding))
    except SchedulingError as error:
        expected = f"failed to select clusters: {error}"
    assert got == expected
