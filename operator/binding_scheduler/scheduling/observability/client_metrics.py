"""What a Kubernetes monitoring stack reads from every Go component, here with the names, types, labels and buckets
the Go libraries give them: client-go's request metrics (`k8s.io/component-base/metrics/prometheus/restclient`)
and the process collector's `process_*` (`prometheus/client_golang`'s `collectors.NewProcessCollector`, which
controller-runtime registers on the registry karmada-scheduler serves).

`RestClientMetrics` is a `kube.RequestObserver`: the service hands it to each of its API clients.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector

from .children import Children

REQUEST_DURATION_BUCKETS: tuple[float, ...] = (0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60)
"""client-go's `rest_client_request_duration_seconds` bounds (component-base's `requestLatency`)."""


class RestClientMetrics:
    """`rest_client_requests_total{code,method,host}` and `rest_client_request_duration_seconds{verb,host}`, fed by
    the API clients (`kube.ApiClient(observer=...)`). Series appear once first observed, as in Go."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._requests = Counter(
            "rest_client_requests",
            "HTTP requests sent to the API server, by the answer's status code (<error> when none came), HTTP "
            "method and server host.",
            ["code", "method", "host"], registry=registry)
        self._duration = Histogram(
            "rest_client_request_duration_seconds",
            "Time from a request's call to its end (rate limit and Retry-After waits included), in seconds, by "
            "HTTP method and server host.",
            ["verb", "host"], buckets=REQUEST_DURATION_BUCKETS, registry=registry)
        self._requests_of = Children(self._requests)
        self._duration_of = Children(self._duration)

    def request_result(self, code: str, method: str, host: str) -> None:
        self._requests_of(code, method, host).inc()

    def request_latency(self, method: str, host: str, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"a duration must not be negative (got {seconds})")
        self._duration_of(method, host).observe(seconds)


def register_process_collector(registry: CollectorRegistry) -> None:
    """`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
    `process_start_time_seconds`, `process_open_fds`, `process_max_fds` of this process (read from /proc:
    none elsewhere). Decision processes (`decisionProcesses`) are not included."""
    ProcessCollector(registry=registry)


def go_float(bound: str) -> str:
    """A bucket bound as Go's exposition writes it (`strconv.FormatFloat(f, 'g', -1, 64)`): prometheus_client
    writes "1.0" where Go writes "1"; every other form (0.005, 1e-05, +Inf) is already the same."""
    return bound[:-2] if bound.endswith(".0") else bound
