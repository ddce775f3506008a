"""The decision line: one format for every verdict, its level set by who must act, the same facts as fields."""

from __future__ import annotations

import json
import logging

import pytest

from binding_scheduler.cli.logs import JsonFormatter
from binding_scheduler.scheduling.passes.decision_log import DecisionRecord, log_decision

PASSES = "binding_scheduler.scheduling.passes.run"


@pytest.mark.parametrize(("record", "level"), [
    (DecisionRecord("shop/web", "ResourceBinding", "Success", clusters=[("m1", 2)]), logging.INFO),
    (DecisionRecord("shop/web", "ResourceBinding", "NoClusterFit", "0/2 clusters are available"), logging.WARNING),
    (DecisionRecord("shop/web", "ResourceBinding", "Unschedulable", "no group member placed"), logging.WARNING),
    (DecisionRecord("shop/web", "ResourceBinding", "SchedulerError", "invalid binding", refused=True),
     logging.WARNING),
    (DecisionRecord("shop/web", "ResourceBinding", "SchedulerError", "estimator m1: deadline exceeded"),
     logging.ERROR),
    (DecisionRecord("shop/", "ResourceBinding", "Unreadable", "ignored: metadata.name: is required"), logging.ERROR),
])
def test_level_says_who_must_act(record: DecisionRecord, level: int) -> None:
    assert record.level == level


def test_refusal_has_no_trigger_or_duration_in_line() -> None:
    record = DecisionRecord("shop/web", "ResourceBinding", "SchedulerError", "invalid binding: spec.replicas: is "
                            "negative", attempt=4, refused=True)
    assert record.text() == ("binding shop/web (ResourceBinding): not scheduled: SchedulerError: invalid binding: "
                             "spec.replicas: is negative (attempt 4)")


def test_json_form_carries_lines_facts_as_keys(caplog: pytest.LogCaptureFixture) -> None:
    record = DecisionRecord("shop/web", "ResourceBinding", "NoClusterFit", "0/2 clusters are available",
                            trigger="ReconcileSchedule", seconds=0.0125, attempt=2)
    with caplog.at_level(logging.INFO, logger=PASSES):
        log_decision(record)
    (logged,) = caplog.records
    entry = json.loads(JsonFormatter().format(logged))
    assert entry["level"] == "warning"
    assert entry["msg"] == ("binding shop/web (ResourceBinding): not scheduled: NoClusterFit: 0/2 clusters are "
                            "available (ReconcileSchedule, 12 ms, attempt 2)")
    assert {key: value for key, value in entry.items() if key not in ("ts", "level", "logger", "msg")} == {
        "binding": "shop/web", "kind": "ResourceBinding", "scheduled": False, "reason": "NoClusterFit",
        "message": "0/2 clusters are available", "clusters": [], "trigger": "ReconcileSchedule", "duration_ms": 12.5,
        "attempt": 2,
    }


def test_record_without_fields_keeps_four_keys() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    assert json.loads(JsonFormatter().format(record)).keys() == {"ts", "level", "logger", "msg"}


def test_json_form_takes_fields_as_a_dict_too() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello", (), None)
    record.fields = {"binding": "shop/web", "msg": "not this"}
    entry = json.loads(JsonFormatter().format(record))
    assert (entry["binding"], entry["msg"]) == ("shop/web", "hello")
