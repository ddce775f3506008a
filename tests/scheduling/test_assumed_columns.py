"""The assumption cache's sums as columns (`AssumptionCache.at`, `assumed_columns`) answer as the per-cluster loads
(`AssumptionCache.others`) do: the same general estimates with the others' assumptions deducted, the same loads one
by one, the same versions, whatever was assumed, refreshed, released or restored before; and sums too large for
int64 stay exact."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.general_estimator import AssumedLoad
from binding_scheduler.algorithm.schedule import ScheduleOptions, general_column
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import Binding, TargetCluster, parse_binding
from binding_scheduler.scheduling.state.assumed_columns import SAFE, AssumedColumns
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from tests.algorithm.general_estimator_builders import cluster, grade
from testsupport import builders

NAMES = tuple(f"m{i}" for i in range(7))
BINDINGS = ("own", "own", "b1", "b2", "b3")
REQUESTS = ({"cpu": "500m"}, {"cpu": "1", "memory": "1Gi"}, {"memory": "2Ei"}, {}, {"cpu": "0"}, {"gpu": "1"},
            {"memory": "16Ei"})
GATE = ScheduleOptions(multiple_pod_templates=True)


@st.composite
def fleets(draw: st.DrawFn) -> Snapshot:
    clusters = []
    for name in NAMES:
        kind = draw(st.sampled_from(["summary", "summary", "summary", "summary", "none", "models"]))
        if kind == "none":
            clusters.append(cluster(name, summary=False))
            continue
        allocatable: dict[str, Any] = {"pods": str(draw(st.integers(0, 60)))}
        for resource, values in (("cpu", ["4", "16", "500m"]), ("memory", ["8Gi", "7Ei"]), ("gpu", ["2"])):
            if draw(st.booleans()):
                allocatable[resource] = draw(st.sampled_from(values))
        allocated = {"pods": str(draw(st.integers(0, 10)))}
        if kind == "models":
            clusters.append(cluster(name, allocatable=allocatable, allocated=allocated,
                                    models=[grade(0, cpu="1", memory="4Gi"), grade(1, cpu="4", memory="16Gi")],
                                    modelings=[(0, draw(st.integers(0, 3))), (1, draw(st.integers(0, 2)))]))
        else:
            clusters.append(cluster(name, allocatable=allocatable, allocated=allocated))
    return Snapshot(clusters)


def workload(name: str, draw: st.DrawFn, multi: bool) -> Binding:
    requests = draw(st.sampled_from(REQUESTS))
    if multi:
        components = [{"name": f"c{i}", "replicas": draw(st.integers(0, 3)),
                       "replicaRequirements": {"resourceRequest": draw(st.sampled_from(REQUESTS))}}
                      for i in range(draw(st.integers(1, 2)))]
        return parse_binding(builders.binding(name, namespace="shop", replicas=0, components=components))
    return parse_binding(builders.binding(name, namespace="shop", replicas=draw(st.integers(1, 9)),
                                          requests=requests or None))


@st.composite
def histories(draw: st.DrawFn) -> tuple[AssumptionCache, Binding, bool]:
    """A cache after a run of assumes, refreshes, releases and restores, and the binding that decides next."""
    clock = [1000.0]
    cache = AssumptionCache(clock=lambda: clock[0])
    multi = draw(st.booleans())
    for _ in range(draw(st.integers(0, 20))):
        key = draw(st.sampled_from(BINDINGS))
        action = draw(st.sampled_from(["assume", "assume", "assume", "release_cluster", "release", "restore",
                                       "later"]))
        subject = workload(key, draw, draw(st.booleans()))
        if action == "assume":
            clusters = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=len(NAMES)))
            result = [TargetCluster(c, draw(st.integers(0, 4))) for c in clusters]
            cache.assume(subject, result, multi_template=bool(subject.components))
        elif action == "release_cluster":
            cache.release_cluster(subject.key, draw(st.sampled_from(NAMES)))
        elif action == "release":
            cache.release(subject.key)
        elif action == "restore":
            previous = cache.assume(subject, [TargetCluster(draw(st.sampled_from(NAMES)), 2)], multi_template=False)
            cache.restore(subject, previous)
        else:
            clock[0] += draw(st.sampled_from([10.0, 200.0, 301.0]))
    return cache, workload("own", draw, multi), multi


def as_tuple(load: AssumedLoad, listed: bool) -> tuple[Any, ...]:
    return (len(load), load.pods, sorted(load.deducted), load.set_pods, sorted(load.set_deducted),
            load.workloads if listed else None)


@settings(max_examples=400, deadline=None)
@given(snapshot=fleets(), history=histories(), data=st.data())
def test_columns_give_what_loads_give(
    snapshot: Snapshot, history: tuple[AssumptionCache, Binding, bool], data: st.DataObject
) -> None:
    cache, binding, multi = history
    fleet = snapshot.columns
    indices = np.array(sorted(data.draw(st.sets(st.integers(0, len(NAMES) - 1)))), dtype=np.intp)
    names = [fleet.names[i] for i in indices.tolist()]
    modelled = {c.name for c in snapshot.clusters if c.resource_summary is not None
                and c.resource_summary.allocatable_modelings}
    listed = data.draw(st.sampled_from([True, False]))
    wanted = True if listed else modelled.__contains__
    options = GATE if multi else ScheduleOptions()

    loads, versions = cache.others(binding, names, workloads=wanted)
    at = cache.at(binding, fleet, indices, workloads=wanted)

    by_columns = general_column(binding, indices, snapshot, options, at.columns).tolist()
    by_loads = general_column(binding, indices, snapshot, options, loads).tolist()
    assert by_columns == by_loads
    assert {n: as_tuple(v, listed or n in modelled) for n, v in at.loads.items()} == {
        n: as_tuple(v, listed or n in modelled) for n, v in loads.items()}
    assert {n: at.versions[n] for n in names} == versions
    assert cache.unchanged(at.versions, names)


def test_int64_overflow_turns_column_to_ints() -> None:
    columns = AssumedColumns(capacity=4)
    big = parse_binding(builders.binding("big", namespace="shop", replicas=3, requests={"memory": "2Ei"}))
    cache = AssumptionCache()
    cache.assume(big, [TargetCluster("m1", 3)], multi_template=False)
    group = cache._by_binding["shop/big"].groups[0]
    slots = columns.slots(["m1", "m2"])
    for _ in range(3):
        columns.add(slots, group.profile, 1)
    amount = dict(group.profile.deducted)["memory"]
    assert amount * 3 > SAFE
    assert columns.deducted["memory"].values.dtype == object
    assert columns.deducted["memory"].values[slots].tolist() == [3 * amount, 3 * amount]


def test_columns_grow_keeping_sums() -> None:
    cache = AssumptionCache()
    web = parse_binding(builders.binding("web", namespace="shop", replicas=2, requests={"cpu": "1"}))
    many = [TargetCluster(f"m{i}", 2) for i in range(600)]
    cache.assume(web, many, multi_template=False)
    other = parse_binding(builders.binding("api", namespace="shop", replicas=1, requests={"cpu": "1"}))
    loads, _ = cache.others(other, [t.name for t in many])
    assert {(len(v), v.pods, v.deducted) for v in loads.values()} == {(1, 2, (("cpu", 2000),))}
    assert len(loads) == 600


def test_on_column_path_binding_is_not_deducted_own_assumption() -> None:
    snapshot = Snapshot([cluster("m1", allocatable={"pods": "100", "cpu": "4"})])
    cache = AssumptionCache()
    web = parse_binding(builders.binding("web", namespace="shop", replicas=2, requests={"cpu": "1"}))
    api = parse_binding(builders.binding("api", namespace="shop", replicas=1, requests={"cpu": "1"}))
    cache.assume(web, [TargetCluster("m1", 2)], multi_template=False)
    cache.assume(api, [TargetCluster("m1", 1)], multi_template=False)
    indices = np.array([0], dtype=np.intp)
    at = cache.at(web, snapshot.columns, indices, workloads=False)
    assert general_column(web, indices, snapshot, ScheduleOptions(), at.columns).tolist() == [3]


def test_footprints_on_same_clusters_share_one_slot_array() -> None:
    cache = AssumptionCache()
    fleet = [TargetCluster(f"m{i}", 1) for i in range(20)]
    first, second, other = (parse_binding(builders.binding(name, namespace="shop", replicas=1))
                            for name in ("first", "second", "other"))
    cache.assume(first, fleet, multi_template=False)
    cache.assume(second, fleet, multi_template=False)
    cache.assume(other, fleet[1:], multi_template=False)

    slots = [cache._by_binding[key].groups[0].slots for key in ("shop/first", "shop/second", "shop/other")]

    assert slots[0] is slots[1]
    assert slots[2] is not slots[0]
    assert slots[0].tolist() == list(range(20)) and slots[2].tolist() == list(range(1, 20))
    assert not slots[0].flags.writeable
    cache.release("shop/first")
    cache.release("shop/second")
    del slots
    assert list(cache._columns._held.values()) == [cache._by_binding["shop/other"].groups[0].slots]
