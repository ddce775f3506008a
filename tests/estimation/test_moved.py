"""An estimator whose Service is re-pointed is dialed at its new address after a failed call, as a freshly
started scheduler would; a failure at an address that did not change keeps the channel, and the Service is looked
up again at most once per interval."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import grpc
import pytest

from binding_scheduler.estimation import DEFAULT_PORT, AccurateEstimator, EstimateAnswer
from binding_scheduler.estimation.channels import RECHECK_INTERVAL
from binding_scheduler.model import Cluster
from tests.estimation.helpers import MakeEstimator, StartStub


class Service:
    """Service `karmada-scheduler-estimator-m1` as the API server returns it: an ExternalName on loopback whose
    target port a test re-points. Counts the lookups."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.lookups = 0

    async def __call__(self, namespace: str, name: str) -> Mapping[str, Any]:
        self.lookups += 1
        port = {"port": DEFAULT_PORT, "targetPort": self.port}
        return {"spec": {"type": "ExternalName", "externalName": "127.0.0.1", "ports": [port]}}


class Silent:
    """A TCP listener that accepts connections and never speaks: a gRPC channel to it stays CONNECTING, as with
    an address that no longer answers."""

    def __init__(self) -> None:
        self.accepted = asyncio.Event()
        self._release = asyncio.Event()
        self._handlers: list[asyncio.Task[Any]] = []
        self._server: asyncio.Server | None = None

    async def start(self, port: int) -> None:
        self._server = await asyncio.start_server(self._hold, "127.0.0.1", port)

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.append(task)
        self.accepted.set()
        await self._release.wait()
        writer.close()
        await writer.wait_closed()

    async def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await asyncio.gather(*self._handlers, return_exceptions=True)


@pytest.fixture
async def silent() -> AsyncIterator[Silent]:
    listener = Silent()
    yield listener
    await listener.stop()


async def ask(estimator: AccurateEstimator) -> EstimateAnswer:
    return await estimator.max_available_replicas([Cluster(name="m1")], None)


async def test_re_pointed_service_dialed_at_new_address(
    stubs: StartStub, make_estimator: MakeEstimator, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = await stubs("m1", replicas=1), await stubs("m1", replicas=2)
    service = Service(a.port)
    estimator = make_estimator(service_lookup=service)
    assert dict((await ask(estimator)).replicas) == {"m1": 1}
    old = estimator._pool._channels["m1"]
    await a.stop()
    service.port = b.port
    down = await ask(estimator)  # the call that finds A gone fails as before: nothing is retried within a pass
    unavailable = "gRPC request cluster(m1) estimator error when calling MaxAvailableReplicas: UNAVAILABLE: "
    assert list(down.failures) == ["m1"]
    assert down.failures["m1"].startswith(unavailable)
    with caplog.at_level(logging.INFO, logger="binding_scheduler.estimation"):
        answer = await ask(estimator)
    assert dict(answer.replicas) == {"m1": 2}
    assert estimator.connected == {"m1": b.address}
    assert f"estimator of cluster m1 moved from {a.address} to {b.address}: reconnecting" in caplog.messages
    assert old.get_state() is grpc.ChannelConnectivity.SHUTDOWN
    assert service.lookups == 2  # the first dial's, and one after the failure (the new address is dialed from it)


async def test_failure_at_same_address_keeps_channel(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    a = await stubs("m1", replicas=1)
    service = Service(a.port)
    estimator = make_estimator(service_lookup=service)
    now = 0.0
    estimator._pool._clock = lambda: now
    await ask(estimator)
    channel = estimator._pool._channels["m1"]
    await a.stop()
    for _ in range(4):
        assert set((await ask(estimator)).failures) == {"m1"}
    assert service.lookups == 2  # the dial's, then one after the first failure; none for the next three
    assert estimator._pool._channels["m1"] is channel
    assert channel.get_state() is not grpc.ChannelConnectivity.SHUTDOWN
    assert estimator.connected == {"m1": a.address}
    now = RECHECK_INTERVAL
    assert set((await ask(estimator)).failures) == {"m1"}
    assert service.lookups == 3
    assert estimator._pool._channels["m1"] is channel


async def test_cancelled_call_is_no_reason_to_look_again(
    stubs: StartStub, make_estimator: MakeEstimator, silent: Silent
) -> None:
    a, b = await stubs("m1", replicas=1), await stubs("m1", replicas=2)
    service = Service(a.port)
    estimator = make_estimator(service_lookup=service, timeout=0.2)
    await ask(estimator)
    await a.stop()
    await silent.start(a.port)  # the old address now accepts and never answers: calls wait for the connection
    service.port = b.port
    task = asyncio.create_task(ask(estimator))
    await silent.accepted.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Had the cancelled call counted, this one would look the Service up again and reach B.
    answer = await ask(estimator)
    assert dict(answer.failures) == {"m1": "cluster m1: no answer within 0.2s"}
    assert service.lookups == 1
    assert b.calls == []


async def test_deadline_while_connecting_is_reason_to_look_again(
    stubs: StartStub, make_estimator: MakeEstimator, silent: Silent
) -> None:
    a, b = await stubs("m1", replicas=1), await stubs("m1", replicas=2)
    service = Service(a.port)
    estimator = make_estimator(service_lookup=service, timeout=0.2)
    await ask(estimator)
    await a.stop()
    await silent.start(a.port)
    service.port = b.port
    assert dict((await ask(estimator)).failures) == {"m1": "cluster m1: no answer within 0.2s"}
    assert dict((await ask(estimator)).replicas) == {"m1": 2}
    assert service.lookups == 2


async def test_slow_estimator_is_not_looked_up_again(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    a = await stubs("m1", replicas=1, mode="hang")
    service = Service(a.port)
    estimator = make_estimator(service_lookup=service, timeout=0.2)
    assert dict((await ask(estimator)).failures) == {"m1": "cluster m1: no answer within 0.2s"}
    a.mode = a.mode.OK
    assert dict((await ask(estimator)).replicas) == {"m1": 1}
    assert service.lookups == 1


async def test_closing_client_during_second_lookup_fails_call_cleanly(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    a = await stubs("m1", replicas=1)
    service = Service(a.port)
    asked, release = asyncio.Event(), asyncio.Event()

    async def held_lookup(namespace: str, name: str) -> Mapping[str, Any]:
        if service.lookups:
            asked.set()
            await release.wait()
        return await service(namespace, name)

    estimator = make_estimator(service_lookup=held_lookup)
    await ask(estimator)
    await a.stop()
    assert set((await ask(estimator)).failures) == {"m1"}
    task = asyncio.create_task(ask(estimator))
    await asked.wait()
    await estimator.close()
    release.set()
    answer = await task
    closed = "cluster m1: cannot connect to the estimator: the estimator client is closed"
    assert dict(answer.failures) == {"m1": closed}
    assert estimator.connected == {}
