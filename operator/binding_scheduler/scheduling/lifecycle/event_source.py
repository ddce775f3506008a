"""What the scheduler's events come from, and what that source can do: one object, handed to the service when it is
built, instead of flags set on it afterwards.

Kopf with watch_guard's fast path reports every complete list of a watch (the bindings reach the passes page by
page from it, and what vanished while a watch was down is found by the relist) and which watches are failing;
Kopf's own path reports neither, so the leader lists everything again every `resync_every` seconds. A service
built without a source (tests, embedding) lists at its start and is told of every event by its caller."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


def _no_failures() -> Mapping[str, int]:
    return {}


@dataclass(frozen=True, slots=True)
class EventSource:
    reports_lists: bool = False
    """It lists the bindings after the start and reports each complete list (`SchedulerService.relisted`)."""
    resync_every: float | None = None
    """It cannot report its relists: the leader lists everything again this often (seconds)."""
    failing_watches: Callable[[], Mapping[str, int]] = field(default=_no_failures)
    """The resources (by plural) whose watch failed and has not listed again, with their failures in a row."""

    @classmethod
    def streamed(cls, failing_watches: Callable[[], Mapping[str, int]]) -> EventSource:
        """watch_guard's fast path: lists reported, failing watches known."""
        return cls(reports_lists=True, failing_watches=failing_watches)

    @classmethod
    def resynced(cls, every: float) -> EventSource:
        """Kopf's own path: nothing reported, a resync every `every` seconds."""
        return cls(resync_every=every)

    def watch_problem(self) -> str | None:
        """Why the view this source gives is going stale (a watch failing), or None."""
        failing = self.failing_watches()
        return f"the watch of {', '.join(sorted(failing))} is failing" if failing else None


LISTED_AT_START = EventSource()
"""A service's events given by its caller: it lists at its start, nothing is reported, nothing resynced."""
