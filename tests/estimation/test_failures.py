"""Failures: counted every time, logged at most once per cluster per minute."""

from __future__ import annotations

import logging

import pytest
from prometheus_client import CollectorRegistry

from binding_scheduler.estimation import FAILURES_METRIC, Reason
from binding_scheduler.estimation.failures import FailureReporter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_one_log_line_per_cluster_per_minute(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    reporter = FailureReporter(CollectorRegistry(), clock=clock)
    with caplog.at_level(logging.WARNING, logger="binding_scheduler.estimation"):
        reporter.report("a", Reason.DEADLINE, "late")
        clock.now += 30
        reporter.report("a", Reason.DEADLINE, "late")
        reporter.report("b", Reason.DIAL, "down")
        clock.now += 30
        reporter.report("a", Reason.RPC_ERROR, "boom")
    assert warnings(caplog) == [
        "estimator of cluster a failed (deadline): late",
        "estimator of cluster b failed (dial): down",
        "estimator of cluster a failed (rpc_error): boom (1 more since the last report)",
    ]


def test_every_failure_is_counted_by_cluster_and_reason() -> None:
    registry = CollectorRegistry()
    reporter = FailureReporter(registry)
    for reason in (Reason.DEADLINE, Reason.DEADLINE, Reason.INVALID_ANSWER):
        reporter.report("a", reason, "x")

    def value(reason: str) -> float | None:
        return registry.get_sample_value(f"{FAILURES_METRIC}_total", {"cluster": "a", "reason": reason})

    assert (value("deadline"), value("invalid_answer")) == (2.0, 1.0)


def test_skipped_clusters_are_neither_counted_nor_logged(caplog: pytest.LogCaptureFixture) -> None:
    registry = CollectorRegistry()
    with caplog.at_level(logging.WARNING, logger="binding_scheduler.estimation"):
        FailureReporter(registry).report("p", Reason.SKIPPED, "pull mode")
    assert warnings(caplog) == []
    assert registry.get_sample_value(f"{FAILURES_METRIC}_total", {"cluster": "p", "reason": "skipped"}) is None


def test_two_reporters_share_one_counter_per_registry() -> None:
    registry = CollectorRegistry()
    FailureReporter(registry).report("a", Reason.DIAL, "x")
    FailureReporter(registry).report("a", Reason.DIAL, "x")
    assert registry.get_sample_value(f"{FAILURES_METRIC}_total", {"cluster": "a", "reason": "dial"}) == 2.0


def test_forgetting_cluster_lets_next_failure_be_logged(caplog: pytest.LogCaptureFixture) -> None:
    reporter = FailureReporter(CollectorRegistry(), clock=Clock())
    with caplog.at_level(logging.WARNING, logger="binding_scheduler.estimation"):
        reporter.report("a", Reason.DIAL, "x")
        reporter.forget("a")
        reporter.report("a", Reason.DIAL, "y")
    assert len(warnings(caplog)) == 2
