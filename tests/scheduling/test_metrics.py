"""SchedulerMetrics: every metric's exposed name, type, labels and buckets (Karmada's pkg/scheduler/metrics/metrics.go),
every typed method, and label values as enums. Everything is read back from the text format, as Prometheus would scrape
it."""

from __future__ import annotations

import math
import platform
import typing
from collections.abc import Callable

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from binding_scheduler import __version__
from binding_scheduler.algorithm.triggers import ScheduleType
from binding_scheduler.scheduling.observability.labels import (
    AttemptResult,
    BindingEvent,
    PassOutcome,
    PluginPoint,
    PluginResult,
    ScheduleStep,
    WriteKind,
    WriteResult,
)
from binding_scheduler.scheduling.observability.metrics import (
    ATTEMPT_RESULTS,
    BINDING_EVENTS,
    EXTENSION_POINTS,
    PASS_OUTCOMES,
    PLUGIN_EXTENSION_POINTS,
    PLUGIN_RESULTS,
    SCHEDULE_STEPS,
    SCHEDULE_TYPES,
    SHUTDOWN_FATES,
    WRITE_KINDS,
    WRITE_RESULTS,
    SchedulerMetrics,
    exponential_buckets,
)


def scrape(metrics: SchedulerMetrics) -> dict[str, tuple[str, list[Sample]]]:
    """Family name (as the parser names it) -> (type, samples)."""
    return {f.name: (f.type, list(f.samples)) for f in text_string_to_metric_families(metrics.render().decode())}


def value(metrics: SchedulerMetrics, sample_name: str, **labels: str) -> float:
    found = [s.value for _, samples in scrape(metrics).values() for s in samples
             if s.name == sample_name and s.labels == labels]
    assert len(found) == 1, f"{sample_name}{labels}: {found}"
    return found[0]


def go_exponential(start: float, factor: float, count: int) -> list[float]:
    out, bound = [], start
    for _ in range(count):
        out.append(bound)
        bound *= factor
    return out


def bucket_bounds(metrics: SchedulerMetrics, family: str) -> list[float]:
    _, samples = scrape(metrics)[family]
    first = next(s.labels for s in samples if s.name == f"{family}_bucket")
    key = {k: v for k, v in first.items() if k != "le"}
    return [float(s.labels["le"]) for s in samples
            if s.name == f"{family}_bucket" and {k: v for k, v in s.labels.items() if k != "le"} == key]


# --- names, types, labels, buckets ---------------------------------------------------------------------------------

def observed_everywhere() -> SchedulerMetrics:
    m = SchedulerMetrics()
    m.observe_attempt("scheduled", "ReconcileSchedule", 0.01)
    m.observe_step("Filter", 0.001)
    m.binding_event("BindingAdd")
    m.observe_extension_point("Filter", "Success", 0.0001)
    m.observe_plugin("TaintToleration", "Filter", "Success", 0.00001)
    m.preemption_attempt(success=True, victims=2)
    m.rest_client.request_result("200", "GET", "10.0.0.1:6443")
    m.rest_client.request_latency("GET", "10.0.0.1:6443", 0.01)
    return m


EXPECTED_FAMILIES = {
    # parser family name: (type, label names)
    "karmada_scheduler_schedule_attempts": ("counter", {"result", "schedule_type"}),
    "karmada_scheduler_e2e_scheduling_duration_seconds": ("histogram", {"result", "schedule_type"}),
    "karmada_scheduler_scheduling_algorithm_duration_seconds": ("histogram", {"schedule_step"}),
    "karmada_scheduler_queue_incoming_bindings": ("counter", {"event"}),
    "karmada_scheduler_framework_extension_point_duration_seconds": ("histogram", {"extension_point", "result"}),
    "karmada_scheduler_plugin_execution_duration_seconds": ("histogram", {"plugin", "extension_point", "result"}),
    "karmada_scheduler_preemption_attempts": ("counter", {"result"}),
    "karmada_scheduler_preemption_victims": ("counter", set()),
    "karmada_build_info": ("gauge", {"git_version", "git_commit", "git_short_commit", "git_tree_state", "build_date",
                                     "go_version", "compiler", "platform", "python_version"}),
    "binding_scheduler_queue_depth": ("gauge", {"queue"}),
    "binding_scheduler_passes_in_flight": ("gauge", set()),
    "binding_scheduler_pass_outcomes": ("counter", {"outcome"}),
    "binding_scheduler_schedule_errors": ("counter", {"fault"}),
    "binding_scheduler_writes": ("counter", {"kind", "result"}),
    "binding_scheduler_shutdown_duration_seconds": ("gauge", set()),
    "binding_scheduler_shutdown_passes": ("counter", {"fate"}),
    "binding_scheduler_preemptions_limited": ("counter", {"limit"}),
    "binding_scheduler_leader": ("gauge", set()),
    "binding_scheduler_config_valid": ("gauge", set()),
    "binding_scheduler_estimator_failures": ("counter", set()),  # {cluster, reason} from the first failure
    "rest_client_requests": ("counter", {"code", "method", "host"}),
    "rest_client_request_duration_seconds": ("histogram", {"verb", "host"}),
    "process_cpu_seconds": ("counter", set()),
    "process_resident_memory_bytes": ("gauge", set()),
    "process_virtual_memory_bytes": ("gauge", set()),
    "process_start_time_seconds": ("gauge", set()),
    "process_open_fds": ("gauge", set()),
    "process_max_fds": ("gauge", set()),
}


def test_every_family_with_type_and_labels() -> None:
    families = scrape(observed_everywhere())
    assert set(families) == set(EXPECTED_FAMILIES)
    for name, (typ, labels) in EXPECTED_FAMILIES.items():
        assert families[name][0] == typ, name
        assert {k for s in families[name][1] for k in s.labels if k != "le"} == labels, name


def test_exposed_sample_names_match_karmada() -> None:
    text = observed_everywhere().render().decode()
    for line in (
        'karmada_scheduler_schedule_attempts_total{result="scheduled",schedule_type="ReconcileSchedule"} 1.0',
        'karmada_scheduler_queue_incoming_bindings_total{event="BindingAdd"} 1.0',
        "# TYPE karmada_scheduler_e2e_scheduling_duration_seconds histogram",
        "# TYPE karmada_scheduler_schedule_attempts_total counter",
        "# TYPE karmada_build_info gauge",
    ):
        assert line in text.splitlines(), line


def test_no_created_series_and_no_pending_bindings() -> None:
    text = observed_everywhere().render().decode()
    assert "_created" not in text
    assert "scheduler_pending_bindings" not in text  # Karmada registers it in the legacy registry, not on /metrics


def test_karmada_series_appear_only_once_observed() -> None:
    """Those with labels: a Go counter without labels (preemption victims) is exported at 0 from the start."""
    families = scrape(SchedulerMetrics())
    for name, (_, labels) in EXPECTED_FAMILIES.items():
        if name.startswith("karmada_scheduler_") and labels:
            assert families[name][1] == [], name


def test_preemption_attempts_by_result_and_victims_they_evicted() -> None:
    m = SchedulerMetrics()
    m.preemption_attempt(success=True, victims=3)
    m.preemption_attempt(success=False, victims=0)
    m.preemption_attempt(success=True, victims=1)

    assert value(m, "karmada_scheduler_preemption_attempts_total", result="success") == 2
    assert value(m, "karmada_scheduler_preemption_attempts_total", result="error") == 1
    assert value(m, "karmada_scheduler_preemption_victims_total") == 4


@pytest.mark.parametrize(("family", "expected"), [
    ("karmada_scheduler_e2e_scheduling_duration_seconds", go_exponential(0.001, 2, 15)),
    ("karmada_scheduler_scheduling_algorithm_duration_seconds", go_exponential(0.001, 2, 15)),
    ("karmada_scheduler_framework_extension_point_duration_seconds", go_exponential(0.0001, 2, 12)),
    ("karmada_scheduler_plugin_execution_duration_seconds", go_exponential(0.00001, 1.5, 20)),
])
def test_buckets(family: str, expected: list[float]) -> None:
    assert bucket_bounds(observed_everywhere(), family) == [*expected, math.inf]


def test_exponential_buckets() -> None:
    assert exponential_buckets(0.001, 2, 3) == (0.001, 0.002, 0.004)
    assert exponential_buckets(0.001, 2, 15)[-1] == 16.384
    for bad in ((0, 2, 3), (1, 1, 3), (1, 2, 0)):
        with pytest.raises(ValueError):
            exponential_buckets(*bad)


def test_build_info_carries_karmadas_labels() -> None:
    m = SchedulerMetrics()
    assert value(m, "karmada_build_info", git_version=__version__, git_commit="", git_short_commit="",
                 git_tree_state="", build_date="", go_version="", compiler=platform.python_implementation().lower(),
                 platform=f"{platform.system().lower()}/{platform.machine().lower()}",
                 python_version=platform.python_version()) == 1


def test_instances_do_not_collide() -> None:
    a, b = SchedulerMetrics(), SchedulerMetrics()
    a.binding_event("BindingAdd")
    assert value(a, "karmada_scheduler_queue_incoming_bindings_total", event="BindingAdd") == 1
    assert scrape(b)["karmada_scheduler_queue_incoming_bindings"][1] == []


def test_given_registry_is_used() -> None:
    registry = CollectorRegistry()
    m = SchedulerMetrics(registry)
    assert m.registry is registry
    assert registry.get_sample_value("binding_scheduler_leader") == 0


# --- Karmada's methods ---------------------------------------------------------------------------------------------

def test_observe_attempt_every_label() -> None:
    m = SchedulerMetrics()
    for result in ATTEMPT_RESULTS:
        for schedule_type in SCHEDULE_TYPES:
            m.observe_attempt(result, schedule_type, 0.003)
    for result in ATTEMPT_RESULTS:
        for schedule_type in SCHEDULE_TYPES:
            labels = {"result": result, "schedule_type": schedule_type}
            assert value(m, "karmada_scheduler_schedule_attempts_total", **labels) == 1
            assert value(m, "karmada_scheduler_e2e_scheduling_duration_seconds_count", **labels) == 1
            assert value(m, "karmada_scheduler_e2e_scheduling_duration_seconds_sum", **labels) == 0.003
            assert value(m, "karmada_scheduler_e2e_scheduling_duration_seconds_bucket", le="0.002", **labels) == 0
            assert value(m, "karmada_scheduler_e2e_scheduling_duration_seconds_bucket", le="0.004", **labels) == 1


def test_observe_step_every_label() -> None:
    m = SchedulerMetrics()
    for step in SCHEDULE_STEPS:
        m.observe_step(step, 0.5)
        m.observe_step(step, 0.5)
    for step in SCHEDULE_STEPS:
        assert value(m, "karmada_scheduler_scheduling_algorithm_duration_seconds_count", schedule_step=step) == 2
        assert value(m, "karmada_scheduler_scheduling_algorithm_duration_seconds_sum", schedule_step=step) == 1.0


def test_binding_event_every_label() -> None:
    m = SchedulerMetrics()
    for i, event in enumerate(BINDING_EVENTS):
        for _ in range(i + 1):
            m.binding_event(event)
    for i, event in enumerate(BINDING_EVENTS):
        assert value(m, "karmada_scheduler_queue_incoming_bindings_total", event=event) == i + 1


def test_observe_extension_point_every_label() -> None:
    m = SchedulerMetrics()
    for point in EXTENSION_POINTS:
        for result in PLUGIN_RESULTS:
            m.observe_extension_point(point, result, 0.0002)
    for point in EXTENSION_POINTS:
        for result in PLUGIN_RESULTS:
            labels = {"extension_point": point, "result": result}
            assert value(m, "karmada_scheduler_framework_extension_point_duration_seconds_count", **labels) == 1
            assert value(m, "karmada_scheduler_framework_extension_point_duration_seconds_bucket",
                         le="0.0001", **labels) == 0
            assert value(m, "karmada_scheduler_framework_extension_point_duration_seconds_bucket",
                         le="0.0002", **labels) == 1


def test_observe_plugin_every_label() -> None:
    m = SchedulerMetrics()
    for point in PLUGIN_EXTENSION_POINTS:
        for result in PLUGIN_RESULTS:
            m.observe_plugin("ClusterAffinity", point, result, 1.0)
    for point in PLUGIN_EXTENSION_POINTS:
        for result in PLUGIN_RESULTS:
            labels = {"plugin": "ClusterAffinity", "extension_point": point, "result": result}
            assert value(m, "karmada_scheduler_plugin_execution_duration_seconds_count", **labels) == 1
            assert value(m, "karmada_scheduler_plugin_execution_duration_seconds_bucket", le="+Inf", **labels) == 1


# --- ours ----------------------------------------------------------------------------------------------------------

def test_our_series_start_at_zero() -> None:
    m = SchedulerMetrics()
    for queue in ("active", "backoff", "unschedulable"):
        assert value(m, "binding_scheduler_queue_depth", queue=queue) == 0
    for outcome in PASS_OUTCOMES:
        assert value(m, "binding_scheduler_pass_outcomes_total", outcome=outcome) == 0
    for kind in WRITE_KINDS:
        for result in WRITE_RESULTS:
            assert value(m, "binding_scheduler_writes_total", kind=kind, result=result) == 0
    for fate in SHUTDOWN_FATES:
        assert value(m, "binding_scheduler_shutdown_passes_total", fate=fate) == 0
    assert value(m, "binding_scheduler_passes_in_flight") == 0
    assert value(m, "binding_scheduler_shutdown_duration_seconds") == 0
    assert value(m, "binding_scheduler_leader") == 0
    assert value(m, "binding_scheduler_config_valid") == 1


def test_set_queue_depth() -> None:
    m = SchedulerMetrics()
    m.set_queue_depth(active=3, backoff=2, unschedulable=1)
    assert value(m, "binding_scheduler_queue_depth", queue="active") == 3
    assert value(m, "binding_scheduler_queue_depth", queue="backoff") == 2
    assert value(m, "binding_scheduler_queue_depth", queue="unschedulable") == 1
    m.set_queue_depth(0, 5, 0)
    assert value(m, "binding_scheduler_queue_depth", queue="active") == 0
    assert value(m, "binding_scheduler_queue_depth", queue="backoff") == 5


def test_set_queue_depth_rejects_negative_and_changes_nothing() -> None:
    m = SchedulerMetrics()
    m.set_queue_depth(1, 1, 1)
    with pytest.raises(ValueError, match="unschedulable"):
        m.set_queue_depth(7, 7, -1)
    assert value(m, "binding_scheduler_queue_depth", queue="active") == 1


def test_passes_in_flight_and_every_outcome() -> None:
    m = SchedulerMetrics()
    for _ in PASS_OUTCOMES:
        m.pass_started()
    assert value(m, "binding_scheduler_passes_in_flight") == len(PASS_OUTCOMES)
    for i, outcome in enumerate(PASS_OUTCOMES):
        m.pass_finished(outcome)
        assert value(m, "binding_scheduler_passes_in_flight") == len(PASS_OUTCOMES) - i - 1
    for outcome in PASS_OUTCOMES:
        assert value(m, "binding_scheduler_pass_outcomes_total", outcome=outcome) == 1


def test_write_every_label() -> None:
    m = SchedulerMetrics()
    for kind in WRITE_KINDS:
        for result in WRITE_RESULTS:
            m.write(kind, result)
    m.write(WriteKind.SPEC, WriteResult.OK)
    for kind in WRITE_KINDS:
        for result in WRITE_RESULTS:
            expected = 2 if (kind, result) == ("spec", "ok") else 1
            assert value(m, "binding_scheduler_writes_total", kind=kind, result=result) == expected


def test_shutdown_report() -> None:
    m = SchedulerMetrics()
    m.shutdown_report(cancelled=3, drained=2, cut=1, seconds=0.25)
    assert value(m, "binding_scheduler_shutdown_passes_total", fate="cancelled") == 3
    assert value(m, "binding_scheduler_shutdown_passes_total", fate="drained") == 2
    assert value(m, "binding_scheduler_shutdown_passes_total", fate="cut") == 1
    assert value(m, "binding_scheduler_shutdown_duration_seconds") == 0.25


def test_shutdown_report_rejects_negative() -> None:
    m = SchedulerMetrics()
    with pytest.raises(ValueError):
        m.shutdown_report(cancelled=1, drained=-1, cut=0, seconds=0.1)
    with pytest.raises(ValueError):
        m.shutdown_report(cancelled=1, drained=0, cut=0, seconds=-0.1)
    assert value(m, "binding_scheduler_shutdown_passes_total", fate="cancelled") == 0


def test_leader_and_config_valid() -> None:
    m = SchedulerMetrics()
    m.set_leader(True)
    m.set_config_valid(False)
    assert value(m, "binding_scheduler_leader") == 1
    assert value(m, "binding_scheduler_config_valid") == 0
    m.set_leader(False)
    m.set_config_valid(True)
    assert value(m, "binding_scheduler_leader") == 0
    assert value(m, "binding_scheduler_config_valid") == 1


# --- validation ----------------------------------------------------------------------------------------------------

LABEL_ENUMS = {AttemptResult, ScheduleType, ScheduleStep, BindingEvent, PluginPoint, PluginResult, PassOutcome,
               WriteKind, WriteResult}


@pytest.mark.parametrize("method", ["observe_attempt", "observe_step", "binding_event", "observe_extension_point",
                                    "observe_plugin", "pass_finished", "write"])
def test_every_label_parameter_is_enum_so_typo_is_type_error(method: str) -> None:
    hints = typing.get_type_hints(getattr(SchedulerMetrics, method))
    labels = {name: hint for name, hint in hints.items() if name not in ("return", "seconds", "plugin")}
    assert labels and all(hint in LABEL_ENUMS for hint in labels.values()), labels


@pytest.mark.parametrize("call", [
    lambda m: m.observe_attempt(AttemptResult.SCHEDULED, ScheduleType.RECONCILE, -0.1),
    lambda m: m.observe_step(ScheduleStep.FILTER, -1.0),
    lambda m: m.observe_plugin("", PluginPoint.FILTER, PluginResult.SUCCESS, 0.1),
], ids=["negative", "negative_step", "plugin"])
def test_impossible_values_raise_and_create_no_series(call: Callable[[SchedulerMetrics], None]) -> None:
    m = SchedulerMetrics()
    before = own_series(m)
    with pytest.raises(ValueError):
        call(m)
    assert own_series(m) == before


def own_series(m: SchedulerMetrics) -> list[str]:
    """What /metrics says but the process's own figures (CPU seconds, memory), which move between two reads."""
    return [line for line in m.render().decode().splitlines() if not line.startswith(("process_", "# HELP process_",
                                                                                      "# TYPE process_"))]
