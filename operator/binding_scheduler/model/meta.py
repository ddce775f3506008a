"""Typed views of what the scheduler reads off any API object before (or without) parsing it whole: its kind and
metadata (Kopf's `Meta` view over a body), and a stored binding as one object: its body, that view, and its parse
(`ParsedBinding`) or the error its parse raised (`InvalidBinding`).

Every read of `kind`, `metadata.name`/`namespace`/`uid`/`resourceVersion`/`generation` goes through `ObjectMeta.of`,
so an absent or mistyped field has one meaning everywhere: "" for text, 0 for the generation (which the API server
starts at 1). The view never raises: a body too broken to parse still has a view, for the line that reports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .binding import Binding
from .errors import ValidationError


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    """An object's kind and identifying metadata, as its body holds them."""

    kind: str = ""
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> ObjectMeta:
        metadata = body.get("metadata")
        if not isinstance(metadata, Mapping):
            metadata = {}
        generation = metadata.get("generation")
        return cls(
            kind=_text(body.get("kind")),
            name=_text(metadata.get("name")),
            namespace=_text(metadata.get("namespace")),
            uid=_text(metadata.get("uid")),
            resource_version=_text(metadata.get("resourceVersion")),
            generation=generation if isinstance(generation, int) and not isinstance(generation, bool) else 0,
        )

    @classmethod
    def of_binding(cls, binding: Binding) -> ObjectMeta:
        return cls(binding.scope.value, binding.name, binding.namespace, binding.uid, binding.resource_version,
                   binding.generation)

    @property
    def key(self) -> str:
        """`namespace/name`, or `name` for a cluster-scoped object (the scheduling queue's key)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def status_of(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """A body's `status` as it is (the conditions a status patch keeps), {} when it has none."""
    status = body.get("status")
    return status if isinstance(status, Mapping) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class StoredBinding:
    """One binding as the scheduler holds it: the body as it arrived (what a status patch merges into) and its
    metadata view; `ParsedBinding` or `InvalidBinding` says what its parse gave."""

    body: Mapping[str, Any]
    meta: ObjectMeta

    @property
    def status(self) -> Mapping[str, Any]:
        return status_of(self.body)


@dataclass(frozen=True, slots=True)
class ParsedBinding(StoredBinding):
    """A stored binding the model accepts: `binding` is its parse."""

    binding: Binding


@dataclass(frozen=True, slots=True)
class InvalidBinding(StoredBinding):
    """A stored binding the model rejects: `error` names the field and what is wrong with it."""

    error: ValidationError
