"""The framework tells its hooks how long each extension point and plugin took (the scheduler's metrics are one
such hook) and what each attempt saw (`explain`'s record is another)."""

from __future__ import annotations

import pytest

from binding_scheduler.algorithm.errors import FitError
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.model import parse_binding
from binding_scheduler.scheduling.framework.hooks import ExtensionPoint, FrameworkHook
from binding_scheduler.scheduling.observability.labels import PluginResult
from binding_scheduler.scheduling.observability.metrics import MetricsHook, SchedulerMetrics
from testsupport.builders import binding, make_cluster, names, placement, schedule, snapshot


class Recorder(FrameworkHook):
    def __init__(self) -> None:
        self.steps: list[tuple[str, str]] = []
        self.plugins: list[tuple[str, str, str]] = []

    def step(self, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        assert seconds >= 0
        self.steps.append((point.value, result.value))

    def plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        assert seconds >= 0
        self.plugins.append((plugin, point.value, result.value))


def test_every_extension_point_and_plugin_is_reported_in_order() -> None:
    recorder = Recorder()
    rb = parse_binding(binding(replicas=2, placement=placement(affinity=names("m1"))))
    schedule(rb, snapshot(make_cluster("m1"), make_cluster("m2")), build_plugins(), hooks=[recorder])
    assert recorder.steps == [("Filter", "Success"), ("Score", "Success"), ("Estimate", "Success"),
                              ("Select", "Success"), ("Assign", "Success")]
    assert recorder.plugins == [
        ("APIEnablement", "Filter", "Success"),
        ("TaintToleration", "Filter", "Success"),
        ("ClusterAffinity", "Filter", "Unschedulable"),
        ("SpreadConstraint", "Filter", "Success"),
        ("ClusterEviction", "Filter", "Success"),
        ("ClusterAffinity", "Score", "Success"),
        ("ClusterLocality", "Score", "Success"),
    ]


def test_non_workload_skips_estimate_point() -> None:
    recorder = Recorder()
    rb = parse_binding(binding(replicas=0, placement=placement()))
    schedule(rb, snapshot(make_cluster("m1")), build_plugins(), hooks=[recorder])
    assert [point for point, _ in recorder.steps] == ["Filter", "Score", "Select", "Assign"]


def test_fit_error_reports_unschedulable_filter_step_and_stops() -> None:
    recorder = Recorder()
    rb = parse_binding(binding(replicas=2, placement=placement(affinity=names("m9"))))
    with pytest.raises(FitError):
        schedule(rb, snapshot(make_cluster("m1")), build_plugins(), hooks=[recorder])
    assert recorder.steps == [("Filter", "Unschedulable")]


def test_metrics_hook_feeds_karmadas_steps() -> None:
    metrics = SchedulerMetrics()
    rb = parse_binding(binding(replicas=2, placement=placement()))
    schedule(rb, snapshot(make_cluster("m1")), build_plugins(), hooks=[MetricsHook(metrics)])
    text = metrics.render().decode()
    steps = {line.split('schedule_step="')[1].split('"')[0] for line in text.splitlines()
             if line.startswith("karmada_scheduler_scheduling_algorithm_duration_seconds_count")}
    points = {line.split("{")[1].split("}")[0] for line in text.splitlines()
              if line.startswith("karmada_scheduler_framework_extension_point_duration_seconds_count")}
    assert steps == {"Filter", "Score", "Select", "AssignReplicas"}
    assert points == {'extension_point="Filter",result="Success"', 'extension_point="Score",result="Success"'}
