"""What a pass writes into a binding's status: the Scheduled condition and its companions (Karmada's
`pkg/scheduler/scheduler.go: patchBindingStatusCondition` and `patchBindingStatusWithAffinityName`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..model.conditions import SCHEDULED, rfc3339, upsert_condition
from .errors import ConditionVerdict


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
    updated = upsert_condition(conditions, SCHEDULED, verdict, now)
    if updated != list(conditions):
        patch["conditions"] = updated
    if verdict.status == "True":
        if status.get("schedulerObservedGeneration") != observed_generation:
            patch["schedulerObservedGeneration"] = observed_generation
        patch["lastScheduledTime"] = rfc3339(now)
    if affinity_name is not None and status.get("schedulerObservingAffinityName") != affinity_name:
        patch["schedulerObservingAffinityName"] = affinity_name
    return patch or None
