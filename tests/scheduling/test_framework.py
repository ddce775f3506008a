"""The framework's `decide`: the affinity walk over attempts, with the accurate estimator asked between filtering
and selection (reference 1.6, 2.1, 2.5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.algorithm.registry import PluginSet, build_plugins
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.algorithm.walk import Decision
from binding_scheduler.model import Binding, Cluster, ObjectReference, ReplicaRequirements, TargetCluster
from binding_scheduler.scheduling.framework import Framework, FrameworkHook
from binding_scheduler.scheduling.record import AttemptRecord, AttemptRecorder
from tests.builders import AGGREGATED, DUPLICATED, make_binding, make_cluster, placement, snapshot, term

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


async def test_no_placement_is_an_error_and_nothing_is_written() -> None:
    decision = await decide_binding(make_binding("foo", namespace="ns"), SNAPSHOT, build_plugins())
    assert (decision.clusters, decision.affinity_name) == (None, None)
    assert str(decision.error) == "failed to get placement from resourceBinding(ns/foo)"


async def test_no_placement_on_a_cluster_binding_names_it() -> None:
    decision = await decide_binding(make_binding("foo", cluster_scoped=True), SNAPSHOT, build_plugins())
    assert str(decision.error) == "failed to get placement from clusterResourceBinding(foo)"


async def test_a_duplicated_non_workload_goes_everywhere() -> None:
    rb = make_binding(placement=placement(scheduling=DUPLICATED))
    decision = await decide_binding(rb, SNAPSHOT, build_plugins())
    assert decision.error is None
    assert set(decision.clusters or ()) == {TargetCluster("m1"), TargetCluster("m2"), TargetCluster("m3")}


async def test_the_walk_falls_back_to_the_next_term() -> None:
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


async def test_the_walk_stops_at_the_first_success() -> None:
    rb = make_binding(replicas=1, requests={"cpu": "1"},
                      placement=placement(affinities=[term("a", "m1"), term("b", "m2")], scheduling=AGGREGATED))
    records: list[AttemptRecord] = []
    decision = await decide_binding(rb, SNAPSHOT, build_plugins(), records=records)
    assert decision.clusters == (TargetCluster("m1", 1),)
    assert [r.binding.status.scheduler_observing_affinity_name for r in records] == ["a"]


async def test_every_term_failing_clears_the_clusters() -> None:
    rb = make_binding(replicas=1, placement=placement(affinities=[term("a", "x"), term("b", "y")]))
    decision = await decide_binding(rb, SNAPSHOT, build_plugins())
    assert (decision.clusters, decision.affinity_name, str(decision.error), len(decision.warnings)) == (
        (), None, FIT_M1, 2,
    )


async def test_the_accurate_estimator_is_asked_about_feasible_clusters_and_its_minimum_counts() -> None:
    rb = make_binding(replicas=4, requests={"cpu": "1"},
                      placement=placement(affinity={"clusterNames": ["m1", "m2"]}, scheduling=AGGREGATED))
    estimator = FakeEstimator({"m1": 1, "m2": 3})
    records: list[AttemptRecord] = []
    decision = await decide_binding(rb, SNAPSHOT, build_plugins(), estimator, records=records)
    assert estimator.asked == [["m1", "m2"]]
    assert set(decision.clusters or ()) == {TargetCluster("m1", 1), TargetCluster("m2", 3)}
    (record,) = records
    assert (dict(record.general), dict(record.accurate)) == ({"m1": 8, "m2": 8}, {"m1": 1, "m2": 3})


async def test_the_estimator_is_not_asked_for_a_non_workload() -> None:
    estimator = FakeEstimator({})
    rb = make_binding(placement=placement(scheduling=DUPLICATED))
    await decide_binding(rb, SNAPSHOT, build_plugins(), estimator)
    assert estimator.asked == []


async def test_the_estimator_is_not_asked_when_nothing_fits() -> None:
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
