"""What every Go component exposes, as SchedulerMetrics exposes it: client-go's request metrics (fed by the API
client) and the process's `process_*`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, WriteGate, load_connection
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from tests.kube.helpers import rb_body, rb_path


@pytest.fixture
async def api() -> AsyncIterator[DevCluster]:
    async with DevCluster() as cluster:
        yield cluster


def samples(metrics: SchedulerMetrics, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Sample name -> {sorted labels: value}, read back from the text format."""
    return {tuple(sorted(s.labels.items())): s.value
            for family in text_string_to_metric_families(metrics.render().decode())
            for s in family.samples if s.name == name}


async def test_api_client_counts_rest_requests(api: DevCluster) -> None:
    metrics = SchedulerMetrics()
    async with ApiClient(load_connection(str(api.kubeconfig_path)), WriteGate(),
                         observer=metrics.rest_client) as client:
        await client.create(rb_path(), rb_body("rb1"))
        await client.get(rb_path("rb1"))
        await client.get(rb_path("rb1"))
    host = f"127.0.0.1:{api.port}"
    assert samples(metrics, "rest_client_requests_total") == {
        (("code", "201"), ("host", host), ("method", "POST")): 1.0,
        (("code", "200"), ("host", host), ("method", "GET")): 2.0,
    }
    assert samples(metrics, "rest_client_request_duration_seconds_count") == {
        (("host", host), ("verb", "POST")): 1.0,
        (("host", host), ("verb", "GET")): 2.0,
    }


def test_duration_buckets_are_client_gos() -> None:
    metrics = SchedulerMetrics()
    metrics.rest_client.request_latency("GET", "h:443", 0.3)
    text = metrics.render().decode()
    bounds = [line.split('le="')[1].split('"')[0] for line in text.splitlines()
              if line.startswith("rest_client_request_duration_seconds_bucket{")]
    assert bounds == ["0.005", "0.025", "0.1", "0.25", "0.5", "1", "2", "4", "8", "15", "30", "60", "+Inf"]


def test_negative_duration_rejected() -> None:
    metrics = SchedulerMetrics()
    with pytest.raises(ValueError, match="must not be negative"):
        metrics.rest_client.request_latency("GET", "h:443", -1)
    assert samples(metrics, "rest_client_request_duration_seconds_count") == {}


def test_rest_client_series_appear_only_once_observed() -> None:
    metrics = SchedulerMetrics()
    assert samples(metrics, "rest_client_requests_total") == {}
    assert samples(metrics, "rest_client_request_duration_seconds_count") == {}


def test_process_series_monitoring_stack_reads_are_exposed() -> None:
    exposed = {name for name in ("process_resident_memory_bytes", "process_virtual_memory_bytes",
                                 "process_cpu_seconds_total", "process_start_time_seconds", "process_open_fds",
                                 "process_max_fds")
               if samples(SchedulerMetrics(), name).get(()) is not None}
    assert exposed == {"process_resident_memory_bytes", "process_virtual_memory_bytes", "process_cpu_seconds_total",
                       "process_start_time_seconds", "process_open_fds", "process_max_fds"}
