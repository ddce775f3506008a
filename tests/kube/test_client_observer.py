"""The API client's RequestObserver: each attempt's result and each request's latency, with client-go's labels
(code, method, host)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, NotFound, WriteGate, load_connection
from binding_scheduler.kube.client import server_host
from binding_scheduler.kube.connection import Connection
from binding_scheduler.kube.errors import TransportError
from binding_scheduler.kube.gate import WriteGateClosed
from tests.kube.helpers import rb_body, rb_path


class Heard:
    """A RequestObserver that keeps what it hears."""

    def __init__(self) -> None:
        self.results: list[tuple[str, str, str]] = []
        self.latencies: list[tuple[str, str, float]] = []

    def request_result(self, code: str, method: str, host: str) -> None:
        self.results.append((code, method, host))

    def request_latency(self, method: str, host: str, seconds: float) -> None:
        self.latencies.append((method, host, seconds))


@pytest.fixture
def heard() -> Heard:
    return Heard()


@pytest.fixture
async def observed(api: DevCluster, gate: WriteGate, heard: Heard) -> AsyncIterator[ApiClient]:
    async with ApiClient(load_connection(str(api.kubeconfig_path)), gate, observer=heard) as kube:
        yield kube


def host_of(api: DevCluster) -> str:
    return f"127.0.0.1:{api.port}"


async def test_each_answer_is_one_result(
    api: DevCluster, observed: ApiClient, heard: Heard
) -> None:
    await observed.create(rb_path(), rb_body("rb1"))
    await observed.patch_merge(rb_path("rb1"), {"spec": {"replicas": 2}})
    with pytest.raises(NotFound):
        await observed.get(rb_path("missing"))
    host = host_of(api)
    assert heard.results == [("201", "POST", host), ("200", "PATCH", host), ("404", "GET", host)]
    assert [(method, h) for method, h, _ in heard.latencies] == [("POST", host), ("PATCH", host), ("GET", host)]


async def test_retry_after_counts_each_attempt(
    api: DevCluster, observed: ApiClient, heard: Heard, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=503, retry_after=0, message="try again", times=1)
    await observed.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    host = host_of(api)
    assert heard.results == [("503", "PATCH", host), ("200", "PATCH", host)]
    assert [(method, h) for method, h, _ in heard.latencies] == [("PATCH", host)]


async def test_attempt_server_never_answered_is_error_result(
    api: DevCluster, observed: ApiClient, heard: Heard, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="GET", drop=True)
    with pytest.raises(TransportError):
        await observed.get(rb_path("rb1"))
    assert heard.results == [("<error>", "GET", host_of(api))]
    assert len(heard.latencies) == 1


async def test_refused_connection_is_error_result(gate: WriteGate, heard: Heard) -> None:
    async with ApiClient(Connection(server="http://127.0.0.1:9"), gate, observer=heard) as refused:
        with pytest.raises(TransportError):
            await refused.get(rb_path("rb1"))
    assert heard.results == [("<error>", "GET", "127.0.0.1:9")]


async def test_write_refused_by_closed_gate_is_not_observed(
    observed: ApiClient, gate: WriteGate, heard: Heard
) -> None:
    gate.close("standing down")
    with pytest.raises(WriteGateClosed):
        await observed.create(rb_path(), rb_body("rb1"))
    assert (heard.results, heard.latencies) == ([], [])


async def test_latency_includes_wait_for_rate_limit_token(api: DevCluster, heard: Heard) -> None:
    async with ApiClient(load_connection(str(api.kubeconfig_path)), WriteGate(), qps=5, burst=1,
                         observer=heard) as slow:
        await slow.list(rb_path())
        await slow.list(rb_path())  # waits about 0.2 s for its token
    assert heard.latencies[1][2] >= 0.15


@pytest.mark.parametrize(("server", "host"), [
    ("https://10.0.0.1:6443", "10.0.0.1:6443"),
    ("https://kubernetes.default.svc", "kubernetes.default.svc"),
    ("https://admin:pw@[fd00::1]:6443/k8s/clusters/c-1", "[fd00::1]:6443"),
])
def test_host_label_is_servers_host_as_go_reads_it_from_url(server: str, host: str) -> None:
    assert server_host(server) == host
