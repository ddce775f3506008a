"""Typed field sets, after sigs.k8s.io/structured-merge-diff (SMD), on objects' JSON with their schemas: what
managedFields record and server-side apply computes with.

A field set is a Python set of paths; a path is a tuple of FieldsV1 path elements: `f:name` (a field or map key),
`k:{"name":"m1"}` (an item of a list of type map), `v:"x"` (an item of a list of type set). Types come from the
structural schema (CRDs) or kube-apiserver's OpenAPI (built-in kinds, and ObjectMeta for every kind): objects are
granular maps unless `x-kubernetes-map-type: atomic`; lists are atomic unless `x-kubernetes-list-type` says `set`
or `map` (or a built-in's patch strategy does); anything without a schema is a granular map, an atomic list or a
scalar, as SMD deduces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..patch import copy_json

Path = tuple[str, ...]
FieldSet = set[Path]
Schema = Mapping[str, Any] | None

MISSING: Any = object()


# ---- types -----------------------------------------------------------------------------------------------------


def _kind(schema: Schema, value: Any) -> str:
    """`map`, `list` or `scalar` for a value under a schema (untyped values: as SMD deduces them)."""
    if schema is not None:
        declared = schema.get("type")
        if declared == "array" or (declared is None and "items" in schema):
            return "list"
        if declared == "object" or "properties" in schema or "additionalProperties" in schema:
            return "map"
        if declared is not None or schema.get("x-kubernetes-int-or-string"):
            return "scalar"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    return "scalar"


def _atomic_map(schema: Schema) -> bool:
    return schema is not None and schema.get("x-kubernetes-map-type") == "atomic"


def child_schema(schema: Schema, key: str) -> Schema:
    """The schema of `key` under `schema`: a declared property, else `additionalProperties` (None: unknown)."""
    if schema is None:
        return None
    properties = schema.get("properties") or {}
    if key in properties:
        return properties[key]  # type: ignore[no-any-return]
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


def _declared(schema: Schema, key: str) -> bool:
    return schema is not None and key in (schema.get("properties") or {})


def _list_type(schema: Schema) -> tuple[str, tuple[str, ...]]:
    """("atomic" | "set" | "map", map keys)."""
    if schema is None:
        return "atomic", ()
    declared = schema.get("x-kubernetes-list-type")
    if declared in ("set", "map", "atomic"):
        return declared, tuple(schema.get("x-kubernetes-list-map-keys") or ())
    if "merge" in str(schema.get("x-kubernetes-patch-strategy", "")).split(","):
        key = schema.get("x-kubernetes-patch-merge-key")
        return ("map", (str(key),)) if key else ("set", ())
    return "atomic", ()


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _item_pe(list_type: str, keys: tuple[str, ...], item: Any, index: int) -> str:
    if list_type == "map" and isinstance(item, dict):
        return "k:" + compact({key: item[key] for key in sorted(keys) if key in item})
    if list_type == "set":
        return "v:" + compact(item)
    return f"i:{index}"


def _items(schema: Schema, value: list[Any]) -> tuple[Schema, list[tuple[str, Any]]]:
    list_type, keys = _list_type(schema)
    items = schema.get("items") if schema is not None else None
    return (items if isinstance(items, dict) else None,
            [(_item_pe(list_type, keys, item, index), item) for index, item in enumerate(value)])


# ---- field sets ------------------------------------------------------------------------------------------------


def field_set(value: Any, schema: Schema, path: Path = ()) -> FieldSet:
    """SMD's ToFieldSet: every leaf, every list item, and every map entry that is empty or not a declared
    field."""
    found: FieldSet = set()
    _to_set(value, schema, path, found)
    return found


def _to_set(value: Any, schema: Schema, path: Path, found: FieldSet) -> None:
    kind = _kind(schema, value)
    if kind == "list":
        if _list_type(schema)[0] == "atomic" or not isinstance(value, list):
            found.add(path)
            return
        elements, items = _items(schema, value)
        seen: set[str] = set()
        for pe, item in items:
            if pe in seen:
                continue
            seen.add(pe)
            _to_set(item, elements, (*path, pe), found)
            found.add((*path, pe))
    elif kind == "map":
        if _atomic_map(schema) or not isinstance(value, dict):
            found.add(path)
            return
        for key, item in value.items():
            child = (*path, f"f:{key}")
            _to_set(item, child_schema(schema, key), child, found)
            if item is None or item == {} or not _declared(schema, key):
                found.add(child)
    else:
        found.add(path)


@dataclass
class Comparison:
    added: FieldSet = field(default_factory=set)
    modified: FieldSet = field(default_factory=set)
    removed: FieldSet = field(default_factory=set)

    def changed(self) -> FieldSet:
        return self.added | self.modified

    def without(self, ignored: Iterable[Path]) -> Comparison:
        ignored = tuple(ignored)
        if not ignored:
            return self
        return Comparison(*(without(part, ignored) for part in (self.added, self.modified, self.removed)))


def compare(lhs: Any, rhs: Any, schema: Schema) -> Comparison:
    """SMD's Compare of two objects (from `lhs` to `rhs`)."""
    result = Comparison()
    _compare(lhs, rhs, schema, (), result, root=True)
    return result


def compare_touched(lhs: Any, rhs: Any, schema: Schema, touched: Mapping[str, Any]) -> Comparison:
    """`compare`, looking only where a merge patch (`touched`) could have changed anything (the rest of a stored
    object is as it was): the scheduler's many small patches cost little."""
    result = Comparison()
    _compare_touched(lhs, rhs, schema, touched, (), result)
    return result


def _compare_touched(lhs: Any, rhs: Any, schema: Schema, touched: Mapping[str, Any], path: Path,
                     result: Comparison) -> None:
    for key, below in touched.items():
        left = lhs.get(key, MISSING) if isinstance(lhs, dict) else MISSING
        right = rhs.get(key, MISSING) if isinstance(rhs, dict) else MISSING
        if left is MISSING and right is MISSING:
            continue
        sub = child_schema(schema, key)
        if (isinstance(below, dict) and isinstance(left, dict) and isinstance(right, dict)
                and _kind(sub, right) == "map" and not _atomic_map(sub) and left and right):
            _compare_touched(left, right, sub, below, (*path, f"f:{key}"), result)
        else:
            _compare(left, right, sub, (*path, f"f:{key}"), result)


def _compare(lhs: Any, rhs: Any, schema: Schema, path: Path, result: Comparison, root: bool = False) -> None:
    present = rhs if rhs is not MISSING else lhs
    kind = _kind(schema, present)
    other = _kind(schema, lhs) if lhs is not MISSING and rhs is not MISSING else kind
    leaf = kind == "scalar" or kind != other
    if not leaf and kind == "list":
        left_list, right_list = (v if isinstance(v, list) else [] for v in (lhs, rhs))
        leaf = _list_type(schema)[0] == "atomic" or (not left_list and not right_list)
        if not leaf:
            elements, left_items = _items(schema, left_list)
            _, right_items = _items(schema, right_list)
            left_map, right_map = dict(reversed(left_items)), dict(reversed(right_items))
            order = list(dict.fromkeys([pe for pe, _ in left_items] + [pe for pe, _ in right_items]))
            for pe in order:
                _compare(left_map.get(pe, MISSING), right_map.get(pe, MISSING), elements, (*path, pe), result)
    elif not leaf and kind == "map":
        left, right = (v if isinstance(v, dict) else {} for v in (lhs, rhs))
        leaf = _atomic_map(schema) or (not left and not right)
        if not leaf:
            for key in dict.fromkeys([*left, *right]):
                _compare(left.get(key, MISSING), right.get(key, MISSING), child_schema(schema, key),
                         (*path, f"f:{key}"), result)
    if leaf:
        if lhs is MISSING:
            result.added.add(path)
        elif rhs is MISSING:
            result.removed.add(path)
        elif lhs != rhs:
            result.modified.add(path)
    elif not root:
        if lhs is MISSING:
            result.added.add(path)
        elif rhs is MISSING:
            result.removed.add(path)


def merge(lhs: Any, rhs: Any, schema: Schema) -> Any:
    """SMD's Merge: `rhs` (an apply configuration) over `lhs` (the live object)."""
    if rhs is MISSING:
        return copy_json(lhs)
    if lhs is MISSING:
        return copy_json(rhs)
    kind = _kind(schema, rhs)
    if kind != _kind(schema, lhs) or kind == "scalar":
        return copy_json(rhs)
    if kind == "map":
        if _atomic_map(schema) or (not lhs and not rhs):
            return copy_json(rhs)
        return {key: merge(lhs.get(key, MISSING), rhs.get(key, MISSING), child_schema(schema, key))
                for key in dict.fromkeys([*lhs, *rhs])}
    if _list_type(schema)[0] == "atomic" or (not lhs and not rhs):
        return copy_json(rhs)
    return _merge_lists(lhs, rhs, schema)


def _merge_lists(lhs: list[Any], rhs: list[Any], schema: Schema) -> list[Any]:
    """SMD's list merge: items of both, in an order that keeps both lists' orders where it can."""
    elements, left_items = _items(schema, lhs)
    _, right_items = _items(schema, rhs)
    left_map, right_map = dict(reversed(left_items)), dict(reversed(right_items))
    left_pes = list(dict.fromkeys(pe for pe, _ in left_items))
    right_pes = list(dict.fromkeys(pe for pe, _ in right_items))
    shared = [pe for pe in right_pes if pe in left_map]
    next_shared = shared.pop(0) if shared else None
    merged: set[str] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(left_pes) or ri < len(right_pes):
        if li < len(left_pes) and ri < len(right_pes):
            pe = left_pes[li]
            if pe == right_pes[ri]:
                merged.add(pe)
                out.append(merge(left_map[pe], right_map[pe], elements))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in right_map and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(left_pes):
            pe = left_pes[li]
            if pe not in right_map:
                out.append(copy_json(left_map[pe]))
                li += 1
                continue
            if pe in merged:
                li += 1
        if ri < len(right_pes):
            pe = right_pes[ri]
            merged.add(pe)
            out.append(merge(left_map.get(pe, MISSING), right_map[pe], elements))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


def remove_items(value: Any, paths: FieldSet, schema: Schema) -> Any:
    """SMD's RemoveItems: drop the fields and list items of `paths` (relative to `value`); what ends up empty
    becomes null."""
    kind = _kind(schema, value)
    if kind == "list" and isinstance(value, list):
        if not value or _list_type(schema)[0] == "atomic":
            return value if value else None
        elements, items = _items(schema, value)
        kept = []
        for pe, item in items:
            if (pe,) in paths:
                continue
            below = {p[1:] for p in paths if p[0] == pe and len(p) > 1}
            kept.append(remove_items(item, below, elements) if below else item)
        return kept or None
    if kind == "map" and isinstance(value, dict):
        if not value or _atomic_map(schema):
            return value or None
        out = {}
        for key, item in value.items():
            pe = f"f:{key}"
            if (pe,) in paths:
                continue
            below = {p[1:] for p in paths if p[0] == pe and len(p) > 1}
            out[key] = remove_items(item, below, child_schema(schema, key)) if below else item
        return out or None
    return value


def named_fields_are_members(paths: FieldSet, schema: Schema) -> FieldSet:
    """SMD's EnsureNamedFieldsAreMembers: every declared field on the way to a path is a member too."""
    result = set(paths)
    for path in paths:
        node = schema
        for index, pe in enumerate(path[:-1]):
            if pe.startswith("f:"):
                name = pe[2:]
                if _declared(node, name):
                    result.add(path[:index + 1])
                node = child_schema(node, name)
            else:
                items = node.get("items") if node is not None else None
                node = items if isinstance(items, dict) else None
    return result


def leaves_of(value: Any, schema: Schema) -> FieldSet:
    """Every path of an object (what RemoveItems can remove), for the prune's set arithmetic."""
    found: FieldSet = set()

    def walk(node: Any, sub: Schema, path: Path) -> None:
        if path:
            found.add(path)
        kind = _kind(sub, node)
        if kind == "map" and isinstance(node, dict) and not _atomic_map(sub):
            for key, item in node.items():
                walk(item, child_schema(sub, key), (*path, f"f:{key}"))
        elif kind == "list" and isinstance(node, list) and _list_type(sub)[0] != "atomic":
            elements, items = _items(sub, node)
            for pe, item in items:
                walk(item, elements, (*path, pe))

    walk(value, schema, ())
    return found


def without(paths: FieldSet, ignored: tuple[Path, ...]) -> FieldSet:
    """`paths` less those under an ignored prefix (each a single top-level field)."""
    heads = {prefix[0] for prefix in ignored}
    return {p for p in paths if not p or p[0] not in heads}
