"""Cancelling a pass stops every estimator call at once; the deadline ends calls that do not answer.

The cancellation tests give the calls a 60-s deadline and wait at most `PROMPTLY` for the pass to end and the
server to see the RPC cancelled: a call that outlived its cancellation (shielded, awaited to its deadline) fails
them, instead of only making them slow as the estimator's default 3-s deadline would."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from binding_scheduler.estimation import FAILURES_METRIC
from binding_scheduler.model import Cluster
from tests.estimation.helpers import MakeEstimator, StartStub, estimator_tasks

LONG_DEADLINE = 60.0
PROMPTLY = 2.0  # seconds: a cancellation reaches the server in milliseconds


async def cancelled_promptly(task: asyncio.Task[object]) -> None:
    """Cancel `task` and let it end within `PROMPTLY` (a TimeoutError instead fails the test)."""
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), PROMPTLY)


async def test_cancelling_pass_cancels_call_on_server(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    hang = await stubs("hang", replicas=1, mode="hang")
    estimator = make_estimator([hang], timeout=LONG_DEADLINE)
    task = asyncio.create_task(estimator.max_available_replicas([Cluster(name="hang")], None))
    await hang.arrived.wait()
    await cancelled_promptly(task)
    assert estimator_tasks() == []
    await asyncio.wait_for(hang.cancelled.wait(), PROMPTLY)
    assert hang.outcomes() == ["cancelled"]


async def test_cancelling_pass_cancels_every_call_in_flight(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    hanging = [await stubs(f"h{i}", replicas=1, mode="hang") for i in range(5)]
    estimator = make_estimator(hanging, timeout=LONG_DEADLINE)
    task = asyncio.create_task(estimator.max_available_replicas([Cluster(name=s.cluster_name) for s in hanging], None))
    for stub in hanging:
        await stub.arrived.wait()
    await cancelled_promptly(task)
    assert estimator_tasks() == []
    for stub in hanging:
        await asyncio.wait_for(stub.cancelled.wait(), PROMPTLY)
    assert [s.outcomes() for s in hanging] == [["cancelled"]] * 5


async def test_estimator_still_works_after_cancelled_pass(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    stub = await stubs("a", replicas=1, mode="hang")
    estimator = make_estimator([stub], timeout=LONG_DEADLINE)
    task = asyncio.create_task(estimator.max_available_replicas([Cluster(name="a")], None))
    await stub.arrived.wait()
    await cancelled_promptly(task)
    stub.mode = stub.mode.OK
    answer = await estimator.max_available_replicas([Cluster(name="a")], None)
    assert dict(answer.replicas) == {"a": 1}


async def test_deadline_ends_hanging_call_and_pass_goes_on(
    stubs: StartStub, make_estimator: MakeEstimator, registry: CollectorRegistry
) -> None:
    a, hang = await stubs("a", replicas=3), await stubs("hang", replicas=1, mode="hang")
    estimator = make_estimator([a, hang], timeout=0.2)
    answer = await estimator.max_available_replicas([Cluster(name="a"), Cluster(name="hang")], None)
    assert dict(answer.replicas) == {"a": 3}
    assert dict(answer.failures) == {"hang": "cluster hang: no answer within 0.2s"}
    assert registry.get_sample_value(f"{FAILURES_METRIC}_total", {"cluster": "hang", "reason": "deadline"}) == 1
    assert estimator_tasks() == []
    await hang.cancelled.wait()
    assert hang.outcomes() == ["cancelled"]


async def test_zero_timeout_fails_every_cluster(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    a = await stubs("a", replicas=3)
    answer = await make_estimator([a], timeout=0).max_available_replicas([Cluster(name="a")], None)
    assert dict(answer.replicas) == {}
    assert dict(answer.failures) == {"a": "cluster a: no answer within 0s"}


async def test_forgetting_cluster_during_call_fails_that_cluster_only(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    hang = await stubs("hang", replicas=1, mode="hang")
    estimator = make_estimator([hang])
    task = asyncio.create_task(estimator.max_available_replicas([Cluster(name="hang")], None))
    await hang.arrived.wait()
    await estimator.forget("hang")
    answer = await task
    assert dict(answer.replicas) == {}
    assert dict(answer.failures) == {"hang": "cluster hang: the channel was closed during the call"}
