"""Fixtures for the estimator tests: real grpc.aio estimator stubs on loopback and clients closed after use."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from binding_scheduler.estimation import AccurateEstimator, EstimatorSettings
from binding_scheduler.estimation.stub import EstimatorStub
from tests.estimation.helpers import MakeEstimator, StartStub


@pytest.fixture
async def stubs() -> AsyncIterator[StartStub]:
    """`await stubs(cluster_name, **EstimatorStub options)`: a started stub, stopped after the test."""
    started: list[EstimatorStub] = []

    async def start(cluster_name: str, **options: Any) -> EstimatorStub:
        stub = EstimatorStub(cluster_name, **options)
        await stub.start()
        started.append(stub)
        return stub

    yield start
    for stub in started:
        await stub.stop()


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
async def make_estimator(registry: CollectorRegistry) -> AsyncIterator[MakeEstimator]:
    """`make_estimator(stubs, endpoints=..., **settings)`: a client with the stubs as static endpoints."""
    made: list[AccurateEstimator] = []

    def make(
        targets: Sequence[EstimatorStub] = (),
        *,
        endpoints: dict[str, str] | None = None,
        service_lookup: Any = None,
        **settings: Any,
    ) -> AccurateEstimator:
        all_endpoints = {stub.cluster_name: stub.address for stub in targets}
        all_endpoints.update(endpoints or {})
        estimator = AccurateEstimator(
            EstimatorSettings(endpoints=all_endpoints, **settings), service_lookup=service_lookup, registry=registry
        )
        made.append(estimator)
        return estimator

    yield make
    for estimator in made:
        await estimator.close()


@pytest.fixture
def refused_address() -> str:
    """A loopback address where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"127.0.0.1:{port}"
