"""The one error the model raises for input it cannot accept."""

from __future__ import annotations

from typing import Any


class ValidationError(ValueError):
    """A field of a Karmada object is missing, mistyped or out of range.

    `path` is the JSON path of the offending field (`spec.placement.spreadConstraints[1].minGroups`),
    `problem` says what is wrong with it, including the value where there is one.
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def show(value: Any) -> str:
    """Render a rejected value the way the error messages quote it."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int) and value.bit_length() > 64:
        return "an integer out of range"  # repr() of a huge int may even fail (str-digits limit)
    return repr(value) if not isinstance(value, dict | list) else type(value).__name__
