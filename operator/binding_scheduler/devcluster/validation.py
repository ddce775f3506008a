"""A write's object held to its kind's schema: a custom resource's is its CRD's structural schema (pruned,
defaulted, validated: `schema.py`), a built-in kind's is kube-apiserver's OpenAPI schema of it, which only
prunes (taken from the kubectl package, which keeps kube-apiserver's documents)."""

from __future__ import annotations

from typing import Any

from .handoff import kubectl
from .patch import copy_json
from .resources import ResourceType
from .schema import Cause, prune_unknown

Obj = dict[str, Any]


def normalized(rt: ResourceType, obj: Obj, only: str | None = None) -> list[Cause]:
    """Apply the kind's schema to `obj` in place (of a custom resource: prune, default, validate, `only` one
    top-level field for a write through `/status`; of a built-in kind: prune): the causes of a 422."""
    if rt.schema is None:
        prune_builtin(rt, obj)
        return []
    if only is not None:
        rt.schema.normalize_part(obj, only)
    else:
        rt.schema.normalize(obj)
    return rt.schema.validate(obj, only=only)


def prune_builtin(rt: ResourceType, obj: Obj) -> None:
    """A built-in kind keeps only the fields its kube-apiserver schema knows (as its Go type does)."""
    root = kubectl.builtin_schema(rt.group, rt.version, rt.kind)
    if root is not None:
        prune_unknown(obj, root)
    else:
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            prune_unknown({"metadata": metadata}, {})


def pruned_copy(rt: ResourceType, obj: Obj) -> Obj:
    copied: Obj = copy_json(obj)
    prune_builtin(rt, copied)
    return copied
