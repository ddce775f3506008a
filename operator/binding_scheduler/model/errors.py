"""The one error the model raises for input it cannot accept."""

from __future__ import annotations

from collections.abc import Sequence
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

    @property
    def errors(self) -> tuple[ValidationError, ...]:
        """Each error this one reports: itself (several for a `ValidationErrors`)."""
        return (self,)


class ValidationErrors(ValidationError):
    """Several fields of one object are wrong, all found at once (`errors`, in the order they were found).

    `path` and `problem` are the first error's, so a caller that reads one error still reads a true one;
    str() is every error, joined by `; ` (one line, for a log line or a condition message).
    """

    def __init__(self, errors: Sequence[ValidationError]) -> None:
        each = tuple(one for error in errors for one in error.errors)
        if len(each) < 2:
            raise ValueError("ValidationErrors holds two errors or more: raise the one error itself")
        super().__init__(each[0].path, each[0].problem)
        self.args = ("; ".join(str(one) for one in each),)
        self._each = each

    @property
    def errors(self) -> tuple[ValidationError, ...]:
        return self._each


def combined(errors: Sequence[ValidationError]) -> ValidationError:
    """The one error to raise for `errors` (at least one): itself when there is one, else `ValidationErrors`."""
    each = [one for error in errors for one in error.errors]
    if not each:
        raise ValueError("no error to raise")
    return each[0] if len(each) == 1 else ValidationErrors(each)


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
