"""Status conditions as Kubernetes writes them: one `upsert_condition` for the binding's `Scheduled` condition and
the SchedulerConfiguration's `Valid` one, and the one timestamp format (`metav1.Time`: RFC 3339, seconds, UTC)."""

from __future__ import annotations

import datetime
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

SCHEDULED = "Scheduled"
"""The binding condition a pass writes (Karmada's `workv1alpha2.Scheduled`)."""


class Verdict(Protocol):
    """What a condition says: its status (`True`/`False`), reason and message."""

    @property
    def status(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def message(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ConditionState:
    """A condition's status, reason and message, to write."""

    status: str
    reason: str
    message: str


def rfc3339(moment: datetime.datetime | float) -> str:
    """`metav1.Time` as it is serialized: seconds precision, UTC (`moment` a datetime, or seconds since the epoch;
    a naive datetime is UTC). Formatted by `time.strftime`: a third of what `datetime.strftime` costs, and a pass
    writes two to four of these."""
    if isinstance(moment, datetime.datetime):
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.UTC)
        moment = moment.timestamp()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(math.floor(moment)))


def upsert_condition(
    conditions: Sequence[Mapping[str, Any]],
    type_: str,
    verdict: Verdict,
    now: datetime.datetime,
    *,
    observed_generation: int | None = None,
) -> list[dict[str, Any]]:
    """`SetStatusCondition` (`k8s.io/apimachinery/pkg/api/meta/conditions.go`): the condition of `type_` takes the
    verdict (and `observedGeneration` when given); its lastTransitionTime changes only when its status changes or
    it is new; other conditions are kept as they are, in their order."""
    result: list[dict[str, Any]] = []
    found = False
    for condition in conditions:
        item = dict(condition)
        if item.get("type") == type_:
            found = True
            if item.get("status") != verdict.status or not item.get("lastTransitionTime"):
                item["lastTransitionTime"] = rfc3339(now)
            item["status"], item["reason"], item["message"] = verdict.status, verdict.reason, verdict.message
            if observed_generation is not None:
                item["observedGeneration"] = observed_generation
        result.append(item)
    if not found:
        item = {"type": type_, "status": verdict.status, "reason": verdict.reason, "message": verdict.message}
        if observed_generation is not None:
            item["observedGeneration"] = observed_generation
        item["lastTransitionTime"] = rfc3339(now)
        result.append(item)
    return result
