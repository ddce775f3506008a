"""An attempt reports how long each step and plugin took to an observer (the scheduler's metrics)."""

from __future__ import annotations

import pytest

from binding_scheduler.algorithm.errors import FitError
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions, schedule
from binding_scheduler.model import parse_binding
from tests.builders import binding, make_cluster, names, placement, snapshot


class Recorder:
    def __init__(self) -> None:
        self.steps: list[str] = []
        self.points: list[tuple[str, str]] = []
        self.plugins: list[tuple[str, str, str]] = []

    def step(self, step: str, seconds: float) -> None:
        assert seconds >= 0
        self.steps.append(step)

    def extension_point(self, extension_point: str, result: str, seconds: float) -> None:
        self.points.append((extension_point, result))

    def plugin(self, plugin: str, extension_point: str, result: str, seconds: float) -> None:
        self.plugins.append((plugin, extension_point, result))


def test_every_step_and_plugin_is_reported_in_order() -> None:
    recorder = Recorder()
    rb = parse_binding(binding(replicas=2, placement=placement(affinity=names("m1"))))
    schedule(
        rb,
        snapshot(make_cluster("m1"), make_cluster("m2")),
        build_plugins(),
        options=ScheduleOptions(observer=recorder),
    )
    assert recorder.steps == ["Filter", "Score", "Select", "AssignReplicas"]
    assert recorder.points == [("Filter", "Success"), ("Score", "Success")]
    assert recorder.plugins == [
        ("APIEnablement", "Filter", "Success"),
        ("TaintToleration", "Filter", "Success"),
        ("ClusterAffinity", "Filter", "Unschedulable"),
        ("SpreadConstraint", "Filter", "Success"),
        ("ClusterEviction", "Filter", "Success"),
        ("ClusterAffinity", "Score", "Success"),
        ("ClusterLocality", "Score", "Success"),
    ]


def test_a_fit_error_reports_an_unschedulable_filter_step_and_stops() -> None:
    recorder = Recorder()
    rb = parse_binding(binding(replicas=2, placement=placement(affinity=names("m9"))))
    with pytest.raises(FitError):
        schedule(rb, snapshot(make_cluster("m1")), build_plugins(), options=ScheduleOptions(observer=recorder))
    assert recorder.steps == ["Filter"]
    assert recorder.points == [("Filter", "Unschedulable")]
