"""The bounded stop, one behaviour per test, at the runtime level (no operator, no emulator): passes in their
commit are drained until the deadline and cut at it, and a pass that reaches its commit point after the stop
writes nothing. Every wait is on an event the pass or the fake API client sets, never on a sleep."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.model import parse_cluster
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, Phase
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster, placement
from testsupport.pass_plugins import During, plugins_with

KEY = "default/web"
SPEC = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web"
DEADLINE = 0.2
LATE = 2.0  # a held write is let go this long after the drain deadline: long after a cut, well before 5 s
BOUND = 10.0  # every wait for a pass to get somewhere: a regression fails in seconds instead of hanging


class HeldWrites:
    """An API client whose writes reach the "server" (`sent`) and are held there until `release`; records which
    ones saw their cancellation and which ones finished."""

    def __init__(self, *, held: bool = True) -> None:
        self.sent: list[str] = []
        self.cancelled: list[str] = []
        self.finished: list[str] = []
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()
        if not held:
            self.released.set()

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        self.sent.append(path)
        self.arrived.set()
        try:
            await self.released.wait()
        except asyncio.CancelledError:
            self.cancelled.append(path)
            raise
        self.finished.append(path)
        return {"metadata": {"resourceVersion": str(len(self.sent) + 1), "generation": 2}}


class Events:
    async def record(self, *_: Any) -> None:
        return None


def make_scheduler(client: HeldWrites, during: During | None = None) -> Scheduler:
    clusters = ClusterStore()
    clusters.upsert(parse_cluster(cluster("m1")))
    metrics = SchedulerMetrics()
    ctx = PassContext(client=client, events=Events(), bindings=BindingStore(), clusters=clusters, metrics=metrics)
    scheduler = Scheduler(ctx, PassSettings(scheduler_name="default-scheduler", plugins=plugins_with(during)),
                          queue=SchedulingQueue(), metrics=metrics)
    body = binding(replicas=1, placement=placement())
    body["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": "p"}
    scheduler.on_binding(body)
    return scheduler


async def test_commit_running_at_drain_deadline_is_cut() -> None:
    """The deadline is the deadline: a write let go 2 s after it must find its pass already cut (a drain that
    waited longer would see it finish and count it drained)."""
    client = HeldWrites()
    scheduler = make_scheduler(client)
    scheduler.start()
    await asyncio.wait_for(client.arrived.wait(), BOUND)
    assert scheduler.in_flight == {KEY: Phase.COMMITTING}
    late = asyncio.get_running_loop().call_later(DEADLINE + LATE, client.released.set)
    try:
        report = await scheduler.drain(DEADLINE)
    finally:
        late.cancel()

    assert (report.cancelled, report.drained, report.cut) == (0, 0, 1)
    assert (client.sent, client.cancelled, client.finished) == ([SPEC], [SPEC], [])


async def test_overrunning_commit_is_cancelled_before_drain_ends() -> None:
    """Cut means cancelled: the write in flight is cancelled (its request aborted) by the time `drain()` returns,
    not abandoned to run on after the stop."""
    client = HeldWrites()
    scheduler = make_scheduler(client)
    scheduler.start()
    await asyncio.wait_for(client.arrived.wait(), BOUND)

    report = await scheduler.drain(DEADLINE)

    assert (report.cancelled, report.drained, report.cut) == (0, 0, 1)
    assert client.cancelled == [SPEC]
    assert scheduler.in_flight == {}
    client.released.set()


async def test_timely_commit_drained_with_both_writes() -> None:
    client = HeldWrites()
    scheduler = make_scheduler(client)
    scheduler.start()
    await asyncio.wait_for(client.arrived.wait(), BOUND)
    drain = asyncio.create_task(scheduler.drain(60.0))
    await asyncio.sleep(0)  # the drain has asked the stop; the commit goes on
    client.released.set()

    report = await drain

    assert (report.cancelled, report.drained, report.cut) == (0, 1, 0)
    assert client.finished == [SPEC, f"{SPEC}/status"]


async def test_pass_swallowing_cancel_writes_nothing_after_stop(
) -> None:
    """A plugin that catches CancelledError and lets the decision go on anyway: the commit point refuses it
    (StoppingError), so the stop still means no write."""
    entered = asyncio.Event()
    swallowed: list[str] = []

    async def swallowing(ctx: AttemptContext) -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            swallowed.append(ctx.binding.key)

    client = HeldWrites(held=False)
    scheduler = make_scheduler(client, swallowing)
    scheduler.start()
    await asyncio.wait_for(entered.wait(), BOUND)

    report = await scheduler.drain(60.0)

    assert swallowed == [KEY]
    assert (report.cancelled, report.drained, report.cut) == (1, 0, 0)
    assert client.sent == []
    assert scheduler.metrics.registry.get_sample_value(
        "binding_scheduler_pass_outcomes_total", {"outcome": "cancelled"}) == 1


async def test_slow_cancelled_pass_is_counted_once() -> None:
    """The service asks the stop three times (the signal, then shutdown, then the drain); a pass still unwinding
    its cancellation (an estimator call's cancellation on its way to the server) is one cancelled pass."""
    entered, unwound = asyncio.Event(), asyncio.Event()

    async def slow_to_unwind(ctx: AttemptContext) -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.shield(unwound.wait())
            raise
        raise AssertionError("never released")

    client = HeldWrites(held=False)
    scheduler = make_scheduler(client, slow_to_unwind)
    scheduler.start()
    await asyncio.wait_for(entered.wait(), BOUND)

    assert scheduler.request_stop() == 1
    assert scheduler.request_stop() == 0
    drain = asyncio.create_task(scheduler.drain(60.0))
    await asyncio.sleep(0)  # the drain has asked the stop a third time
    unwound.set()
    report = await drain

    assert (report.cancelled, report.drained, report.cut) == (1, 0, 0)
    assert client.sent == []


# -- drain() returns only after every pass (the original report: "Run waiting for the worker before it returns") --

UNWIND_TURNS = 25
"""Event-loop turns a well-behaved pass takes to unwind its cancellation (an estimator call or a write being cut:
the request's abort, the connection's close), then it re-raises."""


async def unwind_slowly() -> None:
    for _ in range(UNWIND_TURNS):
        await asyncio.sleep(0)
    await asyncio.sleep(0.02)


class SlowToUnwindWrites(HeldWrites):
    """Held writes whose cancellation takes many turns to unwind, as a real request's abort does."""

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        try:
            return await super().patch_merge(path, body)
        except asyncio.CancelledError:
            await unwind_slowly()
            raise


def several(client: HeldWrites, during: During | None, count: int) -> Scheduler:
    """A scheduler with `count` workers and as many bindings."""
    scheduler = make_scheduler(client, during)
    scheduler.set_workers(count)
    for index in range(1, count):
        body = binding(f"web-{index}", replicas=1, placement=placement(), uid=f"uid-{index}")
        body["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": "p"}
        scheduler.on_binding(body)
    return scheduler


async def test_drain_returns_only_when_every_pass_task_ended() -> None:
    entered = asyncio.Semaphore(0)

    async def held_in_an_estimator_call(ctx: AttemptContext) -> None:
        entered.release()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await unwind_slowly()
            raise

    scheduler = several(HeldWrites(held=False), held_in_an_estimator_call, 3)
    scheduler.start()
    for _ in range(3):
        await asyncio.wait_for(entered.acquire(), BOUND)
    passes = [entry.task for entry in scheduler._in_flight.values()]

    report = await scheduler.drain(60.0)

    assert len(passes) == 3
    assert [task.done() for task in passes] == [True, True, True]
    assert (report.cancelled, report.drained, report.cut) == (3, 0, 0)
    assert scheduler.in_flight == {}


async def test_drain_returns_only_when_cut_write_ended() -> None:
    client = SlowToUnwindWrites()
    scheduler = make_scheduler(client)
    scheduler.start()
    await asyncio.wait_for(client.arrived.wait(), BOUND)
    passes = [entry.task for entry in scheduler._in_flight.values()]

    report = await scheduler.drain(DEADLINE)

    assert [task.done() for task in passes] == [True]
    assert (report.cancelled, report.drained, report.cut) == (0, 0, 1)
    assert client.cancelled == [SPEC]
    client.released.set()


async def test_pass_cancelled_before_commit_counts_cancelled() -> None:
    """What operators read during a rollout: `binding_scheduler_pass_outcomes_total{outcome="cancelled"}`."""
    entered = asyncio.Event()

    async def held(ctx: AttemptContext) -> None:
        entered.set()
        await asyncio.Event().wait()

    scheduler = make_scheduler(HeldWrites(held=False), held)
    scheduler.start()
    await asyncio.wait_for(entered.wait(), BOUND)
    await scheduler.drain(60.0)

    outcomes = {outcome: scheduler.metrics.registry.get_sample_value(
        "binding_scheduler_pass_outcomes_total", {"outcome": outcome}) for outcome in ("cancelled", "forgotten")}
    assert outcomes == {"cancelled": 1.0, "forgotten": 0.0}
