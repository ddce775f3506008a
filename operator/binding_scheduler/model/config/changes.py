"""What a new spec changes: the spec's leaf fields as JSON paths, the ones whose values differ, those a running
scheduler applies only at its next start, and what the `Valid` condition then says."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..errors import ValidationError
from .sections import DEFAULT_CONFIG, SchedulerConfig, json_fields

CONDITION_VALID = "Valid"
REASON_VALID = "Valid"
REASON_INVALID_SPEC = "InvalidSpec"
REASON_RESTART_REQUIRED = "RestartRequired"

# Changes under these paths take effect only at the next start: the event filter (schedulerName), the decision
# processes, the Lease and its identity, the HTTP servers and the API client are all set up once.
RESTART_REQUIRED_PATHS = ("spec.schedulerName", "spec.decisionProcesses", "spec.leaderElection", "spec.metrics",
                          "spec.kubeAPI")


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    if not dataclasses.is_dataclass(value):
        return [(path, value)]
    found: list[tuple[str, Any]] = []
    for name, f in json_fields(type(value)):
        found += _leaves(getattr(value, f.name), f"{path}.{name}")
    return found


def config_field_paths() -> list[str]:
    """Every leaf field of the spec, as JSON paths (`spec.estimator.service.port`), in declaration order.

    `spec.estimator.endpoints` is one leaf (a map of cluster name to address).
    """
    return [path for path, _ in _leaves(DEFAULT_CONFIG, "spec")]


def changed_fields(old: SchedulerConfig, new: SchedulerConfig) -> list[str]:
    """The leaf paths whose values differ, in declaration order."""
    return [path for (path, a), (_, b) in zip(_leaves(old, "spec"), _leaves(new, "spec"), strict=True) if a != b]


def restart_required(old: SchedulerConfig, new: SchedulerConfig) -> list[str]:
    """The changed paths a running scheduler cannot apply (see RESTART_REQUIRED_PATHS); the rest apply to the
    next pass."""
    return [
        path
        for path in changed_fields(old, new)
        if any(path == prefix or path.startswith(prefix + ".") for prefix in RESTART_REQUIRED_PATHS)
    ]


def validity(
    error: ValidationError | None, restart: Sequence[str] = (), *, at_start: bool = False
) -> tuple[bool, str, str]:
    """The `Valid` condition's status, reason and message for the outcome of reading a new spec (`at_start`:
    the first one, so there is no earlier valid configuration to keep)."""
    if error is not None and at_start:
        return False, REASON_INVALID_SPEC, f"{error}; the scheduler did not start (no valid configuration yet)"
    if error is not None:
        return False, REASON_INVALID_SPEC, f"{error}; the last valid configuration stays in force"
    if restart:
        return True, REASON_RESTART_REQUIRED, f"applied except {', '.join(restart)}, {at_restart(restart)}"
    return True, REASON_VALID, "applied"


def at_restart(paths: Sequence[str]) -> str:
    """`which takes effect at restart` for one field, `which take effect at restart` for several."""
    return "which takes effect at restart" if len(paths) == 1 else "which take effect at restart"
