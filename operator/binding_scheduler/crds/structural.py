"""The walk of a structural schema that lists the fields of an object the schema does not have: those
kube-apiserver's pruning drops, and its field validation reports (`unknown field "spec.placment"`).

One walk for its two users: `simulate` and `explain`, which check their input files against the CRDs
(cli/fields.py), and devcluster, which prunes by it and reports it under `fieldValidation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields",
})


def child_path(path: str, key: str) -> str:
    """The field path of `key` under `path` (`spec` + `placement` -> `spec.placement`)."""
    return f"{path}.{key}" if path else key


def unknown_fields(obj: Mapping[str, Any], root: Mapping[str, Any] | None) -> list[str]:
    """Unknown fields of an object for a structural schema (`root`; None: only `metadata` is checked), in kube's
    order: unknown `metadata` fields, then the rest sorted."""
    metadata = obj.get("metadata")
    found = sorted(f"metadata.{key}" for key in metadata if key not in OBJECT_META_FIELDS) if isinstance(
        metadata, Mapping) else []
    if root is None:
        return found
    rest: list[str] = []
    properties = root.get("properties") or {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind", "metadata"):
            continue
        sub = properties.get(key)
        if sub is None:
            if not root.get("x-kubernetes-preserve-unknown-fields"):
                rest.append(key)
        else:
            _unknown(value, sub, key, rest)
    return found + sorted(rest)


def _unknown(value: Any, schema: Mapping[str, Any], path: str, found: list[str]) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        if properties is None and additional is None and schema.get("type") != "object":
            return
        for key, item in value.items():
            sub = (properties or {}).get(key)
            if sub is None:
                if isinstance(additional, dict):
                    sub = additional
                elif additional is True or schema.get("x-kubernetes-preserve-unknown-fields"):
                    continue
                else:
                    found.append(child_path(path, key))
                    continue
            _unknown(item, sub, child_path(path, key), found)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _unknown(item, items, f"{path}[{index}]", found)
