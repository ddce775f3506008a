"""The estimator stub: answers from a Cluster's resource summary, old and new request fields, the CLI."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import grpc.aio
import pytest

from binding_scheduler.estimation import wire
from binding_scheduler.estimation.pb import estimator_pb2
from binding_scheduler.model import Cluster, Component, ReplicaRequirements, parse_cluster, parse_quantity
from tests.estimation.helpers import MakeEstimator, StartStub, entry, ld, text

CLUSTER = parse_cluster(
    {
        "metadata": {"name": "m1"},
        "status": {
            "resourceSummary": {
                "allocatable": {"cpu": "10", "memory": "16Gi", "pods": "110"},
                "allocated": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                "allocating": {"cpu": "500m"},
            }
        },
    }
)


def needs(**request: str) -> ReplicaRequirements:
    return ReplicaRequirements(resource_request={k: parse_quantity(v, k) for k, v in request.items()})


@pytest.mark.parametrize(
    ("request_", "replicas"),
    [({"cpu": "500m"}, 15), ({"cpu": "1", "memory": "1Gi"}, 7), ({}, 100), ({"nvidia.com/gpu": "1"}, 0)],
    ids=["cpu", "cpu-and-memory", "pods-only", "missing-resource"],
)
async def test_answers_from_resource_summary(
    stubs: StartStub, make_estimator: MakeEstimator, request_: dict[str, str], replicas: int
) -> None:
    stub = await stubs("m1", summary=CLUSTER)
    answer = await make_estimator([stub]).max_available_replicas([CLUSTER], needs(**request_))
    assert dict(answer.replicas) == {"m1": replicas}


async def test_component_sets_from_resource_summary(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    stub = await stubs("m1", summary=CLUSTER)
    components = [Component("web", 2, needs(cpu="1")), Component("db", 1, needs(memory="4Gi"))]
    answer = await make_estimator([stub]).max_available_component_sets([CLUSTER], components, "ns")
    assert dict(answer.replicas) == {"m1": 3}  # cpu 7.5 / 2 per set, memory 12Gi / 4Gi per set


async def test_request_with_only_legacy_field_is_understood(stubs: StartStub) -> None:
    stub = await stubs("m1", summary=CLUSTER)
    legacy_only = text(1, "m1") + ld(2, ld(2, entry("cpu", text(1, "2"))))
    async with grpc.aio.insecure_channel(stub.address) as channel:
        call = channel.unary_unary(wire.MAX_AVAILABLE_REPLICAS, request_serializer=None, response_deserializer=None)
        response = estimator_pb2.MaxAvailableReplicasResponse.FromString(await call(legacy_only))
    assert response.maxReplicas == 3


async def test_summary_source_is_read_at_each_call(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    current = [CLUSTER]
    stub = await stubs("m1", summary=lambda: current[0])
    estimator = make_estimator([stub])
    first = await estimator.max_available_replicas([CLUSTER], needs(cpu="1"))
    current[0] = Cluster(name="m1")
    second = await estimator.max_available_replicas([CLUSTER], needs(cpu="1"))
    assert (first.replicas["m1"], second.replicas["m1"]) == (7, 0)


async def test_estimator_stub_command_serves_until_sigterm(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "binding_scheduler.cli.main",
        "estimator-stub", "--cluster", "m1", "--port", "0", "--replicas", "4",
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    try:
        first = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        assert first.startswith("estimator-stub: cluster m1 serving on 127.0.0.1:")
        address = first.rsplit(" ", 1)[-1].strip()
        async with grpc.aio.insecure_channel(address) as channel:
            call = channel.unary_unary(
                wire.MAX_AVAILABLE_REPLICAS,
                request_serializer=wire.serialize,
                response_deserializer=estimator_pb2.MaxAvailableReplicasResponse.FromString,
            )
            response = await call(estimator_pb2.MaxAvailableReplicasRequest(cluster="m1"))
        assert response.maxReplicas == 4
    finally:
        process.send_signal(signal.SIGTERM)
        rest = (await asyncio.wait_for(process.stdout.read(), 30)).decode()
        code = await process.wait()
    assert code == 0
    assert rest == "estimator-stub: cluster m1 stopped after 1 calls\n"
