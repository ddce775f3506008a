"""The scheduler's Prometheus metrics: Karmada's (those of `pkg/scheduler/metrics/metrics.go`, with the same names,
types, labels and buckets), those every Go component has (client-go's `rest_client_*`, `process_*`:
`client_metrics.py`) and ours (prefix `binding_scheduler_`: queue depth, passes in flight, pass outcomes,
writes, the shutdown report, the estimators' failures).

The scheduling code calls the typed methods of `SchedulerMetrics` with the label enums of `labels.py` and never
spells a label itself, so a typo is a type error instead of a new series in production. Counts and durations
are checked (never negative). Each instance owns its registry (a fresh one by default), so several instances
and tests never collide.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from binding_scheduler import __version__

from ...algorithm.triggers import ScheduleType
from ...estimation.failures import failure_counter
from ..framework.hooks import ExtensionPoint, FrameworkHook
from .children import Children
from .client_metrics import RestClientMetrics, go_float, register_process_collector
from .labels import (
    AttemptResult,
    BindingEvent,
    PassOutcome,
    PluginPoint,
    PluginResult,
    Queue,
    ScheduleStep,
    ShutdownFate,
    WriteKind,
    WriteResult,
)

# Prometheus text format 0.0.4, which `generate_latest` produces.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Karmada's label values (the constants of `pkg/scheduler/metrics/metrics.go` and
# `pkg/scheduler/framework/runtime/framework.go`, and the result codes of
# `pkg/scheduler/framework/interface.go: Code`), as tuples for the tests' and docs' tables.
ATTEMPT_RESULTS: tuple[str, ...] = tuple(AttemptResult)
SCHEDULE_TYPES: tuple[str, ...] = tuple(ScheduleType)
SCHEDULE_STEPS: tuple[str, ...] = tuple(ScheduleStep)
BINDING_EVENTS: tuple[str, ...] = tuple(BindingEvent)
EXTENSION_POINTS: tuple[str, ...] = (PluginPoint.FILTER, PluginPoint.SCORE)
PLUGIN_EXTENSION_POINTS: tuple[str, ...] = tuple(PluginPoint)
PLUGIN_RESULTS: tuple[str, ...] = tuple(PluginResult)

# Ours.
QUEUES: tuple[str, ...] = tuple(Queue)
PASS_OUTCOMES: tuple[str, ...] = tuple(PassOutcome)
WRITE_KINDS: tuple[str, ...] = tuple(WriteKind)
WRITE_RESULTS: tuple[str, ...] = tuple(WriteResult)
SHUTDOWN_FATES: tuple[str, ...] = tuple(ShutdownFate)


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Bucket upper bounds as Go's `prometheus.ExponentialBuckets` computes them (repeated multiplication, so the
    exposed `le` values are the same floats Karmada exposes)."""
    if start <= 0 or factor <= 1 or count < 1:
        raise ValueError(f"exponential buckets need start > 0, factor > 1, count >= 1 (got {start}, {factor}, {count})")
    bounds: list[float] = []
    bound = start
    for _ in range(count):
        bounds.append(bound)
        bound *= factor
    return tuple(bounds)


E2E_BUCKETS = exponential_buckets(0.001, 2, 15)
ALGORITHM_BUCKETS = exponential_buckets(0.001, 2, 15)
EXTENSION_POINT_BUCKETS = exponential_buckets(0.0001, 2, 12)
PLUGIN_BUCKETS = exponential_buckets(0.00001, 1.5, 20)


def _check_count(what: str, value: int) -> int:
    if value < 0:
        raise ValueError(f"{what} must not be negative (got {value})")
    return value


def _check_seconds(seconds: float) -> float:
    if seconds < 0:
        raise ValueError(f"a duration must not be negative (got {seconds})")
    return seconds


class _WithoutCreated(Collector):
    """The registry's families minus prometheus_client's `_created` series, which Karmada (Go) does not expose, and
    with bucket bounds written as Go writes them (`le="1"`, not `le="1.0"`)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        for family in self._registry.collect():
            trimmed = Metric(family.name, family.documentation, family.type, family.unit)
            trimmed.samples = [
                s._replace(labels={**s.labels, "le": go_float(s.labels["le"])}) if "le" in s.labels else s
                for s in family.samples if not s.name.endswith("_created")
            ]
            yield trimmed


BUILD_INFO = ("git_version", "git_commit", "git_short_commit", "git_tree_state", "build_date", "go_version",
              "compiler", "platform")
"""Karmada's `karmada_build_info` labels (`pkg/metrics/version.go: NewBuildInfoCollector`), in its order."""


def build_info_labels() -> dict[str, str]:
    """Karmada's build labels as a Python package has them: the version, no commit or build date (a wheel
    carries none), no Go; `compiler` the Python implementation, and `python_version` beside them."""
    labels = dict.fromkeys(BUILD_INFO, "")
    labels.update(
        git_version=__version__,
        compiler=platform.python_implementation().lower(),
        platform=f"{platform.system().lower()}/{platform.machine().lower()}",
        python_version=platform.python_version(),
    )
    return labels


FAULTS = ("owner", "operator")
"""Who must act on a failed attempt (`binding_scheduler_schedule_errors_total{fault}`)."""

class SchedulerMetrics:
    """Every metric the scheduler exports, registered in `registry` (a fresh `CollectorRegistry` by default)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry: CollectorRegistry = registry if registry is not None else CollectorRegistry()
        self._register_karmadas(self.registry)
        self._register_ours(self.registry)
        self._children()
        self._zero_our_series()
        self.rest_client = RestClientMetrics(self.registry)
        """client-go's request metrics: the `kube.RequestObserver` of every API client of the service."""
        register_process_collector(self.registry)
        failure_counter(self.registry)  # the accurate estimators' (estimation/failures.py), exposed from the start

    def _register_karmadas(self, r: CollectorRegistry) -> None:
        """Karmada's (`pkg/scheduler/metrics/metrics.go`, `pkg/metrics/version.go`). prometheus_client appends
        `_total` to counter names on exposition."""
        self._attempts = Counter(
            "karmada_scheduler_schedule_attempts",
            "Number of attempts to schedule a binding, by result and schedule type.",
            ["result", "schedule_type"], registry=r)
        self._e2e = Histogram(
            "karmada_scheduler_e2e_scheduling_duration_seconds",
            "E2E scheduling latency in seconds, by result and schedule type.",
            ["result", "schedule_type"], buckets=E2E_BUCKETS, registry=r)
        self._algorithm = Histogram(
            "karmada_scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds, by step.",
            ["schedule_step"], buckets=ALGORITHM_BUCKETS, registry=r)
        self._incoming = Counter(
            "karmada_scheduler_queue_incoming_bindings",
            "Number of bindings added to the scheduling queue, by the event that added them.",
            ["event"], registry=r)
        self._extension_point = Histogram(
            "karmada_scheduler_framework_extension_point_duration_seconds",
            "Latency of running an extension point of the scheduling framework, in seconds.",
            ["extension_point", "result"], buckets=EXTENSION_POINT_BUCKETS, registry=r)
        self._plugin = Histogram(
            "karmada_scheduler_plugin_execution_duration_seconds",
            "Duration of running a plugin at a specific extension point, in seconds.",
            ["plugin", "extension_point", "result"], buckets=PLUGIN_BUCKETS, registry=r)
        # Karmada's open PR #7832 (binding priority preemption).
        self._preemption_attempts = Counter(
            "karmada_scheduler_preemption_attempts",
            "Number of preemption attempts, by result.",
            ["result"], registry=r)
        self._preemption_victims = Counter(
            "karmada_scheduler_preemption_victims",
            "Number of bindings evicted by preemption.", registry=r)
        self._build_info = Gauge(
            "karmada_build_info",
            "Build information of the running scheduler; the value is always 1.",
            [*BUILD_INFO, "python_version"], registry=r)
        self._build_info.labels(**build_info_labels()).set(1)

    def _register_ours(self, r: CollectorRegistry) -> None:
        self._queue_depth = Gauge(
            "binding_scheduler_queue_depth",
            "Number of binding keys waiting in each sub-queue.",
            ["queue"], registry=r)
        self._in_flight = Gauge(
            "binding_scheduler_passes_in_flight",
            "Number of scheduling passes running now.", registry=r)
        self._outcomes = Counter(
            "binding_scheduler_pass_outcomes",
            "Number of finished scheduling passes, by outcome.",
            ["outcome"], registry=r)
        self._errors = Counter(
            "binding_scheduler_schedule_errors",
            "Number of failed scheduling attempts, by who must act: the binding's owner or the fleet's (a placement "
            "that cannot be met, no room) or the scheduler's operator (an estimator, a plugin, a write, the API).",
            ["fault"], registry=r)
        self._writes = Counter(
            "binding_scheduler_writes",
            "Number of API writes (spec patch, status patch, event), by result.",
            ["kind", "result"], registry=r)
        self._shutdown_seconds = Gauge(
            "binding_scheduler_shutdown_duration_seconds",
            "Duration of the last shutdown, as reported by the shutdown report, in seconds.",
            registry=r)
        self._shutdown_passes = Counter(
            "binding_scheduler_shutdown_passes",
            "Passes found in flight at shutdown, by fate: cancelled before their commit point, drained, "
            "or cut at the drain deadline.",
            ["fate"], registry=r)
        self._leader = Gauge(
            "binding_scheduler_leader",
            "1 while this instance holds the leader Lease, else 0.", registry=r)
        self._preemptions_limited = Counter(
            "binding_scheduler_preemptions_limited",
            "Preemptions not made because of a bound: victims (spec.preemption.maxVictims) or rate "
            "(spec.preemption.maxPerMinute).",
            ["limit"], registry=r)
        self._config_valid = Gauge(
            "binding_scheduler_config_valid",
            "1 when the last SchedulerConfiguration seen was valid, 0 when the last good one is kept in force.",
            registry=r)

    def _children(self) -> None:
        """The labelled series observed on every pass, each resolved once (`Children`)."""
        self._attempts_of = Children(self._attempts)
        self._e2e_of = Children(self._e2e)
        self._algorithm_of = Children(self._algorithm)
        self._incoming_of = Children(self._incoming)
        self._extension_point_of = Children(self._extension_point)
        self._plugin_of = Children(self._plugin)
        self._queue_depth_of = Children(self._queue_depth)
        self._errors_of = Children(self._errors)
        self._outcomes_of = Children(self._outcomes)
        self._writes_of = Children(self._writes)

    def _zero_our_series(self) -> None:
        """Our own series exist from the start (zero), so rate() and alerts see them before the first event."""
        for queue in QUEUES:
            self._queue_depth.labels(queue=queue).set(0)
        for outcome in PASS_OUTCOMES:
            self._outcomes.labels(outcome=outcome)
        for kind in WRITE_KINDS:
            for result in WRITE_RESULTS:
                self._writes.labels(kind=kind, result=result)
        for fate in SHUTDOWN_FATES:
            self._shutdown_passes.labels(fate=fate)
        for limit in ("victims", "rate"):
            self._preemptions_limited.labels(limit=limit)
        for fault in FAULTS:
            self._errors.labels(fault=fault)
        self._in_flight.set(0)
        self._leader.set(0)
        self._config_valid.set(1)  # the defaults are valid until a configuration says otherwise

    # --- Karmada's ---------------------------------------------------------------------------------------------

    def observe_attempt(self, result: AttemptResult, schedule_type: ScheduleType, seconds: float) -> None:
        """One scheduling attempt that actually ran, observed with its final result:
        `schedule_attempts_total` and `e2e_scheduling_duration_seconds`. Karmada's
        `pkg/scheduler/scheduler.go: doScheduleBinding` passes `metrics.BindingSchedule` the error that
        `scheduleResourceBinding` returns after its deferred condition patch, which turns a FitError into nil:
        a FitError counts as `scheduled`."""
        _check_seconds(seconds)
        self._attempts_of(result, schedule_type).inc()
        self._e2e_of(result, schedule_type).observe(seconds)

    def observe_step(self, step: ScheduleStep, seconds: float) -> None:
        """The duration of one algorithm step (Filter, Score, Select, AssignReplicas)."""
        _check_seconds(seconds)
        self._algorithm_of(step).observe(seconds)

    def binding_event(self, event: BindingEvent) -> None:
        """A binding key entered the queue because of `event` (Karmada's
        `pkg/scheduler/metrics/metrics.go: CountSchedulerBindings`, called by the handlers of
        `pkg/scheduler/event_handler.go` and by `pkg/scheduler/scheduler.go: handleErr`)."""
        self._incoming_of(event).inc()

    def observe_extension_point(self, extension_point: PluginPoint, result: PluginResult, seconds: float) -> None:
        """One run of a framework extension point (Filter or Score)."""
        _check_seconds(seconds)
        self._extension_point_of(extension_point, result).observe(seconds)

    def observe_plugin(self, plugin: str, extension_point: PluginPoint, result: PluginResult, seconds: float) -> None:
        """One run of one plugin at one extension point. Observed directly (Karmada samples these through a
        buffered recorder that drops when full; we do not drop)."""
        if not plugin:
            raise ValueError("a plugin name must not be empty")
        _check_seconds(seconds)
        self._plugin_of(plugin, extension_point, result).observe(seconds)

    # --- ours ----------------------------------------------------------------------------------------------------

    def set_queue_depth(self, active: int, backoff: int, unschedulable: int) -> None:
        """The number of keys in each sub-queue now."""
        depths = {Queue.ACTIVE: active, Queue.BACKOFF: backoff, Queue.UNSCHEDULABLE: unschedulable}
        for queue, depth in depths.items():
            _check_count(f"{queue} queue depth", depth)
        for queue, depth in depths.items():
            self._queue_depth_of(queue).set(depth)

    def pass_started(self) -> None:
        """A pass began; pair with `pass_finished`."""
        self._in_flight.inc()

    def schedule_error(self, *, owner: bool) -> None:
        """A scheduling attempt failed; `owner`: the binding's owner or the fleet's must act, else the operator."""
        self._errors_of("owner" if owner else "operator").inc()

    def pass_finished(self, outcome: PassOutcome) -> None:
        """A pass ended with `outcome`."""
        self._in_flight.dec()
        self._outcomes_of(outcome).inc()

    def preemption_attempt(self, *, success: bool, victims: int) -> None:
        """A preemption was carried out (`victims` evicted) or stopped at a victim it could not evict."""
        self._preemption_attempts.labels(result="success" if success else "error").inc()
        if victims:
            self._preemption_victims.inc(victims)

    def preemption_limited(self, limit: str) -> None:
        """A preemption was not made: `limit` is `victims` or `rate`."""
        self._preemptions_limited.labels(limit=limit).inc()

    def write(self, kind: WriteKind, result: WriteResult) -> None:
        """One write attempt (or one refused by the closed write gate) and how it ended."""
        self._writes_of(kind, result).inc()

    def shutdown_report(self, cancelled: int, drained: int, cut: int, seconds: float) -> None:
        """The shutdown report: passes cancelled before their commit point, drained, cut at the deadline, and
        how long the shutdown took."""
        fates = {ShutdownFate.CANCELLED: cancelled, ShutdownFate.DRAINED: drained, ShutdownFate.CUT: cut}
        for fate, count in fates.items():
            _check_count(f"{fate} passes", count)
        _check_seconds(seconds)
        for fate, count in fates.items():
            self._shutdown_passes.labels(fate=fate).inc(count)
        self._shutdown_seconds.set(seconds)

    def set_leader(self, leader: bool) -> None:
        """Whether this instance holds the leader Lease."""
        self._leader.set(1 if leader else 0)

    def set_config_valid(self, valid: bool) -> None:
        """Whether the last configuration seen was valid."""
        self._config_valid.set(1 if valid else 0)

    # --- exposition ----------------------------------------------------------------------------------------------

    def render(self) -> bytes:
        """The registry in the Prometheus text format (0.0.4, `CONTENT_TYPE`), without `_created` series."""
        return generate_latest(_WithoutCreated(self.registry))


class MetricsHook(FrameworkHook):
    """The framework's step and plugin timings, into Karmada's histograms (its steps and extension points only:
    Filter, Score, Select, AssignReplicas)."""

    timings_only = True

    _STEPS: Mapping[ExtensionPoint, ScheduleStep] = MappingProxyType({
        ExtensionPoint.FILTER: ScheduleStep.FILTER,
        ExtensionPoint.SCORE: ScheduleStep.SCORE,
        ExtensionPoint.SELECT: ScheduleStep.SELECT,
        ExtensionPoint.ASSIGN: ScheduleStep.ASSIGN_REPLICAS,
    })
    _POINTS: Mapping[ExtensionPoint, PluginPoint] = MappingProxyType({
        ExtensionPoint.FILTER: PluginPoint.FILTER,
        ExtensionPoint.SCORE: PluginPoint.SCORE,
    })

    def __init__(self, metrics: SchedulerMetrics) -> None:
        self.metrics = metrics

    def step(self, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        step = self._STEPS.get(point)
        if step is None:
            return
        self.metrics.observe_step(step, seconds)
        karmada = self._POINTS.get(point)
        if karmada is not None:
            self.metrics.observe_extension_point(karmada, result, seconds)

    def plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        karmada = self._POINTS.get(point)
        if karmada is not None:
            self.metrics.observe_plugin(plugin, karmada, result, seconds)
