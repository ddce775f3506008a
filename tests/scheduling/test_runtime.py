"""The scheduler runtime: worker count changes, and a stop that cannot be blocked by a misbehaving pass."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.preemption import Claim
from binding_scheduler.kube.errors import Conflict
from binding_scheduler.model import TargetCluster, parse_binding, parse_cluster
from binding_scheduler.scheduling.lifecycle import runtime
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster, placement
from testsupport.pass_plugins import During, plugins_with


class Events:
    async def record(self, *_: Any) -> None:
        return None


def make_scheduler(during: During | None = None, workers: int = 1) -> Scheduler:
    clusters = ClusterStore()
    clusters.upsert(parse_cluster(cluster("m1")))
    metrics = SchedulerMetrics()
    ctx = PassContext(
        client=None, events=Events(), bindings=BindingStore(), clusters=clusters, metrics=metrics
    )
    settings = PassSettings(scheduler_name="default-scheduler", plugins=plugins_with(during))
    return Scheduler(ctx, settings, queue=SchedulingQueue(), metrics=metrics, workers=workers)


def worker_names(scheduler: Scheduler) -> list[str]:
    return sorted(t.get_name() for t in scheduler._tasks if t.get_name().startswith("scheduling-worker-"))


async def test_resizing_workers_keeps_one_task_each() -> None:
    scheduler = make_scheduler(workers=2)
    scheduler.start()
    scheduler.set_workers(4)
    scheduler.set_workers(1)
    scheduler.queue.push("default/nobody")
    for _ in range(20):
        await asyncio.sleep(0)
    scheduler.set_workers(3)
    live = [t.get_name() for t in scheduler._tasks if not t.done() and t.get_name().startswith("scheduling-worker-")]
    assert sorted(live) == ["scheduling-worker-0", "scheduling-worker-1", "scheduling-worker-2"]
    await scheduler.drain(1.0)


async def test_pass_that_swallows_cancellation_cannot_hold_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "STRAGGLER_GRACE", 0.1)
    entered, finish = asyncio.Event(), asyncio.Event()

    async def stubborn(ctx: AttemptContext) -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await finish.wait()  # ignores its cancellation until the test lets it go
        raise asyncio.CancelledError

    scheduler = make_scheduler(stubborn)
    body = binding(replicas=1, placement=placement())
    body["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": "p"}
    scheduler.on_binding(body)
    scheduler.start()
    await entered.wait()

    (stubborn_pass,) = [t for t in asyncio.all_tasks() if t.get_name() == "pass:default/web"]

    report = await scheduler.drain(0.1)

    assert (report.cancelled, report.drained, report.cut) == (1, 0, 1)
    assert not stubborn_pass.done()  # abandoned, not awaited: the stop did not wait for it
    finish.set()
    await asyncio.wait({stubborn_pass})


def queued(scheduler: Scheduler) -> list[str]:
    keys = []
    while (info := scheduler.queue.pop_nowait()) is not None:
        keys.append(info.key)
        scheduler.queue.done(info)
    return keys


def with_generation(body: dict[str, Any], generation: int, clusters: list[str]) -> dict[str, Any]:
    """`body` at `generation`, placed on `clusters`, with a policy label (the event filter needs one)."""
    metadata = {**body["metadata"], "generation": generation, "resourceVersion": str(generation),
                "labels": {"propagationpolicy.karmada.io/permanent-id": "p"}}
    return {**body, "metadata": metadata, "spec": {**body["spec"], "clusters": [{"name": c} for c in clusters]}}


def test_bindings_placed_on_removed_cluster_are_scheduled_again() -> None:
    scheduler = make_scheduler()
    scheduler.ctx.clusters.upsert(parse_cluster(cluster("m2")))
    body = binding(replicas=1, placement=placement())
    scheduler.on_binding(with_generation(body, 1, ["m1"]))
    other = with_generation(body, 1, ["m2"])
    scheduler.on_binding({**other, "metadata": {**other["metadata"], "labels": {}, "name": "unlabelled"}})
    scheduler.on_binding(with_generation(body, 2, ["m2"]))
    queued(scheduler)
    assert scheduler.on_clusters_relisted([cluster("m1")]) == ["m2"]
    assert queued(scheduler) == ["default/web"]


def test_own_write_onto_removed_cluster_rescheduled() -> None:
    """The removal reached us first (a relist after a watch gap), then the event of our own earlier write."""
    scheduler = make_scheduler()
    body = binding(replicas=1, placement=placement())
    scheduler.on_binding(with_generation(body, 1, []))
    queued(scheduler)
    scheduler.ctx.bindings.wrote("default/web", 2)
    scheduler.on_binding(with_generation(body, 2, ["m1"]))
    assert queued(scheduler) == []  # our own write onto a cluster that exists: nothing to do
    scheduler.on_clusters_relisted([])
    queued(scheduler)
    scheduler.ctx.bindings.wrote("default/web", 3)
    scheduler.on_binding(with_generation(body, 3, ["m1"]))
    assert queued(scheduler) == ["default/web"]


class ConflictingSpecWrites:
    """Answers every spec write 409 (someone wrote the binding after our read); status writes succeed."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        self.sent.append(path.rsplit("/", 1)[-1])
        if not path.endswith("/status"):
            raise Conflict(409, "Conflict", "the object has been modified; please apply your changes to the latest")
        return {"metadata": {"resourceVersion": "9", "generation": 1}}


async def test_spec_409_requeues_without_backoff_on_newer_version(
) -> None:
    """Karmada's handleErr for a conflict is an immediate requeue; ours waits only for the write that beat ours to
    reach the cache. So the key is never in backoff, and the first newer version (here a status change by someone
    else, which changes no generation and so enqueues nothing by itself) puts it in the active queue at once."""
    scheduler = make_scheduler()
    client = ConflictingSpecWrites()
    scheduler.ctx.client = client
    body = with_generation(binding(replicas=1, placement=placement()), 1, [])
    scheduler.on_binding(body)
    info = scheduler.queue.pop_nowait()
    assert info is not None and info.key == "default/web"

    await scheduler._run_one(info)
    scheduler.queue.done(info)

    assert client.sent == ["web"]
    assert scheduler.queue.where("default/web") is None  # waiting for a newer version: not in backoff
    assert scheduler.queue.depth().backoff == 0
    newer = {**body, "metadata": {**body["metadata"], "resourceVersion": "2"}, "status": {"conditions": []}}
    scheduler.on_binding(newer)
    assert scheduler.queue.where("default/web") == "active"
    again = scheduler.queue.pop_nowait()
    assert again is not None and (again.key, again.attempts) == ("default/web", 2)


def test_healthy_workload_releases_assumption_there() -> None:
    scheduler = make_scheduler()
    body = binding(replicas=4, requests={"cpu": "1"}, placement=placement())
    scheduler.on_binding(body)
    assumptions = scheduler.ctx.assumptions
    assumptions.assume(parse_binding(body), [TargetCluster("m1", 2), TargetCluster("m2", 2)], multi_template=False)
    healthy = {**body, "status": {"aggregatedStatus": [{"clusterName": "m1", "health": "Healthy"},
                                                       {"clusterName": "m2", "health": "Unhealthy"}]}}
    scheduler.on_binding(healthy)
    assert (assumptions.assumed_on("m1"), list(assumptions.assumed_on("m2"))) == ({}, ["default/web"])
    scheduler.on_binding_deleted(healthy)
    assert assumptions.assumed_on("m2") == {}


def test_waiting_preemptor_runs_when_summary_changes() -> None:
    scheduler = make_scheduler()
    scheduler.ctx.claims.set(Claim("default/high", "m1", 1000, 3, {"cpu": 10}))
    scheduler.queue.push("default/high")
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.queue.push_unschedulable(info)
    scheduler.queue.done(info)
    assert scheduler.queue.where("default/high") == "unschedulable"

    scheduler.on_cluster(cluster("m1"))  # the same cluster: nothing may have been freed
    assert scheduler.queue.where("default/high") == "unschedulable"
    scheduler.on_cluster(cluster("m1", allocatable={"cpu": "30m", "pods": "110"}))

    assert scheduler.queue.where("default/high") == "active"


def test_intake_takes_up_claim_others_wrote() -> None:
    import time

    from binding_scheduler.scheduling.state.claims import CLAIM_ANNOTATION, claim_annotation

    scheduler = make_scheduler()
    body = binding("high", replicas=3, placement=placement())
    body["metadata"]["annotations"] = {
        CLAIM_ANNOTATION: claim_annotation(Claim("default/high", "m1", 1000, 3, {"cpu": 10}), time.time() + 300)}

    scheduler.on_binding(body)

    claim = scheduler.ctx.claims.of("default/high")
    assert claim is not None and (claim.cluster, claim.priority) == ("m1", 1000)
