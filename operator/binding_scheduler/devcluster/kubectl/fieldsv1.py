"""Field sets as FieldsV1, the JSON managedFields store them in, and paths as SMD prints them in a conflict."""

from __future__ import annotations

import json
from typing import Any

from .fieldsets import FieldSet, Path, compact


def _pe_order(pe: str) -> tuple[int, str]:
    return ({"f": 0, "k": 1, "v": 2, "i": 3}.get(pe[:1], 4), pe)


def to_fields_v1(paths: FieldSet) -> dict[str, Any]:
    """A field set as FieldsV1 JSON: nested objects, `".": {}` where a path with children is itself a member."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for pe in path:
            node = node.setdefault(pe, {})
    members = set(paths)

    def emit(node: dict[str, Any], path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if path in members and node and path:
            out["."] = {}
        for pe in sorted(node, key=_pe_order):
            out[pe] = emit(node[pe], (*path, pe))
        return out

    return emit(tree, ())


def from_fields_v1(fields: Any, path: Path = ()) -> FieldSet:
    found: FieldSet = set()
    if not isinstance(fields, dict):
        return found
    for pe, sub in fields.items():
        if pe == ".":
            found.add(path)
            continue
        child = (*path, pe)
        if not sub:
            found.add(child)
        else:
            found |= from_fields_v1(sub, child)
    return found


def path_text(path: Path) -> str:
    """A path as SMD prints it in a conflict: `.spec.clusters[name="m1"].replicas`."""
    out = []
    for pe in path:
        kind, _, rest = pe.partition(":")
        if kind == "f":
            out.append("." + rest)
        elif kind == "k":
            keys = json.loads(rest)
            out.append("[" + ",".join(f"{k}={compact(v)}" for k, v in keys.items()) + "]")
        elif kind == "v":
            out.append(f"[={rest}]")
        else:
            out.append(f"[{rest}]")
    return "".join(out)
