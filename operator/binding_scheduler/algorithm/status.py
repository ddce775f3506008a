"""What a pass writes into a binding's status: the Scheduled condition and its companions (Karmada's
`pkg/scheduler/scheduler.go: patchBindingStatusCondition` and `patchBindingStatusWithAffinityName`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .errors import ConditionVerdict

SCHEDULED = "Scheduled"


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def upsert_condition(
    conditions: Sequence[Mapping[str, Any]], verdict: ConditionVerdict, now: datetime
) -> list[dict[str, Any]]:
    """`SetStatusCondition` (`k8s.io/apimachinery/pkg/api/meta/conditions.go`): lastTransitionTime changes only
    when the status changes or the condition is new; reason and message are replaced; other conditions are kept
    as they are."""
    result: list[dict[str, Any]] = []
    found = False
    for condition in conditions:
        item = dict(condition)
        if item.get("type") == SCHEDULED:
            found = True
            if item.get("status") != verdict.status or not item.get("lastTransitionTime"):
                item["lastTransitionTime"] = rfc3339(now)
            item["status"], item["reason"], item["message"] = verdict.status, verdict.reason, verdict.message
        result.append(item)
    if not found:
        result.append(
            {
                "type": SCHEDULED,
                "status": verdict.status,
                "reason": verdict.reason,
                "message": verdict.message,
                "lastTransitionTime": rfc3339(now),
            }
        )
    return result


def status_patch(
    status: Mapping[str, Any],
    verdict: ConditionVerdict,
    now: datetime,
    *,
    observed_generation: int,
    affinity_name: str | None = None,
) -> dict[str, Any] | None:
    """The `status` fields a pass writes, or None when nothing would change.

    On success: the condition, `schedulerObservedGeneration` (the generation after our own spec write, so our
    write does not trigger another pass) and `lastScheduledTime`. On failure: the condition only. The affinity
    term name rides along when it changed. One patch instead of Karmada's two.
    """
    patch: dict[str, Any] = {}
    conditions = status.get("conditions") or []
    updated = upsert_condition(conditions, verdict, now)
    if updated != list(conditions):
        patch["conditions"] = updated
    if verdict.status == "True":
        if status.get("schedulerObservedGeneration") != observed_generation:
            patch["schedulerObservedGeneration"] = observed_generation
        patch["lastScheduledTime"] = rfc3339(now)
    if affinity_name is not None and status.get("schedulerObservingAffinityName") != affinity_name:
        patch["schedulerObservingAffinityName"] = affinity_name
    return patch or None
