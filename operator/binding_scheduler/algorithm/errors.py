"""Scheduling errors with Karmada's texts, and the error -> Scheduled-condition table
(`pkg/scheduler/helper.go: getConditionByError`; the error types are those of `pkg/scheduler/framework/types.go`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self


class SchedulingError(Exception):
    """A scheduling attempt failed; the condition reason is `SchedulerError` and the binding is retried."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def wrapped(self, prefix: str) -> Self:
        """The same error behind a context prefix (Go's `fmt.Errorf("prefix: %w", err)`): its kind is kept."""
        clone = self.__class__.__new__(self.__class__)
        clone.__dict__.update(self.__dict__)
        clone.message = f"{prefix}: {self.message}"
        clone.args = (clone.message,)
        return clone

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Callable[..., SchedulingError], tuple[type[SchedulingError], dict[str, Any],
                                                                     tuple[Any, ...]]]:
        """Pickled as its class and fields (a decision process sends its errors back): the constructors of the
        subclasses take other arguments than the message."""
        return _rebuilt, (self.__class__, dict(self.__dict__), self.args)


def _rebuilt(cls: type[SchedulingError], fields: dict[str, Any], args: tuple[Any, ...]) -> SchedulingError:
    error = cls.__new__(cls)
    error.__dict__.update(fields)
    error.args = args
    return error


class UnschedulableError(SchedulingError):
    """Not enough capacity right now: reason `Unschedulable`, parked until an event or the flush. A subclass
    may name another reason (`algorithm.preemption.PreemptingError`: `Preempting`)."""

    reason: ClassVar[str] = "Unschedulable"


class PlacementError(SchedulingError):
    """The placement cannot be met as written against this fleet (an unsupported strategy or spread constraint,
    fewer clusters or regions than `minGroups`, no cluster to place on, no room): reason `SchedulerError` as in
    Karmada, but the binding's owner or the fleet's must act, not the scheduler's operator (logged at WARNING,
    counted as `fault="owner"`)."""


def owner_must_act(error: BaseException | None) -> bool:
    """Whether a failed attempt is for the binding's owner or the fleet's to act on (not the scheduler's)."""
    return isinstance(error, PlacementError | UnschedulableError | FitError)


class NotEnoughResources(PlacementError):
    """Cluster spread selection found no set of clusters with room for the replicas (`no enough resource when
    selecting N clusters`). Reason `SchedulerError` as in Karmada v1.18.2; with preemption on it starts a
    preemption, as Karmada's PR #7832 (which makes it an UnschedulableError) does."""


class FitError(SchedulingError):
    """No cluster passed the filters: reason `NoClusterFit`, `spec.clusters` is cleared, not retried.

    `diagnosis` is each failed cluster's reason by name. The message needs only how many clusters failed for each
    reason: a diagnosis that can count them without naming every cluster (`plugins.Diagnosis`, over 1,000
    clusters) is read that way and kept as it is, named only when a reader asks (pickling names it)."""

    def __init__(self, num_all_clusters: int, diagnosis: Mapping[str, str]) -> None:
        self.num_all_clusters = num_all_clusters
        self.diagnosis = diagnosis
        super().__init__(fit_error_message(num_all_clusters, diagnosis))

    def __reduce__(self) -> tuple[Callable[..., SchedulingError], tuple[type[SchedulingError], dict[str, Any],
                                                                     tuple[Any, ...]]]:
        return _rebuilt, (self.__class__, {**self.__dict__, "diagnosis": dict(self.diagnosis)}, self.args)


def reason_counts(diagnosis: Mapping[str, str]) -> dict[str, int]:
    """How many clusters failed for each reason: the diagnosis's own `reason_counts()` where it has one."""
    counted: Callable[[], dict[str, int]] | None = getattr(diagnosis, "reason_counts", None)
    if counted is not None:
        return counted()
    counts: dict[str, int] = {}
    for reason in diagnosis.values():
        counts[reason] = counts.get(reason, 0) + 1
    return counts


def fit_error_message(num_all_clusters: int, diagnosis: Mapping[str, str]) -> str:
    """`0/N clusters are available: <count> <reason>, ...` with the items sorted as strings."""
    counts = reason_counts(diagnosis) if num_all_clusters else {}
    if not counts:
        return f"0/{num_all_clusters} clusters are available: no cluster exists."
    items = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"0/{num_all_clusters} clusters are available: {', '.join(items)}."


@dataclass(frozen=True, slots=True)
class ConditionVerdict:
    """What a scheduling outcome writes into the `Scheduled` condition, and whether it is retried."""

    status: str
    reason: str
    message: str
    retry: bool


SUCCESS_MESSAGE = "Binding has been scheduled successfully."


def condition_for(error: BaseException | None) -> ConditionVerdict:
    """Karmada's `getConditionByError`, for one error (aggregates are handled where writes fail)."""
    if error is None:
        return ConditionVerdict("True", "Success", SUCCESS_MESSAGE, retry=False)
    if isinstance(error, UnschedulableError):
        return ConditionVerdict("False", error.reason, str(error), retry=True)
    if isinstance(error, FitError):
        return ConditionVerdict("False", "NoClusterFit", str(error), retry=False)
    return ConditionVerdict("False", "SchedulerError", str(error), retry=True)


class DecisionAbandoned(Exception):
    """Raised by a checkpoint to stop a decision midway (cancelled, over its CPU budget, or to be run
    elsewhere). Never a SchedulingError, so no attempt of the affinity walk takes it for a result."""


def no_checkpoint() -> None:
    """The checkpoint of a decision nobody may abandon."""
