"""The one log line of every verdict on a binding, in one format, at the level of who must act.

    binding shop/web (ResourceBinding): scheduled to m1:2,m2:1 (ScaleSchedule, 12 ms, attempt 1)
    binding shop/web (ResourceBinding): not scheduled: NoClusterFit: 0/3 clusters are available: ... (..., attempt 2)
    binding shop/web (ResourceBinding): not scheduled: SchedulerError: invalid binding: spec.replicas: ... (attempt 1)

Levels follow who must act:
- INFO: scheduled (`Success`); nobody.
- WARNING: the binding's owner or the fleet's: a binding refused as it is (invalid, no placement, over its CPU
  budget), `NoClusterFit`, `Unschedulable`, and a `SchedulerError` whose placement cannot be met as written
  (`algorithm.errors.PlacementError`: an unsupported spread constraint, fewer clusters than `minGroups`, ...).
- ERROR: the scheduler's operator: any other failure (`SchedulerError` from an estimator, a plugin or a write)
  and an `Unreadable` object.

The same facts ride on the record as `fields` (`binding`, `kind`, `scheduled`, `reason`, `message`, `clusters`,
`trigger`, `duration_ms`, `attempt`), which the JSON log format writes as keys beside `msg`; they ride as
`DecisionRecord.fields` itself, called only by that format (a Duplicated binding's 800 clusters were ~1 % of its
CPU in the text format, which never reads them).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger("binding_scheduler.scheduling.passes.run")  # the lines' logger before they moved here

SUCCESS_REASON = "Success"
UNREADABLE_REASON = "Unreadable"
"""A binding object the model cannot read even as a binding (no name, another kind): it gets no condition."""
OWNER_REASONS = frozenset({"NoClusterFit", "Unschedulable"})
"""The failures the fleet or the binding's owner must act on (the placement cannot be met), not the scheduler's."""


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """A verdict on one binding: scheduled to `clusters`, or not, with the Scheduled condition's reason and message.

    `refused` marks a binding turned away before any decision (its owner must change it); `trigger` and
    `seconds` are those of a pass that decided, None for a refusal."""

    binding: str
    kind: str
    reason: str
    message: str = ""
    clusters: Sequence[tuple[str, int]] = ()
    trigger: str | None = None
    seconds: float | None = None
    attempt: int = 1
    refused: bool = False
    owner: bool = False
    """A failure the binding's owner or the fleet's must act on, whatever its reason (`PlacementError`)."""

    @property
    def scheduled(self) -> bool:
        return self.reason == SUCCESS_REASON

    @property
    def level(self) -> int:
        if self.scheduled:
            return logging.INFO
        if self.refused or self.owner or self.reason in OWNER_REASONS:
            return logging.WARNING
        return logging.ERROR

    def text(self) -> str:
        if self.scheduled:
            where = ",".join(f"{name}:{replicas}" if replicas else name for name, replicas in self.clusters) or "-"
            result = f"scheduled to {where}"
        else:
            result = f"not scheduled: {self.reason}: {self.message}"
        details = [self.trigger] if self.trigger else []
        if self.seconds is not None:
            details.append(f"{self.seconds * 1000:.0f} ms")
        details.append(f"attempt {self.attempt}")
        return f"binding {self.binding} ({self.kind}): {result} ({', '.join(details)})"

    def fields(self) -> dict[str, Any]:
        return {
            "binding": self.binding,
            "kind": self.kind,
            "scheduled": self.scheduled,
            "reason": self.reason,
            "message": "" if self.scheduled else self.message,
            "clusters": [{"name": name, "replicas": replicas} for name, replicas in self.clusters],
            "trigger": self.trigger,
            "duration_ms": round(self.seconds * 1000, 3) if self.seconds is not None else None,
            "attempt": self.attempt,
        }


def log_decision(record: DecisionRecord) -> None:
    logger.log(record.level, "%s", record.text(), extra={"fields": record.fields})
