"""What each attempt of a decision saw, recorded by a framework hook (for `explain`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...algorithm.candidates import ClusterDetail
from ...algorithm.schedule import Candidates
from ...algorithm.walk import Outcome
from ...model import Binding
from .hooks import FrameworkHook


@dataclass(slots=True)
class AttemptRecord:
    """One attempt: candidates, every estimator's answers, selection (with its trace) and result."""

    binding: Binding
    candidates: Candidates | None = None
    general: Mapping[str, int] = field(default_factory=dict)
    accurate: Mapping[str, int] = field(default_factory=dict)
    accurate_failures: Mapping[str, str] = field(default_factory=dict)
    trace: list[str] = field(default_factory=list)
    selected: list[ClusterDetail] = field(default_factory=list)
    outcome: Outcome | None = None


class AttemptRecorder(FrameworkHook):
    """Appends an `AttemptRecord` per attempt to `records`."""

    wants_trace = True

    def __init__(self) -> None:
        self.records: list[AttemptRecord] = []

    def attempt_started(self, binding: Binding) -> None:
        self.records.append(AttemptRecord(binding))

    def estimated(
        self, candidates: Candidates, general: Mapping[str, int], accurate: Mapping[str, int],
        failures: Mapping[str, str],
    ) -> None:
        record = self.records[-1]
        record.candidates, record.general, record.accurate, record.accurate_failures = (
            candidates, general, accurate, failures)

    def selected(self, selected: Sequence[ClusterDetail], trace: Sequence[str]) -> None:
        record = self.records[-1]
        record.selected, record.trace = list(selected), list(trace)

    def attempt_ended(self, outcome: Outcome) -> None:
        self.records[-1].outcome = outcome
