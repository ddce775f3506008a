"""The status a pass writes: the Scheduled condition (SetStatusCondition semantics) and its companions."""

from __future__ import annotations

from datetime import UTC, datetime

from binding_scheduler.algorithm.errors import SchedulingError, condition_for
from binding_scheduler.algorithm.status import status_patch

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
SUCCESS = condition_for(None)
FAILED_CONDITION = {
    "type": "Scheduled",
    "status": "False",
    "reason": "SchedulerError",
    "message": "boom",
    "lastTransitionTime": "T0",
}
FAILURE = condition_for(SchedulingError("boom"))


def test_first_success_writes_condition_and_generation() -> None:
    assert status_patch({}, SUCCESS, NOW, observed_generation=3) == {
        "conditions": [
            {
                "type": "Scheduled",
                "status": "True",
                "reason": "Success",
                "message": "Binding has been scheduled successfully.",
                "lastTransitionTime": "2026-11-29T12:00:00Z",
            }
        ],
        "schedulerObservedGeneration": 3,
        "lastScheduledTime": "2026-11-29T12:00:00Z",
    }


def test_unchanged_status_keeps_transition_time() -> None:
    before = {"type": "Scheduled", "status": "False", "reason": "Old", "message": "old", "lastTransitionTime": "T0"}
    patch = status_patch({"conditions": [before]}, FAILURE, NOW, observed_generation=1)
    assert patch == {
        "conditions": [
            {
                "type": "Scheduled",
                "status": "False",
                "reason": "SchedulerError",
                "message": "boom",
                "lastTransitionTime": "T0",
            }
        ]
    }


def test_failure_identical_to_current_condition_writes_nothing() -> None:
    same = {
        "type": "Scheduled",
        "status": "False",
        "reason": "SchedulerError",
        "message": "boom",
        "lastTransitionTime": "T0",
    }
    assert status_patch({"conditions": [same]}, FAILURE, NOW, observed_generation=1) is None


def test_other_conditions_are_kept() -> None:
    applied = {"type": "FullyApplied", "status": "True", "reason": "Ok", "message": "", "lastTransitionTime": "T0"}
    patch = status_patch({"conditions": [applied]}, FAILURE, NOW, observed_generation=1)
    assert patch is not None
    assert patch["conditions"][0] == applied


def test_affinity_name_rides_in_same_write_when_it_changed() -> None:
    patch = status_patch(
        {"schedulerObservingAffinityName": "a"}, SUCCESS, NOW, observed_generation=2, affinity_name="b"
    )
    assert patch is not None
    assert patch["schedulerObservingAffinityName"] == "b"
