"""HealthServer over real HTTP on loopback: /metrics, /healthz, /readyz; one server or two; disabled servers;
readiness; start/stop idempotence."""

from __future__ import annotations

import inspect
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from binding_scheduler.scheduling.observability.health import HealthServer, ServeError, readiness
from binding_scheduler.scheduling.observability.metrics import CONTENT_TYPE, SchedulerMetrics

HOST = "127.0.0.1"


@pytest.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        yield session


async def get(client: aiohttp.ClientSession, port: int | None, path: str) -> tuple[int, str]:
    assert port is not None
    async with client.get(f"http://{HOST}:{port}{path}") as response:
        return response.status, await response.text()


def free_port() -> int:
    """A port nobody listens on right now (for the two-server mode, where both ports cannot be 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def always_ready() -> bool:
    return True


def server(
    metrics: SchedulerMetrics | None = None,
    *,
    metrics_port: int | None = 0,
    health_port: int | None = 0,
    ready: Callable[[], bool] = always_ready,
) -> HealthServer:
    return HealthServer(metrics or SchedulerMetrics(), metrics_host=HOST, metrics_port=metrics_port,
                        health_host=HOST, health_port=health_port, ready=ready)


async def test_one_server_serves_all_three_paths(client: aiohttp.ClientSession) -> None:
    metrics = SchedulerMetrics()
    async with server(metrics) as s:
        assert s.metrics_port is not None
        assert s.metrics_port == s.health_port != 0
        assert await get(client, s.health_port, "/healthz") == (200, "ok")
        assert await get(client, s.health_port, "/readyz") == (200, "ok")
        async with client.get(f"http://{HOST}:{s.metrics_port}/metrics") as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == CONTENT_TYPE
            body = await response.text()
        assert without_process(body) == without_process(metrics.render().decode())
        assert (await get(client, s.metrics_port, "/nope"))[0] == 404


def without_process(text: str) -> list[str]:
    """/metrics without the process's own figures (CPU seconds, memory), which move between two reads."""
    return [line for line in text.splitlines() if "process_" not in line]


async def test_metrics_are_live_and_parse(client: aiohttp.ClientSession) -> None:
    metrics = SchedulerMetrics()
    async with server(metrics) as s:
        metrics.binding_event("ClusterChanged")
        metrics.set_queue_depth(4, 0, 0)
        _, body = await get(client, s.metrics_port, "/metrics")
    samples = {(smp.name, tuple(sorted(smp.labels.items()))): smp.value
               for family in text_string_to_metric_families(body) for smp in family.samples}
    assert samples[("karmada_scheduler_queue_incoming_bindings_total", (("event", "ClusterChanged"),))] == 1
    assert samples[("binding_scheduler_queue_depth", (("queue", "active"),))] == 4


async def test_two_servers_split_paths(client: aiohttp.ClientSession) -> None:
    async with server(metrics_port=0, health_port=free_port()) as s:
        assert s.metrics_port is not None and s.health_port is not None
        assert s.metrics_port != s.health_port
        assert (await get(client, s.metrics_port, "/metrics"))[0] == 200
        assert (await get(client, s.metrics_port, "/healthz"))[0] == 404
        assert (await get(client, s.metrics_port, "/readyz"))[0] == 404
        assert await get(client, s.health_port, "/healthz") == (200, "ok")
        assert await get(client, s.health_port, "/readyz") == (200, "ok")
        assert (await get(client, s.health_port, "/metrics"))[0] == 404


async def test_metrics_disabled(client: aiohttp.ClientSession) -> None:
    async with server(metrics_port=None) as s:
        assert s.metrics_port is None
        assert await get(client, s.health_port, "/healthz") == (200, "ok")
        assert (await get(client, s.health_port, "/metrics"))[0] == 404


async def test_health_disabled(client: aiohttp.ClientSession) -> None:
    async with server(health_port=None) as s:
        assert s.health_port is None
        assert (await get(client, s.metrics_port, "/metrics"))[0] == 200
        assert (await get(client, s.metrics_port, "/healthz"))[0] == 404


async def test_both_disabled_serves_nothing() -> None:
    async with server(metrics_port=None, health_port=None) as s:
        assert not s.serving
        assert s.metrics_port is None and s.health_port is None


async def test_readiness_flips(client: aiohttp.ClientSession) -> None:
    state = {"ready": False}
    async with server(ready=lambda: state["ready"]) as s:
        assert await get(client, s.health_port, "/readyz") == (503, "not ready")
        assert await get(client, s.health_port, "/healthz") == (200, "ok")  # liveness does not follow readiness
        state["ready"] = True
        assert await get(client, s.health_port, "/readyz") == (200, "ok")
        state["ready"] = False
        assert (await get(client, s.health_port, "/readyz"))[0] == 503


async def test_failing_readiness_check_not_ready(
    client: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> bool:
        raise RuntimeError("token abc123 rejected by https://10.0.0.1")

    async with server(ready=broken) as s:
        status, text = await get(client, s.health_port, "/readyz")
        assert (status, text) == (503, "not ready: the readiness check failed (see the scheduler's log)")
        assert await get(client, s.health_port, "/healthz") == (200, "ok")
    assert "token abc123 rejected" in caplog.text


async def test_stop_is_idempotent_and_really_stops(client: aiohttp.ClientSession) -> None:
    s = server(metrics_port=0, health_port=free_port())
    await s.stop()  # before start: nothing to do
    await s.start()
    ports = (s.metrics_port, s.health_port)
    assert s.serving
    await s.stop()
    await s.stop()
    assert not s.serving
    assert s.metrics_port is None and s.health_port is None
    for port in ports:
        with pytest.raises(aiohttp.ClientConnectionError):
            await get(client, port, "/healthz")


async def test_start_is_idempotent_and_restartable(client: aiohttp.ClientSession) -> None:
    s = server()
    await s.start()
    port = s.metrics_port
    await s.start()
    assert s.metrics_port == port
    await s.stop()
    await s.start()
    try:
        assert await get(client, s.health_port, "/healthz") == (200, "ok")
    finally:
        await s.stop()


async def test_port_in_use_fails_start_and_leaves_nothing_running(client: aiohttp.ClientSession) -> None:
    async with server() as first:
        taken = first.metrics_port
        second = server(metrics_port=0, health_port=taken)
        with pytest.raises(ServeError, match=rf"cannot serve /healthz, /readyz on 127\.0\.0\.1:{taken}: .*address "
                           r"already in use \(set by spec\.metrics\.healthHost/healthPort"):
            await second.start()
        assert not second.serving
        assert second.metrics_port is None and second.health_port is None
        await second.stop()
        assert await get(client, taken, "/healthz") == (200, "ok")  # the first server is untouched


@pytest.mark.parametrize(("metrics_port", "health_port"), [(-1, 0), (0, 65536)])
def test_invalid_ports(metrics_port: int, health_port: int) -> None:
    with pytest.raises(ValueError, match="port"):
        server(metrics_port=metrics_port, health_port=health_port)


def test_defaults_are_karmadas_ports() -> None:
    parameters = inspect.signature(HealthServer).parameters
    assert (parameters["metrics_port"].default, parameters["health_port"].default) == (8080, 10351)
    assert (parameters["metrics_host"].default, parameters["health_host"].default) == ("", "")


def can_connect(host: str, port: int | None) -> bool:
    assert port is not None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        return s.connect_ex((host, port)) == 0


def has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not has_ipv6_loopback(), reason="no IPv6 loopback on this machine")


@needs_ipv6
async def test_host_of_127_0_0_1_listens_on_that_address_only() -> None:
    async with HealthServer(SchedulerMetrics(), metrics_host=HOST, metrics_port=0, health_port=None,
                            ready=always_ready) as s:
        assert (can_connect("127.0.0.1", s.metrics_port), can_connect("::1", s.metrics_port)) == (True, False)


@needs_ipv6
async def test_empty_host_listens_on_every_interface() -> None:
    async with HealthServer(SchedulerMetrics(), metrics_host="", metrics_port=0, health_port=None,
                            ready=always_ready) as s:
        assert (can_connect("127.0.0.1", s.metrics_port), can_connect("::1", s.metrics_port)) == (True, True)


@needs_ipv6
async def test_each_server_has_own_host(client: aiohttp.ClientSession) -> None:
    async with HealthServer(SchedulerMetrics(), metrics_host="::1", metrics_port=free_port(),
                            health_host=HOST, health_port=free_port(), ready=always_ready) as s:
        async with client.get(f"http://[::1]:{s.metrics_port}/metrics") as response:
            assert response.status == 200
        assert await get(client, s.health_port, "/healthz") == (200, "ok")
        assert (can_connect("127.0.0.1", s.metrics_port), can_connect("::1", s.health_port)) == (False, False)


@needs_ipv6
async def test_equal_ports_on_different_hosts_are_two_servers(client: aiohttp.ClientSession) -> None:
    port = free_port()
    async with HealthServer(SchedulerMetrics(), metrics_host=HOST, metrics_port=port, health_host="::1",
                            health_port=port, ready=always_ready) as s:
        assert await get(client, s.metrics_port, "/healthz") == (404, "404: Not Found")
        async with client.get(f"http://[::1]:{port}/healthz") as response:
            assert (response.status, await response.text()) == (200, "ok")


# -- the readiness rule ------------------------------------------------------------------------------------------


LEADING = {"stopping": False, "lease_lost": False, "standing_by": False, "lease_problem": None, "scheduling": True,
           "watch_problem": None}
STANDBY = {**LEADING, "standing_by": True, "scheduling": False}


@pytest.mark.parametrize(("state", "ready"), [
    pytest.param(LEADING, True, id="a leader scheduling"),
    pytest.param({**LEADING, "scheduling": False}, False, id="a leader listing its caches"),
    pytest.param({**LEADING, "watch_problem": "the watch of clusters is failing"}, False,
                 id="a leader whose watch fails"),
    pytest.param({**LEADING, "lease_problem": "no answer within 10s"}, True,
                 id="a leader: the Lease's renewals are the keeper's, not the probe's"),
    pytest.param({**LEADING, "stopping": True}, False, id="a leader stopping"),
    pytest.param({**LEADING, "lease_lost": True}, False, id="a leader that lost its Lease"),
    pytest.param(STANDBY, True, id="a standby taking part in the election"),
    pytest.param({**STANDBY, "lease_problem": "no answer within 10s"}, False, id="a standby whose Lease hangs"),
    pytest.param({**STANDBY, "lease_problem": "403 Forbidden"}, False, id="a standby refused the Lease"),
    pytest.param({**STANDBY, "watch_problem": "the watch of clusters is failing"}, True,
                 id="a standby watches nothing yet"),
    pytest.param({**STANDBY, "stopping": True}, False, id="a standby stopping"),
])
def test_readiness_rule(state: dict[str, Any], ready: bool) -> None:
    assert readiness(**state) is ready
