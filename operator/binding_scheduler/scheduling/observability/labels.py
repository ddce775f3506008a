"""The label values of the scheduler's metrics, as enums: the scheduling code passes members, never strings, so
a typo is a type error (mypy) instead of a new series in production. Karmada's values are those of
`pkg/scheduler/metrics/metrics.go`, `pkg/scheduler/framework/runtime/framework.go` and
`pkg/scheduler/framework/interface.go: Code`."""

from __future__ import annotations

from enum import StrEnum


class AttemptResult(StrEnum):
    SCHEDULED = "scheduled"
    ERROR = "error"


class ScheduleStep(StrEnum):
    FILTER = "Filter"
    SCORE = "Score"
    SELECT = "Select"
    ASSIGN_REPLICAS = "AssignReplicas"


class BindingEvent(StrEnum):
    ADD = "BindingAdd"
    UPDATE = "BindingUpdate"
    CLUSTER_CHANGED = "ClusterChanged"
    ATTEMPT_FAILURE = "ScheduleAttemptFailure"
    POLICY_CHANGED = "PolicyChanged"
    """Defined by Karmada, never counted (as in Karmada)."""


class PluginPoint(StrEnum):
    """Karmada's framework extension points, as its plugin histogram labels them."""

    FILTER = "Filter"
    SCORE = "Score"
    SCORE_NORMALIZE = "ScoreExtensionNormalize"


class PluginResult(StrEnum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    ERROR = "Error"


class Queue(StrEnum):
    ACTIVE = "active"
    BACKOFF = "backoff"
    UNSCHEDULABLE = "unschedulable"


class PassOutcome(StrEnum):
    SCHEDULED = "scheduled"
    UNSCHEDULABLE = "unschedulable"
    PREEMPTING = "preempting"
    """Its victims are being evicted (or were): retried at the backoff's pace, not parked for the flush."""
    NO_CLUSTER_FIT = "no_cluster_fit"
    ERROR = "error"
    CONFLICT = "conflict"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"
    FORGOTTEN = "forgotten"


class WriteKind(StrEnum):
    SPEC = "spec"
    STATUS = "status"
    EVENT = "event"


class WriteResult(StrEnum):
    OK = "ok"
    CONFLICT = "conflict"
    ERROR = "error"
    GATE_CLOSED = "gate_closed"


class ShutdownFate(StrEnum):
    CANCELLED = "cancelled"
    DRAINED = "drained"
    CUT = "cut"
