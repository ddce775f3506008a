"""The ClusterAffinity and ClusterAffinities paths: which attempts to run, and what to write (Karmada's
`pkg/scheduler/scheduler.go: scheduleResourceBindingWithClusterAffinity` and
`scheduleResourceBindingWithClusterAffinities`, and their ClusterResourceBinding twins).

Drivers (the async pass in the scheduling layer, which simulate and explain use too) run `attempts(binding)` in
order, stop after the first success, and hand the outcomes to `decide`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..model import Binding, TargetCluster
from .errors import FitError, SchedulingError
from .events import success_message, term_failed_message
from .triggers import affinity_index

Outcome = list[TargetCluster] | SchedulingError


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try: the binding as the algorithm sees it (observed term set), and the term index (-1: none)."""

    binding: Binding
    term_index: int = -1

    @property
    def term_name(self) -> str:
        return self.binding.status.scheduler_observing_affinity_name


@dataclass(frozen=True, slots=True)
class Decision:
    """What a scheduling pass writes.

    `clusters`: the new `spec.clusters` (None: leave the schedule result alone). `affinity_name`: the new
    `status.schedulerObservingAffinityName` (None: unchanged). `error`: the final error (None: success).
    `warnings`: per-term failure messages recorded as Warning events before the final event.
    """

    clusters: tuple[TargetCluster, ...] | None
    affinity_name: str | None
    error: SchedulingError | None
    warnings: tuple[str, ...] = ()
    term_index: int = -1

    def event(self, binding: Binding) -> tuple[str, str]:
        """The final event's (type, message)."""
        if self.error is None:
            return "Normal", success_message(binding, self.clusters or ())
        return "Warning", str(self.error)


def attempts(binding: Binding) -> list[Attempt]:
    placement = binding.placement
    if placement is None or not placement.cluster_affinities:
        return [Attempt(binding)]
    terms = placement.cluster_affinities
    return [
        Attempt(
            replace(binding, status=replace(binding.status, scheduler_observing_affinity_name=t.affinity_name)),
            i,
        )
        for i, t in enumerate(terms)
        if i >= affinity_index(binding)
    ]


def decide(binding: Binding, outcomes: Sequence[tuple[Attempt, Outcome]]) -> Decision:
    if not outcomes:
        raise ValueError("decide needs at least one attempt outcome")
    first_attempt = outcomes[0][0]
    if first_attempt.term_index < 0:
        return _decide_single(outcomes[0][1])
    warnings = tuple(
        term_failed_message(binding, attempt.term_index, outcome)
        for attempt, outcome in outcomes
        if isinstance(outcome, SchedulingError)
    )
    attempt, outcome = outcomes[-1]
    if not isinstance(outcome, SchedulingError):
        current = binding.status.scheduler_observing_affinity_name
        name = attempt.term_name if attempt.term_name != current else None
        return Decision(tuple(outcome), name, None, warnings, attempt.term_index)
    first_error = outcomes[0][1]
    assert isinstance(first_error, SchedulingError)
    if isinstance(first_error, FitError):
        return Decision((), None, first_error, warnings)
    return Decision(None, None, first_error, warnings)


def _decide_single(outcome: Outcome) -> Decision:
    if isinstance(outcome, FitError):
        return Decision((), None, outcome)
    if isinstance(outcome, SchedulingError):
        return Decision(None, None, outcome)
    return Decision(tuple(outcome), None, None)


