"""One way to write a status condition, for the binding's Scheduled and the configuration's Valid alike
(apimachinery's SetStatusCondition), and one timestamp format."""

from __future__ import annotations

import datetime

from binding_scheduler.model.conditions import ConditionState, rfc3339, upsert_condition

EARLIER = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
NOW = datetime.datetime(2026, 1, 2, 3, 9, 5, 123456, tzinfo=datetime.UTC)
VALID = ConditionState("True", "Valid", "applied")


def test_new_condition_is_appended_after_others_with_time_now() -> None:
    other = {"type": "Other", "status": "True"}
    assert upsert_condition([other], "Valid", VALID, NOW, observed_generation=3) == [other, {
        "type": "Valid", "status": "True", "reason": "Valid", "message": "applied", "observedGeneration": 3,
        "lastTransitionTime": "2026-01-02T03:09:05Z"}]


def test_transition_time_stays_while_status_stays() -> None:
    before = [{"type": "Valid", "status": "True", "reason": "Valid", "message": "old",
               "lastTransitionTime": rfc3339(EARLIER), "observedGeneration": 2}]
    (after,) = upsert_condition(before, "Valid", VALID, NOW, observed_generation=3)
    assert (after["lastTransitionTime"], after["message"], after["observedGeneration"]) == (
        "2026-01-02T03:04:05Z", "applied", 3)


def test_transition_time_moves_when_status_changes() -> None:
    before = [{"type": "Scheduled", "status": "False", "reason": "NoClusterFit", "message": "m",
               "lastTransitionTime": rfc3339(EARLIER)}]
    (after,) = upsert_condition(before, "Scheduled", ConditionState("True", "Success", "ok"), NOW)
    assert after == {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
                     "lastTransitionTime": "2026-01-02T03:09:05Z"}


def test_unchanged_condition_writes_nothing() -> None:
    before = upsert_condition([], "Valid", VALID, EARLIER, observed_generation=1)
    assert upsert_condition(before, "Valid", VALID, NOW, observed_generation=1) == before


def test_times_are_utc_seconds_from_any_zone() -> None:
    tokyo = datetime.timezone(datetime.timedelta(hours=9))
    assert rfc3339(NOW.astimezone(tokyo)) == rfc3339(NOW.timestamp()) == "2026-01-02T03:09:05Z"
