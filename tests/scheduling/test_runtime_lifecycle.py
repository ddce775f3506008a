"""The life of one pass in the runtime, one behaviour per test: how many workers a scheduler runs by default,
which try of its binding a pass says it is, what a binding updated by someone else while its pass commits gets
when the pass ends, what a NoClusterFit outcome leaves behind for the API requeue, a stop asked as a pass ends,
and what the drain reports and logs. At the runtime level, with scripted API clients; every wait is bounded."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.kube.errors import ServerError
from binding_scheduler.model import parse_cluster
from binding_scheduler.scheduling.lifecycle import runtime
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.lifecycle.stop_report import DrainReport
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, Phase
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from tests.scheduling.test_drain import HeldWrites
from tests.scheduling.test_drain import make_scheduler as make_drain_scheduler
from tests.scheduling.test_intake import Events, events_counted, queued
from tests.scheduling.test_routing import Client, run_once
from tests.scheduling.test_routing import make_scheduler as make_routing_scheduler
from testsupport.builders import binding, cluster, placement
from testsupport.pass_plugins import During, plugins_with

KEY = "default/web"
RUNTIME = "binding_scheduler.scheduling.lifecycle.runtime"
PASSES = "binding_scheduler.scheduling.passes.run"
POLICY = {"propagationpolicy.karmada.io/permanent-id": "p"}
BOUND = 10.0  # every wait for a pass to get somewhere: a regression fails in seconds instead of hanging


def labelled(name: str = "web", *, generation: int = 1, version: str = "1") -> dict[str, Any]:
    """A binding that passes the event filter, at `generation`, placed nowhere yet."""
    body = binding(name, replicas=1, placement=placement(), generation=generation)
    body["metadata"].update(labels=dict(POLICY), resourceVersion=version)
    return body


def fleet_scheduler(client: Any, *clusters: dict[str, Any], during: During | None = None,
                    workers: int = 1) -> Scheduler:
    fleet = ClusterStore()
    for body in clusters:
        fleet.upsert(parse_cluster(body))
    metrics = SchedulerMetrics()
    ctx = PassContext(client=client, events=Events(), bindings=BindingStore(), clusters=fleet, metrics=metrics)
    return Scheduler(ctx, PassSettings(scheduler_name="default-scheduler", plugins=plugins_with(during)),
                     queue=SchedulingQueue(), metrics=metrics, workers=workers)


async def all_set(events: Iterable[asyncio.Event]) -> None:
    async with asyncio.timeout(BOUND):
        for event in events:
            await event.wait()


def pass_task(key: str) -> asyncio.Task[Any]:
    (task,) = [t for t in asyncio.all_tasks() if t.get_name() == f"pass:{key}"]
    return task


def runtime_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == RUNTIME]


# -- workers ---------------------------------------------------------------------------------------------------


async def test_scheduler_given_no_worker_count_runs_one_worker() -> None:
    scheduler = make_drain_scheduler(HeldWrites(held=False))  # built without `workers`
    scheduler.start()
    workers = sorted(t.get_name() for t in scheduler._tasks if t.get_name().startswith("scheduling-worker-"))
    await scheduler.drain(1.0)
    assert workers == ["scheduling-worker-0"]


# -- one pass --------------------------------------------------------------------------------------------------


async def test_pass_after_failed_one_logs_that_it_is_second_try(caplog: pytest.LogCaptureFixture) -> None:
    client = Client(status_error=ServerError(500, "InternalError", "etcd is unhappy"))
    scheduler = make_routing_scheduler(client)
    await run_once(scheduler)  # fails: backoff, with its attempt counted
    client.status_error = None
    scheduler.queue.push(KEY)  # an event takes it out of backoff, attempts kept
    caplog.clear()

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run_once(scheduler)

    lines = [re.sub(r"\d+ ms", "N ms", r.getMessage()) for r in caplog.records if r.name == PASSES]
    assert lines == ["binding default/web (ResourceBinding): scheduled to m1:3 (ReconcileSchedule, N ms, attempt 2)"]


async def test_commit_refusal_after_stop_names_binding() -> None:
    entered = asyncio.Event()

    async def swallowing(ctx: AttemptContext) -> None:
        entered.set()
        with contextlib.suppress(asyncio.CancelledError):  # a plugin that swallows its cancellation, decides anyway
            await asyncio.Event().wait()

    client = HeldWrites(held=False)
    scheduler = make_drain_scheduler(client, swallowing)
    scheduler.start()
    await asyncio.wait_for(entered.wait(), BOUND)
    task = pass_task(KEY)

    report = await scheduler.drain(60.0)

    assert (report.cancelled, client.sent) == (1, [])
    error = task.exception()
    assert isinstance(error, runtime.StoppingError)
    assert str(error) == "pass for default/web reached its commit point after the stop"


# -- updates seen while a pass commits ------------------------------------------------------------------------


async def pass_updated_by_someone_else_while_it_commits(scheduler: Scheduler, client: HeldWrites) -> None:
    """Run the queued pass for `KEY`; while its spec write is held, someone else's change (generation 3: our
    write answers generation 2) reaches intake."""
    info = scheduler.queue.pop_nowait()
    assert info is not None and info.key == KEY
    running = asyncio.create_task(scheduler._run_one(info))
    async with asyncio.timeout(BOUND):
        await client.arrived.wait()
        assert scheduler.in_flight == {KEY: Phase.COMMITTING}
        scheduler.on_binding(labelled(generation=3, version="3"))
        client.released.set()
        await running
    scheduler.queue.done(info)


async def test_update_during_commit_is_queued_after_pass() -> None:
    client = HeldWrites()
    scheduler = make_drain_scheduler(client)

    await pass_updated_by_someone_else_while_it_commits(scheduler, client)

    assert (events_counted(scheduler, "BindingAdd"), events_counted(scheduler, "BindingUpdate")) == (1, 1)
    assert queued(scheduler) == [KEY]


async def test_update_during_commit_queues_one_more_pass() -> None:
    client = HeldWrites()
    scheduler = make_drain_scheduler(client)
    await pass_updated_by_someone_else_while_it_commits(scheduler, client)
    info = scheduler.queue.pop_nowait()
    assert info is not None and info.key == KEY

    async with asyncio.timeout(BOUND):
        await scheduler._run_one(info)  # nothing happens to the binding during this one
    scheduler.queue.done(info)

    assert len(client.sent) == 4  # both passes wrote spec and status
    assert events_counted(scheduler, "BindingUpdate") == 1
    assert queued(scheduler) == []


# -- NoClusterFit and the API requeue -----------------------------------------------------------------------


def serving_nothing(name: str) -> dict[str, Any]:
    return cluster(name, apis=())


async def run_queued(scheduler: Scheduler) -> None:
    info = scheduler.queue.pop_nowait()
    assert info is not None and info.key == KEY
    async with asyncio.timeout(BOUND):
        await scheduler._run_one(info)
    scheduler.queue.done(info)


async def test_unfit_binding_requeued_when_cluster_gains_api_first(
) -> None:
    """Its NoClusterFit status write has not come back through the watch yet: the stored body has no condition,
    so only the pass's own outcome says it waits for an API."""
    scheduler = fleet_scheduler(Client(), serving_nothing("m1"))
    scheduler.on_binding(labelled())
    await run_queued(scheduler)
    assert scheduler.queue.where(KEY) is None

    scheduler.on_cluster(cluster("m1"))  # now serves Deployments

    assert scheduler.queue.where(KEY) == "active"
    assert events_counted(scheduler, "ClusterChanged") == 1


async def test_scheduled_binding_not_requeued_when_cluster_gains_api() -> None:
    scheduler = fleet_scheduler(Client(), serving_nothing("m1"))
    scheduler.on_binding(labelled())
    await run_queued(scheduler)  # NoClusterFit
    scheduler.on_cluster(cluster("m2"))  # a new cluster that serves Deployments: requeues nothing by itself
    scheduler.queue.push(KEY)
    await run_queued(scheduler)  # scheduled to m2
    assert scheduler.queue.where(KEY) is None

    scheduler.on_cluster(cluster("m1"))  # m1 now serves Deployments too

    assert scheduler.queue.where(KEY) is None
    assert events_counted(scheduler, "ClusterChanged") == 0


# -- the stop -----------------------------------------------------------------------------------------------


async def test_stop_as_pass_ends_cancels_later_passes() -> None:
    """The stop can come at any moment (a signal): here in the instant after pass `a` ended and before its
    worker noticed, so `a` is still among the passes in flight, ahead of `b`."""
    entered: dict[str, asyncio.Event] = {"default/a": asyncio.Event(), "default/b": asyncio.Event()}
    go = asyncio.Event()

    async def deciding(ctx: AttemptContext) -> None:
        entered[ctx.binding.key].set()
        await (go if ctx.binding.key == "default/a" else asyncio.Event()).wait()

    scheduler = fleet_scheduler(Client(), cluster("m1"), during=deciding, workers=2)
    scheduler.on_binding(labelled("a"))
    scheduler.on_binding(labelled("b"))
    scheduler.start()
    await all_set(entered.values())
    assert list(scheduler.in_flight) == ["default/a", "default/b"]
    first, second = pass_task("default/a"), pass_task("default/b")
    asked: list[int] = []
    first.add_done_callback(lambda _: asked.append(scheduler.request_stop()))

    go.set()
    async with asyncio.timeout(BOUND):
        await asyncio.wait({first})

    assert asked == [1]
    async with asyncio.timeout(BOUND):
        await asyncio.wait({second})
    assert second.cancelled()
    report = await scheduler.drain(1.0)
    assert (report.cancelled, report.drained, report.cut) == (1, 0, 0)


async def test_zero_drain_timeout_cuts_at_once() -> None:
    client = HeldWrites()
    scheduler = make_drain_scheduler(client)
    scheduler.start()
    await asyncio.wait_for(client.arrived.wait(), BOUND)
    soon = asyncio.get_running_loop().call_later(0.3, client.released.set)
    try:
        report = await scheduler.drain(0.0)
    finally:
        soon.cancel()

    assert (report.cancelled, report.drained, report.cut) == (0, 0, 1)
    assert (client.cancelled, client.finished) == (client.sent, [])


async def test_passes_ignoring_cancel_named_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(runtime, "STRAGGLER_GRACE", 0.05)
    entered: dict[str, asyncio.Event] = {"default/a": asyncio.Event(), "default/b": asyncio.Event()}
    finish = asyncio.Event()

    async def stubborn(ctx: AttemptContext) -> None:
        entered[ctx.binding.key].set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await finish.wait()  # ignores its cancellation until the test lets it go
        raise asyncio.CancelledError

    scheduler = fleet_scheduler(Client(), cluster("m1"), during=stubborn, workers=2)
    scheduler.on_binding(labelled("b"))
    scheduler.on_binding(labelled("a"))
    scheduler.start()
    await all_set(entered.values())
    passes = {pass_task("default/a"), pass_task("default/b")}

    with caplog.at_level(logging.INFO, logger=RUNTIME):
        report = await scheduler.drain(0.0)
    finish.set()
    async with asyncio.timeout(BOUND):
        await asyncio.wait(passes)

    assert (report.cancelled, report.drained, report.cut) == (2, 0, 2)
    assert runtime_lines(caplog) == [(
        logging.ERROR,
        "passes for default/a, default/b ignored their cancellation (a plugin swallowing CancelledError?); "
        "abandoned: the write gate closes next, so they cannot write",
    )]


def clock(*readings: float) -> SimpleNamespace:
    """A stand-in for the `time` module that reads `readings`, one per call of `monotonic()`."""
    values: Iterator[float] = iter(readings)
    return SimpleNamespace(monotonic=lambda: next(values))


async def test_drain_report_gives_how_long_stop_took(monkeypatch: pytest.MonkeyPatch) -> None:
    scheduler = make_drain_scheduler(HeldWrites(held=False))
    monkeypatch.setattr(runtime, "time", clock(100.0, 100.25))

    report = await scheduler.drain(1.0)

    assert report == DrainReport(cancelled=0, drained=0, cut=0, seconds=0.25)
    assert report.line() == ("scheduler stopped: 0 passes cancelled before their commit point, 0 drained, 0 cut at "
                             "the drain deadline, in 250 ms")
