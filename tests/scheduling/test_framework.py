"""The framework: `decide`'s affinity walk over attempts (Karmada's pkg/scheduler/scheduler.go:
scheduleResourceBindingWithClusterAffinities), the accurate estimator asked between filtering and selection, Reserve
and its assumptions, and the one runner every extension point's plugins go through."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from binding_scheduler.algorithm.candidates import ClusterDetail
from binding_scheduler.algorithm.errors import SchedulingError, UnschedulableError
from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.algorithm.plugins import AttemptContext, CycleState, PluginError
from binding_scheduler.algorithm.registry import PluginSet, build_plugins
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.algorithm.walk import Decision
from binding_scheduler.model import (
    Binding,
    Cluster,
    ObjectReference,
    ReplicaRequirements,
    TargetCluster,
    parse_cluster,
)
from binding_scheduler.scheduling.framework.hooks import ExtensionPoint, FrameworkHook
from binding_scheduler.scheduling.framework.record import AttemptRecord, AttemptRecorder
from binding_scheduler.scheduling.framework.runner import Framework
from binding_scheduler.scheduling.observability.labels import PluginResult
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from testsupport.builders import AGGREGATED, DUPLICATED, cluster, make_binding, make_cluster, placement, snapshot, term

CAPACITY = {"cpu": "8", "pods": "110"}
FIT_M1 = "0/3 clusters are available: 3 cluster(s) did not match the placement cluster affinity constraint."


@dataclass
class Answer:
    replicas: Mapping[str, int]
    failures: Mapping[str, str] = field(default_factory=dict)


@dataclass
class FakeEstimator:
    """Answers a fixed number of replicas per cluster and remembers which clusters it was asked about."""

    answers: Mapping[str, int]
    asked: list[list[str]] = field(default_factory=list)
    assumed: list[dict[str, Sequence[AssumedWorkload]]] = field(default_factory=list)

    async def max_available_replicas(
        self,
        clusters: Sequence[Cluster],
        requirements: ReplicaRequirements | None,
        *,
        resource: ObjectReference | None = None,
        assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    ) -> Answer:
        self.asked.append([c.name for c in clusters])
        self.assumed.append(dict(assumed or {}))
        return Answer({c.name: self.answers[c.name] for c in clusters if c.name in self.answers})


SNAPSHOT = snapshot(*(make_cluster(n, allocatable=CAPACITY) for n in ("m1", "m2", "m3")))


async def decide_binding(
    binding: Binding, snapshot: Snapshot, plugins: PluginSet, estimator: Any = None,
    records: list[AttemptRecord] | None = None, hooks: Sequence[FrameworkHook] = (),
) -> Decision:
    recorder = AttemptRecorder()
    framework = Framework(plugins, estimator=estimator, hooks=[recorder, *hooks])
    decision = await framework.decide(binding, snapshot)
    if records is not None:
        records.extend(recorder.records)
    return decision


async def test_no_placement_is_error_and_nothing_is_written() -> None:
    decision = await decide_binding(make_binding("foo", namespace="ns"), SNAPSHOT, build_plugins())
    assert (decision.clusters, decision.affinity_name) == (None, None)
    assert str(decision.error) == "failed to get placement from resourceBinding(ns/foo)"


async def test_no_placement_on_cluster_binding_names_it() -> None:
    decision = await decide_binding(make_binding("foo", cluster_scoped=True), SNAPSHOT, build_plugins())
    assert str(decision.error) == "failed to get placement from clusterResourceBinding(foo)"


async def test_duplicated_non_workload_goes_everywhere() -> None:
    rb = make_binding(placement=placement(scheduling=DUPLICATED))
    decision = await decide_binding(rb, SNAPSHOT, build_plugins())
    assert decision.error is None
    assert set(decision.clusters or ()) == {TargetCluster("m1"), TargetCluster("m2"), TargetCluster("m3")}


async def test_walk_falls_back_to_next_term() -> None:
    rb = make_binding("foo", namespace="default", replicas=2, requests={"cpu": "1"},
                      placement=placement(affinities=[term("a", "gone"), term("b", "m2")], scheduling=AGGREGATED))
    decision = await decide_binding(rb, SNAPSHOT, build_plugins())
    assert decision == Decision(
        (TargetCluster("m2", 2),),
        "b",
        None,
        (f"failed to schedule ResourceBinding(default/foo) with clusterAffiliates index(0): {FIT_M1}",),
        1,
    )


async def test_walk_stops_at_first_success() -> None:
    rb = make_binding(replicas=1, requests={"cpu": "1"},
                      placement=placement(affinities=[term("a", "m1"), term("b", "m2")], scheduling=AGGREGATED))
    records: list[AttemptRecord] = []
    decision = await decide_binding(rb, SNAPSHOT, build_plugins(), records=records)
    assert decision.clusters == (TargetCluster("m1", 1),)
    assert [r.binding.status.scheduler_observing_affinity_name for r in records] == ["a"]


async def test_every_term_failing_clears_clusters() -> None:
    rb = make_binding(replicas=1, placement=placement(affinities=[term("a", "x"), term("b", "y")]))
    decision = await decide_binding(rb, SNAPSHOT, build_plugins())
    assert (decision.clusters, decision.affinity_name, str(decision.error), len(decision.warnings)) == (
        (), None, FIT_M1, 2,
    )


async def test_accurate_estimator_asked_about_feasible_clusters() -> None:
    rb = make_binding(replicas=4, requests={"cpu": "1"},
                      placement=placement(affinity={"clusterNames": ["m1", "m2"]}, scheduling=AGGREGATED))
    estimator = FakeEstimator({"m1": 1, "m2": 3})
    records: list[AttemptRecord] = []
    decision = await decide_binding(rb, SNAPSHOT, build_plugins(), estimator, records=records)
    assert estimator.asked == [["m1", "m2"]]
    assert set(decision.clusters or ()) == {TargetCluster("m1", 1), TargetCluster("m2", 3)}
    (record,) = records
    assert (dict(record.general), dict(record.accurate)) == ({"m1": 8, "m2": 8}, {"m1": 1, "m2": 3})


async def test_estimator_is_not_asked_for_non_workload() -> None:
    estimator = FakeEstimator({})
    rb = make_binding(placement=placement(scheduling=DUPLICATED))
    await decide_binding(rb, SNAPSHOT, build_plugins(), estimator)
    assert estimator.asked == []


async def test_estimator_is_not_asked_when_nothing_fits() -> None:
    estimator = FakeEstimator({})
    rb = make_binding(replicas=1, placement=placement(affinity={"clusterNames": ["x"]}))
    decision = await decide_binding(rb, SNAPSHOT, build_plugins(), estimator)
    assert (estimator.asked, decision.clusters) == ([], ())


async def test_not_enough_capacity_is_unschedulable_and_writes_nothing() -> None:
    rb = make_binding(replicas=10, requests={"cpu": "1"},
                      placement=placement(affinity={"clusterNames": ["m1"]}, scheduling=AGGREGATED))
    decision = await decide_binding(rb, SNAPSHOT, build_plugins(), FakeEstimator({"m1": 2}))
    assert decision.clusters is None
    assert type(decision.error).__name__ == "UnschedulableError"


# --- Reserve: overcommit protection ------------------------------------------------------------------------

FOUR_CPUS = {"cpu": "4", "pods": "110"}


def tight_fleet() -> Snapshot:
    return snapshot(*(make_cluster(n, allocatable=FOUR_CPUS) for n in ("m1", "m2")))


def aggregated(name: str, replicas: int, clusters: Sequence[str] = ("m1", "m2")) -> Binding:
    return make_binding(name, namespace="shop", replicas=replicas, requests={"cpu": "1"},
                        placement=placement(affinity={"clusterNames": list(clusters)}, scheduling=AGGREGATED))


async def decide_and_reserve(framework: Framework, binding: Binding, fleet: Snapshot) -> Decision:
    state = CycleState()
    decision = await framework.decide(binding, fleet, state)
    assert framework.reserve(binding, decision, state) is not None
    return decision


async def test_reserved_decision_deducted_from_next() -> None:
    framework = Framework(build_plugins(), assumptions=AssumptionCache())
    fleet = tight_fleet()
    first = await decide_and_reserve(framework, aggregated("a", 4), fleet)
    second = await decide_and_reserve(framework, aggregated("b", 4), fleet)
    assert (first.clusters, second.clusters) == ((TargetCluster("m1", 4),), (TargetCluster("m2", 4),))
    third = await framework.decide(aggregated("c", 1), fleet)
    assert (third.clusters, type(third.error).__name__) == (None, "UnschedulableError")


def modelled(name: str) -> Cluster:
    """Plenty of cpu in its summary, but its resource models hold two nodes of 2 cpus: 4 one-cpu replicas."""
    body = cluster(name, allocatable={"cpu": "100", "pods": "110"})
    body["spec"]["resourceModels"] = [{"grade": 0, "ranges": [{"name": "cpu", "min": "2", "max": "8"}]}]
    body["status"]["resourceSummary"]["allocatableModelings"] = [{"grade": 0, "count": 2}]
    return parse_cluster(body)


async def test_reserved_decision_is_on_next_estimates_models() -> None:
    framework = Framework(build_plugins(), assumptions=AssumptionCache())
    fleet = snapshot(modelled("m1"), modelled("m2"))
    first = await decide_and_reserve(framework, aggregated("a", 4), fleet)
    second = await decide_and_reserve(framework, aggregated("b", 4), fleet)
    assert (first.clusters, second.clusters) == ((TargetCluster("m1", 4),), (TargetCluster("m2", 4),))


async def test_unassumed_decisions_see_same_capacity() -> None:
    framework = Framework(build_plugins())
    fleet = tight_fleet()
    decisions = [await decide_and_reserve(framework, aggregated(name, 4), fleet) for name in ("a", "b", "c")]
    assert [d.clusters for d in decisions] == [(TargetCluster("m1", 4),)] * 3


async def test_accurate_estimator_is_sent_other_bindings_assumptions() -> None:
    cache = AssumptionCache()
    estimator = FakeEstimator({"m1": 8, "m2": 8})
    framework = Framework(build_plugins(), estimator=estimator, assumptions=cache)
    fleet = tight_fleet()
    await decide_and_reserve(framework, aggregated("a", 3), fleet)
    await framework.decide(aggregated("b", 1), fleet)
    assert estimator.assumed[0] == {}
    sent = estimator.assumed[1]
    assert {c: [(w.namespace, w.components[0].name, w.components[0].replicas) for w in ws]
            for c, ws in sent.items()} == {"m1": [("shop", "a", 3)]}


class ReservingElsewhere:
    """An estimate plugin during whose answer another pass reserves capacity on m1."""

    name = "ReservingElsewhere"

    def __init__(self, cache: AssumptionCache) -> None:
        self.cache = cache
        self.calls = 0

    async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        self.calls += 1
        if self.calls == 1:
            self.cache.assume(aggregated("other", 2), [TargetCluster("m1", 2)], multi_template=False)
        return {}


async def test_reserve_refuses_cluster_reserved_meanwhile() -> None:
    cache = AssumptionCache()
    plugin = ReservingElsewhere(cache)
    framework = Framework(build_plugins(extra=[plugin]), assumptions=cache)
    fleet = tight_fleet()
    binding = aggregated("a", 3)
    state = CycleState()
    stale = await framework.decide(binding, fleet, state)
    assert stale.clusters == (TargetCluster("m1", 3),)
    assert framework.reserve(binding, stale, state) is None
    state = CycleState()
    fresh = await framework.decide(binding, fleet, state)
    assert fresh.clusters == (TargetCluster("m2", 3),)
    assert framework.reserve(binding, fresh, state) is not None


def roomy_fleet() -> Snapshot:
    return snapshot(*(make_cluster(n, allocatable={"cpu": "16", "pods": "110"}) for n in ("m1", "m2")))


def modelled_fleet() -> Snapshot:
    return snapshot(modelled("m1"), modelled("m2"))


ROOM = {
    # fleet, the binding's replicas, what another pass assumes on m1 leaving room for them, and not
    "summaries": (roomy_fleet, 3, 2, 14),  # 16 cpus: 14 left, then 2
    "resource models": (modelled_fleet, 2, 2, 3),  # two 2-cpu nodes: one whole node left, then 1 cpu on one
}


@pytest.mark.parametrize("fleet_kind", list(ROOM))
async def test_reserve_keeps_decision_with_room_after_others_assumed(
    fleet_kind: str,
) -> None:
    fleet, replicas, leaves_room, _ = ROOM[fleet_kind]
    cache = AssumptionCache()
    framework = Framework(build_plugins(), assumptions=cache)
    binding = aggregated("a", replicas)
    state = CycleState()
    decision = await framework.decide(binding, fleet(), state)
    cache.assume(aggregated("other", leaves_room), [TargetCluster("m1", leaves_room)], multi_template=False)

    assert decision.clusters == (TargetCluster("m1", replicas),)
    assert framework.reserve(binding, decision, state) is not None
    assert sorted(cache.assumed_on("m1")) == ["shop/a", "shop/other"]


@pytest.mark.parametrize("fleet_kind", list(ROOM))
async def test_reserve_refuses_decision_others_left_no_room_for(
    fleet_kind: str,
) -> None:
    fleet, replicas, _, fills = ROOM[fleet_kind]
    cache = AssumptionCache()
    framework = Framework(build_plugins(), assumptions=cache)
    binding = aggregated("a", replicas)
    state = CycleState()
    stale = await framework.decide(binding, fleet(), state)
    cache.assume(aggregated("other", fills), [TargetCluster("m1", fills)], multi_template=False)

    assert stale.clusters == (TargetCluster("m1", replicas),)
    assert framework.reserve(binding, stale, state) is None
    state = CycleState()
    fresh = await framework.decide(binding, fleet(), state)
    assert fresh.clusters == (TargetCluster("m2", replicas),)
    assert framework.reserve(binding, fresh, state) is not None


async def test_reserve_keeps_decision_adding_no_replicas() -> None:
    cache = AssumptionCache()
    framework = Framework(build_plugins(), assumptions=cache)
    placed = make_binding("a", namespace="shop", replicas=3, requests={"cpu": "1"}, clusters={"m1": 3},
                          placement=placement(affinity={"clusterNames": ["m1"]}, scheduling=AGGREGATED))
    state = CycleState()
    decision = await framework.decide(placed, roomy_fleet(), state)
    cache.assume(aggregated("other", 16), [TargetCluster("m1", 16)], multi_template=False)  # m1 full

    assert decision.clusters == (TargetCluster("m1", 3),)
    assert framework.reserve(placed, decision, state) is not None


async def test_unreserve_gives_capacity_back() -> None:
    cache = AssumptionCache()
    framework = Framework(build_plugins(), assumptions=cache)
    fleet = tight_fleet()
    binding = aggregated("a", 4)
    state = CycleState()
    decision = await framework.decide(binding, fleet, state)
    reservation = framework.reserve(binding, decision, state)
    assert reservation is not None and cache.assumed_on("m1") != {}
    framework.unreserve(reservation)
    assert cache.assumed_on("m1") == {}


# --- plugins at every extension point --------------------------------------------------------------------


class Journal:
    """Reserve, Unreserve and Bind plugin: writes down what it is told."""

    name = "Journal"

    def __init__(self) -> None:
        self.told: list[str] = []

    def reserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.told.append(f"reserve {binding.name} {[t.name for t in result]}")

    def unreserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.told.append(f"unreserve {binding.name}")

    def bound(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.told.append(f"bound {binding.name}")


async def test_reserve_unreserve_and_bind_plugins_are_told_in_order() -> None:
    journal = Journal()
    framework = Framework(build_plugins(extra=[journal]))
    fleet = tight_fleet()
    for name, landed in (("a", True), ("b", False)):
        binding = aggregated(name, 1, ["m2"])
        state = CycleState()
        reservation = framework.reserve(binding, await framework.decide(binding, fleet, state), state)
        assert reservation is not None
        framework.bound(reservation, written=True) if landed else framework.unreserve(reservation)
    assert journal.told == ["reserve a ['m2']", "bound a", "reserve b ['m2']", "unreserve b"]


class HalfOfM1:
    name = "HalfOfM1"

    async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        return {"m1": 2, "m2": -1}


async def test_estimate_plugin_is_merged_with_estimators_by_minimum() -> None:
    decision = await decide_binding(aggregated("a", 4), tight_fleet(), build_plugins(extra=[HalfOfM1()]))
    assert decision.clusters == (TargetCluster("m2", 4),)


class LastCluster:
    """Select and Assign replaced: the last candidate gets everything."""

    name = "LastCluster"

    def select(self, ctx: AttemptContext, candidates: Sequence[ClusterDetail], need: int) -> Sequence[ClusterDetail]:
        return [candidates[-1]]

    def assign(self, ctx: AttemptContext, selected: Sequence[ClusterDetail]) -> Sequence[TargetCluster]:
        return [TargetCluster(selected[0].name, ctx.binding.replicas)]


async def test_select_and_assign_plugins_replace_karmadas_steps() -> None:
    decision = await decide_binding(aggregated("a", 3), tight_fleet(), build_plugins(extra=[LastCluster()]))
    assert decision.clusters == (TargetCluster("m2", 3),)


async def test_two_select_plugins_are_refused() -> None:
    class Other(LastCluster):
        name = "Other"

    with pytest.raises(PluginError, match="plugins LastCluster, Other all implement select: enable at most one"):
        build_plugins(extra=[LastCluster(), Other()])


async def test_failing_estimate_plugin_fails_attempt_naming_it() -> None:
    class Broken:
        name = "Broken"

        async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
            raise RuntimeError("no data")

    decision = await decide_binding(aggregated("a", 1), tight_fleet(), build_plugins(extra=[Broken()]))
    assert str(decision.error) == 'failed to estimate available replicas: plugin "Broken" failed with: no data'


class Told(FrameworkHook):
    """Writes down every point and plugin the framework tells of, with its result."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str]] = []
        self.plugins: list[tuple[str, str, str]] = []

    def step(self, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        self.steps.append((point.value, result.value))

    def plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        self.plugins.append((plugin, point.value, result.value))


async def test_every_extension_point_is_told_to_hooks_once_with_result() -> None:
    told, journal = Told(), Journal()
    framework = Framework(build_plugins(extra=[journal, HalfOfM1()]), hooks=[told])
    binding, state = aggregated("a", 1), CycleState()

    reservation = framework.reserve(binding, await framework.decide(binding, tight_fleet(), state), state)
    assert reservation is not None
    framework.bound(reservation, written=True)

    assert told.steps == [("Filter", "Success"), ("Score", "Success"), ("Estimate", "Success"), ("Select", "Success"),
                          ("Assign", "Success"), ("Reserve", "Success"), ("Bind", "Success")]
    assert [(name, point) for name, point, _ in told.plugins if name in ("Journal", "HalfOfM1")] == [
        ("HalfOfM1", "Estimate"), ("Journal", "Reserve"), ("Journal", "Bind")]


class Refusing:
    """A filter plugin that fails the attempt with its own verdict (a SchedulingError) or with a bug."""

    name = "Refusing"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
        raise self.error


async def test_plugin_error_keeps_kind_and_message() -> None:
    told = Told()
    decision = await decide_binding(aggregated("a", 1), tight_fleet(),
                                    build_plugins(extra=[Refusing(UnschedulableError("no room in the quota"))]),
                                    hooks=[told])

    assert isinstance(decision.error, UnschedulableError)
    assert str(decision.error) == "failed to filter clusters: no room in the quota"
    assert ("Refusing", "Filter", "Error") in told.plugins
    assert told.steps == [("Filter", "Error")]


async def test_other_plugin_exception_is_bug() -> None:
    decision = await decide_binding(aggregated("a", 1), tight_fleet(),
                                    build_plugins(extra=[Refusing(KeyError("zone"))]))

    assert type(decision.error) is SchedulingError
    assert str(decision.error) == "failed to filter clusters: plugin \"Refusing\" failed with: 'zone'"


class FullReserve:
    name = "FullReserve"

    def reserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        raise RuntimeError("the ledger is full")

    def unreserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        raise AssertionError("a plugin whose reserve failed is not unreserved")


async def test_failing_reserve_undoes_earlier_reserves() -> None:
    cache, journal = AssumptionCache(), Journal()
    framework = Framework(build_plugins(extra=[journal, FullReserve()]), assumptions=cache)
    binding, state = aggregated("a", 2), CycleState()
    decision = await framework.decide(binding, tight_fleet(), state)

    with pytest.raises(SchedulingError) as raised:
        framework.reserve(binding, decision, state)

    assert str(raised.value) == 'failed to reserve the decision: plugin "FullReserve" failed with: the ledger is full'
    assert journal.told == ["reserve a ['m1']", "unreserve a"]
    assert not cache.holds("shop/a")
