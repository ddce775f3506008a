"""Where a key goes after its pass (Karmada's handleErr), the workers' loop, and what a failed pass logs: at the
runtime level, with a scripted API client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.kube.errors import ServerError
from binding_scheduler.model import parse_cluster
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import DYNAMIC_WEIGHT, binding, cluster, placement
from testsupport.pass_plugins import During, plugins_with

KEY = "default/web"


class Client:
    """Every write succeeds, except spec writes answered with `spec_error` and status writes with `status_error`."""

    def __init__(self, spec_error: Exception | None = None, status_error: Exception | None = None) -> None:
        self.spec_error, self.status_error = spec_error, status_error
        self.sent: list[str] = []

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        self.sent.append(path.rsplit("/", 1)[-1])
        error = self.status_error if path.endswith("/status") else self.spec_error
        if error is not None:
            raise error
        return {"metadata": {"resourceVersion": "9", "generation": 2}}


class Events:
    async def record(self, *_: Any) -> None:
        return None


def make_scheduler(client: Client, during: During | None = None, *, pods: int = 100) -> Scheduler:
    fleet = ClusterStore()
    fleet.upsert(parse_cluster(cluster("m1", allocatable={"pods": str(pods)})))
    metrics = SchedulerMetrics()
    ctx = PassContext(client=client, events=Events(), bindings=BindingStore(), clusters=fleet, metrics=metrics)
    scheduler = Scheduler(ctx, PassSettings(scheduler_name="default-scheduler", plugins=plugins_with(during)),
                          queue=SchedulingQueue(), metrics=metrics)
    body = binding(replicas=3, placement=placement(scheduling=DYNAMIC_WEIGHT))
    body["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": "p"}
    scheduler.on_binding(body)
    return scheduler


async def run_once(scheduler: Scheduler) -> None:
    info = scheduler.queue.pop_nowait()
    assert info is not None and info.key == KEY
    await scheduler._run_one(info)
    scheduler.queue.done(info)


def failures(scheduler: Scheduler) -> float:
    value = scheduler.metrics.registry.get_sample_value(
        "karmada_scheduler_queue_incoming_bindings_total", {"event": "ScheduleAttemptFailure"})
    return value or 0.0


async def test_scheduled_binding_waits_nowhere() -> None:
    scheduler = make_scheduler(Client())
    await run_once(scheduler)
    assert (scheduler.queue.where(KEY), failures(scheduler)) == (None, 0)


async def test_binding_fleet_cannot_hold_is_parked_as_unschedulable() -> None:
    scheduler = make_scheduler(Client(), pods=1)
    await run_once(scheduler)
    assert (scheduler.queue.where(KEY), failures(scheduler)) == ("unschedulable", 1)


async def test_failed_status_write_backs_off_and_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    scheduler = make_scheduler(Client(status_error=ServerError(500, "InternalError", "etcd is unhappy")))
    await run_once(scheduler)
    assert (scheduler.queue.where(KEY), failures(scheduler)) == ("backoff", 1)
    (record,) = [r for r in caplog.records if r.name == "binding_scheduler.scheduling.lifecycle.runtime"]
    assert (record.levelno, record.getMessage(), record.exc_info) == (
        logging.WARNING, "pass for default/web failed: 500 InternalError: etcd is unhappy", None)


async def test_unexpected_error_logged_and_backs_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    scheduler = make_scheduler(Client(spec_error=RuntimeError("a client bug")))
    await run_once(scheduler)
    assert scheduler.queue.where(KEY) == "backoff"
    (record,) = [r for r in caplog.records if r.name == "binding_scheduler.scheduling.lifecycle.runtime"]
    assert (record.levelno, record.getMessage()) == (logging.ERROR, "pass for default/web failed: a client bug")
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)


async def test_drained_pass_routes_key_nowhere() -> None:
    """Nothing after a stop: a committing pass that fails its write during the drain is not sent to backoff,
    nor counted as a failed attempt."""
    release = asyncio.Event()

    class HeldFailingClient(Client):
        async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
            await release.wait()
            return await super().patch_merge(path, body)

    client = HeldFailingClient(spec_error=ServerError(500, "InternalError", "etcd is unhappy"))
    scheduler = make_scheduler(client)
    scheduler.start()
    async with asyncio.timeout(10):  # bounded: a regression fails here instead of hanging the test
        while not scheduler.in_flight or next(iter(scheduler.in_flight.values())) != "committing":  # noqa: ASYNC110
            await asyncio.sleep(0)
    drain = asyncio.create_task(scheduler.drain(60.0))
    await asyncio.sleep(0)
    release.set()
    report = await drain

    assert (report.cancelled, report.drained, report.cut) == (0, 1, 0)
    assert client.sent == ["web", "status"]
    assert (scheduler.queue.where(KEY), failures(scheduler)) == (None, 0)


async def test_surplus_worker_leaves_before_taking_key() -> None:
    scheduler = make_scheduler(Client())
    scheduler.workers = 1
    await asyncio.wait_for(scheduler._worker(1), timeout=10)  # index 1 of 1 worker: surplus
    assert scheduler.queue.where(KEY) == "active"


async def test_worker_hands_key_back_after_pass() -> None:
    passes: list[str] = []
    second = asyncio.Event()

    async def counting(ctx: AttemptContext) -> None:
        passes.append(ctx.binding.key)
        if len(passes) == 2:
            second.set()

    scheduler = make_scheduler(Client(), counting)
    scheduler.start()
    async with asyncio.timeout(10):  # bounded: a regression fails here instead of hanging the test
        while scheduler.metrics.registry.get_sample_value(  # noqa: ASYNC110 - the pass ends inside the worker
            "binding_scheduler_pass_outcomes_total", {"outcome": "scheduled"}) != 1:
            await asyncio.sleep(0.01)
    scheduler.queue.push(KEY)
    await asyncio.wait_for(second.wait(), timeout=10)
    await scheduler.drain(1.0)
    assert passes == [KEY, KEY]


async def test_queue_flushers_are_cancelled_by_drain() -> None:
    scheduler = make_scheduler(Client())
    scheduler.start()
    (flushers,) = [t for t in scheduler._tasks if t.get_name() == "scheduling-queue-flushers"]
    await scheduler.drain(1.0)
    assert flushers.cancelled()
