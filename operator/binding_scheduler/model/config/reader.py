"""One object of a SchedulerConfiguration read field by field, every error kept: a wrong field is recorded and
reads as its default, so the fields after it are still checked (kubectl reports every invalid field at once)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import ValidationError
from ..fields import Fields
from .sections import json_fields

T = TypeVar("T")


class Reader:
    """`fields` with the errors found in the whole object so far (shared with its sections' readers) and the
    keys of this one that were wrong."""

    __slots__ = ("errors", "failed", "fields")

    def __init__(self, fields: Fields, errors: list[ValidationError] | None = None) -> None:
        self.fields = fields
        self.errors: list[ValidationError] = [] if errors is None else errors
        self.failed: set[str] = set()

    def at(self, key: str) -> str:
        return self.fields.at(key)

    def raw(self, key: str) -> Any:
        return self.fields.raw(key)

    def read(self, key: str, default: T, reader: Callable[[Fields, str, T], T]) -> T:
        """`reader(fields, key, default)`, or `default` when it raises (the error is recorded)."""
        try:
            return reader(self.fields, key, default)
        except ValidationError as error:
            self.failed.add(key)
            self.errors.extend(error.errors)
            return default

    def fail(self, key: str, problem: str, *, at: str | None = None) -> None:
        """Record that `key` is wrong; the error's path is the key's, or `at` (an entry of it)."""
        self.failed.add(key)
        self.errors.append(ValidationError(at or self.at(key), problem))

    def broken(self, key: str, problem: str) -> None:
        """Record that a rule tying `key` to other fields is broken: the fields themselves stay right, so the
        other rules between them are still checked."""
        self.errors.append(ValidationError(self.at(key), problem))

    def ok(self, *keys: str) -> bool:
        """None of `keys` was read wrong (a rule tying fields together is checked only between right ones)."""
        return self.failed.isdisjoint(keys)

    def section(self, key: str, cls: type[Any]) -> Reader | None:
        """The object at `key`, read as section `cls` (each of its unknown fields an error), or None when it is
        missing or is no object (an error)."""
        try:
            fields = self.fields.obj(key)
        except ValidationError as error:
            self.failed.add(key)
            self.errors.extend(error.errors)
            return None
        if fields is None:
            return None
        section = Reader(fields, self.errors)
        known = {name for name, _ in json_fields(cls)}
        for unknown in (name for name in fields.data if name not in known):
            section.fail(str(unknown), "unknown field")
        return section
