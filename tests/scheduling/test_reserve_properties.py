"""Reserve's guarantee with concurrent passes: however the passes interleave, the replicas reserved on a cluster
never take more than it has. Every pass decides on the assumptions as they stood before any of them reserved
(they all awaited their estimates side by side), then they reserve one after the other in any order; Reserve
keeps a decision whose clusters still have room after what the earlier ones assumed and refuses the others, which
decide again on fresh data, as a pass does. The room is the general estimate made again when it was the only
estimate (`scheduling/reserve/room.py: room_now`), else the estimates' room less the most the later assumptions can take
(`AssumptionCache.taken_since`): an accurate estimator that knows nothing the general estimator does not stands in
for one here."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.estimates import MAX_INT32
from binding_scheduler.algorithm.general_estimator import assumed_profile
from binding_scheduler.algorithm.plugins import CycleState
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import Binding, Cluster, parse_binding
from binding_scheduler.scheduling.framework.runner import Framework
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from testsupport import builders

CLUSTERS = ("m1", "m2", "m3")
REQUESTS: tuple[dict[str, str], ...] = (
    {"cpu": "1"}, {"cpu": "300m"}, {"cpu": "1500m", "memory": "1Gi"}, {"memory": "700Mi"},
    {"cpu": "2", "memory": "3Gi"},
)
STRATEGIES = (builders.AGGREGATED, builders.DYNAMIC_WEIGHT)
"""The strategies that place only what the estimates say fits (Duplicated and static weights do not look)."""


@st.composite
def fleets(draw: st.DrawFn) -> dict[str, dict[str, int]]:
    return {name: {"cpu": draw(st.integers(1, 12)), "memory": draw(st.integers(1, 16)),
                   "pods": draw(st.integers(1, 40))} for name in CLUSTERS}


@st.composite
def workloads(draw: st.DrawFn) -> list[Binding]:
    return [
        builders.make_binding(f"b{i}", namespace="shop", replicas=draw(st.integers(1, 8)),
                              requests=draw(st.sampled_from(REQUESTS)),
                              placement=builders.placement(scheduling=draw(st.sampled_from(STRATEGIES))))
        for i in range(draw(st.integers(2, 8)))
    ]


def snapshot_of(fleet: Mapping[str, Mapping[str, int]]) -> Snapshot:
    return builders.snapshot(*(
        builders.make_cluster(name, allocatable={"cpu": str(size["cpu"]), "memory": f"{size['memory']}Gi",
                                                 "pods": str(size["pods"])})
        for name, size in fleet.items()
    ))


def reserved_on(cache: AssumptionCache, cluster: str) -> dict[str, int]:
    """What every reservation on `cluster` takes together: pods, cpu (milli) and memory (bytes)."""
    total = {"pods": 0, "cpu": 0, "memory": 0}
    for workload in cache.assumed_on(cluster).values():
        profile = assumed_profile(workload)
        total["pods"] += profile.pods
        for name, amount in profile.deducted:
            total[name] += amount
    return total


class Unbounded:
    """An accurate estimator that sets no bound of its own (the general estimate decides; Reserve bounds it)."""

    async def max_available_replicas(self, clusters: Sequence[Cluster], *_: object, **__: object) -> Answer:
        return Answer({cluster.name: MAX_INT32 for cluster in clusters})


@dataclass
class Answer:
    replicas: Mapping[str, int]
    failures: Mapping[str, str] = field(default_factory=dict)


async def side_by_side(fleet: Snapshot, bindings: list[Binding], order: random.Random,
                       estimator: Unbounded | None = None) -> tuple[int, int]:
    """Every binding decides before any reserves, then they reserve in a random order; a refused one decides
    again alone (up to three times). Returns how many were kept at once and how many were refused."""
    cache = AssumptionCache()
    framework = Framework(build_plugins(), assumptions=cache, estimator=estimator)
    decided = []
    for binding in bindings:
        state = CycleState()
        decided.append((binding, await framework.decide(binding, fleet, state), state))
    order.shuffle(decided)
    kept = refused = 0
    for binding, decision, state in decided:
        if decision.clusters is None:
            continue
        if framework.reserve(binding, decision, state) is not None:
            kept += 1
            continue
        refused += 1
        for _ in range(3):
            fresh = CycleState()
            again = await framework.decide(binding, fleet, fresh)
            if again.clusters is None or framework.reserve(binding, again, fresh) is not None:
                break
    for name, size in zip(CLUSTERS, fleet.clusters, strict=True):
        summary = size.resource_summary
        assert summary is not None
        total = reserved_on(cache, name)
        allocatable = summary.allocatable
        assert total["pods"] <= allocatable["pods"].value(), (name, total)
        assert total["cpu"] <= allocatable["cpu"].milli_value(), (name, total)
        assert total["memory"] <= allocatable["memory"].value(), (name, total)
    return kept, refused


@settings(max_examples=150, deadline=None)
@given(fleet=fleets(), bindings=workloads(), seed=st.integers(0, 2**32 - 1))
def test_side_by_side_passes_never_overreserve(
    fleet: dict[str, dict[str, int]], bindings: list[Binding], seed: int
) -> None:
    asyncio.run(side_by_side(snapshot_of(fleet), bindings, random.Random(seed)))


@settings(max_examples=100, deadline=None)
@given(fleet=fleets(), bindings=workloads(), seed=st.integers(0, 2**32 - 1))
def test_parallel_passes_never_reserve_more_than_cluster_has(
    fleet: dict[str, dict[str, int]], bindings: list[Binding], seed: int
) -> None:
    asyncio.run(side_by_side(snapshot_of(fleet), bindings, random.Random(seed), Unbounded()))


@pytest.mark.parametrize("estimator", [None, Unbounded()], ids=["general estimate", "accurate estimator"])
def test_roomy_clusters_keep_every_pass(estimator: Unbounded | None) -> None:
    roomy = {name: {"cpu": 200, "memory": 400, "pods": 500} for name in CLUSTERS}
    bindings: list[Binding] = [
        parse_binding(builders.binding(f"b{i}", namespace="shop", replicas=4, requests={"cpu": "1", "memory": "1Gi"},
                                       placement=builders.placement(scheduling=builders.DYNAMIC_WEIGHT)))
        for i in range(8)
    ]
    kept, refused = asyncio.run(side_by_side(snapshot_of(roomy), bindings, random.Random(7), estimator))
    assert (kept, refused) == (8, 0)
