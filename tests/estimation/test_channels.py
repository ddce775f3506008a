"""One channel per cluster: made on first use, reused, closed when the cluster goes away and at shutdown."""

from __future__ import annotations

import asyncio

import grpc
import grpc.aio

from binding_scheduler.model import Cluster
from tests.estimation.helpers import MakeEstimator, StartStub


async def reconnected(channel: grpc.aio.Channel) -> None:
    """gRPC reconnects a channel by itself, after a short backoff."""
    state = channel.get_state(try_to_connect=True)
    while state is not grpc.ChannelConnectivity.READY:
        await channel.wait_for_state_change(state)
        state = channel.get_state(try_to_connect=True)


async def test_channel_is_made_on_first_use_and_reused(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    stub = await stubs("a", replicas=1)
    estimator = make_estimator([stub])
    assert estimator.connected == {}
    await estimator.max_available_replicas([Cluster(name="a")], None)
    channel = estimator._pool._channels["a"]
    await estimator.max_available_replicas([Cluster(name="a")], None)
    assert estimator._pool._channels["a"] is channel
    assert estimator.connected == {"a": stub.address}


async def test_forget_closes_channel_and_next_call_dials_again(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    stub = await stubs("a", replicas=1)
    estimator = make_estimator([stub])
    await estimator.max_available_replicas([Cluster(name="a")], None)
    old = estimator._pool._channels["a"]
    await estimator.forget("a")
    assert estimator.connected == {}
    answer = await estimator.max_available_replicas([Cluster(name="a")], None)
    assert dict(answer.replicas) == {"a": 1}
    assert estimator._pool._channels["a"] is not old


async def test_forget_of_unknown_cluster_does_nothing(make_estimator: MakeEstimator) -> None:
    estimator = make_estimator()
    await estimator.forget("nobody")
    assert estimator.connected == {}


async def test_closed_client_fails_without_dialing(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    stub = await stubs("a", replicas=1)
    estimator = make_estimator([stub])
    await estimator.max_available_replicas([Cluster(name="a")], None)
    await estimator.close()
    await estimator.close()
    assert estimator.connected == {}
    answer = await estimator.max_available_replicas([Cluster(name="a")], None)
    assert dict(answer.failures) == {"a": "cluster a: cannot connect to the estimator: the estimator client is closed"}
    assert len(stub.calls) == 1


async def test_restarted_estimator_is_reached_on_same_channel(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    first = await stubs("a", replicas=1)
    estimator = make_estimator([first])
    await estimator.max_available_replicas([Cluster(name="a")], None)
    channel = estimator._pool._channels["a"]
    await first.stop()
    down = await estimator.max_available_replicas([Cluster(name="a")], None)
    assert set(down.failures) == {"a"}
    await stubs("a", replicas=2, port=first.port)
    await asyncio.wait_for(reconnected(channel), 60)
    answer = await estimator.max_available_replicas([Cluster(name="a")], None)
    assert dict(answer.replicas) == {"a": 2}
    assert estimator._pool._channels["a"] is channel
