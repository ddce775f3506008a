"""Field ownership (`metadata.managedFields`) and server-side apply, after kube-apiserver's field manager and
sigs.k8s.io/structured-merge-diff (SMD), on the objects' JSON with their schemas.

A field set is a Python set of paths; a path is a tuple of FieldsV1 path elements: `f:name` (a field or map key),
`k:{"name":"m1"}` (an item of a list of type map), `v:"x"` (an item of a list of type set). Every write records
its manager: non-apply writes as an `Update` that takes the fields it added or changed (from everyone, as kube
does), applies (`application/apply-patch+yaml`) as an `Apply` that owns exactly the fields of its configuration,
merges it into the live object, removes what it applied before and nobody owns any more, and fails with a 409
listing the fields another manager owns and this one would change (unless `force=true`).

Types come from the structural schema (CRDs) or kube-apiserver's OpenAPI (built-in kinds, and ObjectMeta for
every kind): objects are granular maps unless `x-kubernetes-map-type: atomic`; lists are atomic unless
`x-kubernetes-list-type` says `set` or `map` (or a built-in's patch strategy does); anything without a schema
is a granular map, an atomic list or a scalar, as SMD deduces.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ApiError
from ..patch import copy_json
from ..resources import ResourceType
from . import openapi

Path = tuple[str, ...]
FieldSet = set[Path]
Schema = Mapping[str, Any] | None

MISSING: Any = object()

# Never owned by anyone (the field manager's stripMeta).
STRIPPED: frozenset[Path] = frozenset({
    ("f:apiVersion",), ("f:kind",), ("f:metadata",), ("f:metadata", "f:name"), ("f:metadata", "f:namespace"),
    ("f:metadata", "f:creationTimestamp"), ("f:metadata", "f:selfLink"), ("f:metadata", "f:uid"),
    ("f:metadata", "f:clusterName"), ("f:metadata", "f:generation"), ("f:metadata", "f:managedFields"),
    ("f:metadata", "f:resourceVersion"),
})


# ---- types -----------------------------------------------------------------------------------------------------


def _object_meta() -> Schema:
    namespace = openapi.builtin_schema("", "v1", "Namespace")
    return namespace["properties"]["metadata"] if namespace is not None else None


_ROOTS: dict[int, tuple[Any, dict[str, Any]]] = {}


def root_schema(rt: ResourceType) -> Schema:
    """The schema SMD types an object of `rt` with: the CRD's, with ObjectMeta's for `metadata`."""
    if rt.schema is None:
        return openapi.builtin_schema(rt.group, rt.version, rt.kind)
    cached = _ROOTS.get(id(rt.schema))
    if cached is not None and cached[0] is rt.schema:
        return cached[1]
    root = dict(rt.schema.root)
    properties = dict(root.get("properties") or {})
    properties["metadata"] = _object_meta()
    root["properties"] = properties
    _ROOTS[id(rt.schema)] = (rt.schema, root)
    return root


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


def _child(schema: Schema, key: str) -> Schema:
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


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _item_pe(list_type: str, keys: tuple[str, ...], item: Any, index: int) -> str:
    if list_type == "map" and isinstance(item, dict):
        return "k:" + _compact({key: item[key] for key in sorted(keys) if key in item})
    if list_type == "set":
        return "v:" + _compact(item)
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
            _to_set(item, _child(schema, key), child, found)
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
        return Comparison(*(_without(part, ignored) for part in (self.added, self.modified, self.removed)))


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
        sub = _child(schema, key)
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
                _compare(left.get(key, MISSING), right.get(key, MISSING), _child(schema, key), (*path, f"f:{key}"),
                         result)
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
        return {key: merge(lhs.get(key, MISSING), rhs.get(key, MISSING), _child(schema, key))
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
            out[key] = remove_items(item, below, _child(schema, key)) if below else item
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
                node = _child(node, name)
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
                walk(item, _child(sub, key), (*path, f"f:{key}"))
        elif kind == "list" and isinstance(node, list) and _list_type(sub)[0] != "atomic":
            elements, items = _items(sub, node)
            for pe, item in items:
                walk(item, elements, (*path, pe))

    walk(value, schema, ())
    return found


# ---- FieldsV1 ----------------------------------------------------------------------------------------------------


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
            out.append("[" + ",".join(f"{k}={_compact(v)}" for k, v in keys.items()) + "]")
        elif kind == "v":
            out.append(f"[={rest}]")
        else:
            out.append(f"[{rest}]")
    return "".join(out)


# ---- managers ------------------------------------------------------------------------------------------------


@dataclass
class Entry:
    manager: str
    operation: str  # Apply | Update
    api_version: str
    subresource: str
    fields: FieldSet
    time: str | None
    # the stored entry this one was read from, while its fields are still those (encoding is then a copy)
    source: tuple[FieldSet, dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    def copy(self) -> Entry:
        return Entry(self.manager, self.operation, self.api_version, self.subresource, self.fields, self.time,
                     self.source)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.manager, self.operation, "" if self.operation == "Apply" else self.api_version,
                self.subresource)

    def encode(self) -> dict[str, Any]:
        if self.source is not None and (self.source[0] is self.fields or self.source[0] == self.fields):
            stored = self.source[1]
            return stored if stored.get("time") == self.time else {**stored, "time": self.time}
        entry: dict[str, Any] = {"manager": self.manager, "operation": self.operation,
                                 "apiVersion": self.api_version}
        if self.time is not None:
            entry["time"] = self.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry

    def describe(self) -> str:
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


_DECODED: dict[int, tuple[list[Any], list[Entry]]] = {}  # id(stored managedFields) -> (it, its entries)


def decode(entries: Any) -> dict[tuple[str, str, str, str], Entry]:
    """A managedFields list as entries by manager key. Stored lists are never changed in place (objects are
    replaced, not mutated), so the entries of one are parsed once and copied after."""
    if not isinstance(entries, list):
        return {}
    cached = _DECODED.get(id(entries))
    if cached is None or cached[0] is not entries:
        parsed = []
        for raw in entries:
            if not isinstance(raw, dict) or (not raw.get("manager") and not raw.get("fieldsV1")):
                continue
            fields = from_fields_v1(raw.get("fieldsV1") or {})
            parsed.append(Entry(str(raw.get("manager", "")), str(raw.get("operation", "Update")),
                                str(raw.get("apiVersion", "")), str(raw.get("subresource", "")), fields,
                                raw.get("time"), (fields, raw)))
        if len(_DECODED) > 20000:
            _DECODED.clear()
        cached = _DECODED[id(entries)] = (entries, parsed)
    return {entry.key: entry.copy() for entry in cached[1]}


def encode(managers: Mapping[tuple[str, str, str, str], Entry]) -> list[dict[str, Any]]:
    """Entries in kube's order: Apply before Update, then by time, manager, apiVersion, subresource (and the
    list remembered with its entries, for the next `decode` of it)."""
    ordered = sorted((e for e in managers.values() if e.fields),
                     key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource))
    encoded = [entry.encode() for entry in ordered]
    if len(_DECODED) > 20000:
        _DECODED.clear()
    _DECODED[id(encoded)] = (encoded, [Entry(e.manager, e.operation, e.api_version, e.subresource, e.fields, e.time,
                                             (e.fields, raw)) for e, raw in zip(ordered, encoded, strict=True)])
    return encoded


def _ignored(rt: ResourceType, subresource: str) -> tuple[Path, ...]:
    """The strategy's reset fields: `status` for the main resource of a kind with a status subresource, `spec`
    for its `/status`."""
    if subresource == "status":
        return (("f:spec",),)
    return (("f:status",),) if rt.has_status else ()


def _without(paths: FieldSet, ignored: tuple[Path, ...]) -> FieldSet:
    """`paths` less those under an ignored prefix (each a single top-level field)."""
    heads = {prefix[0] for prefix in ignored}
    return {p for p in paths if not p or p[0] not in heads}


def _stripped(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object without its managedFields (what the field manager compares)."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}
    return dict(obj)


def empty_object(schema: Schema) -> dict[str, Any]:
    """The object a create starts from: a custom resource's is empty; a built-in kind's has its non-pointer
    structs (`default: {}` in its OpenAPI), as Go's zero value encodes."""
    result: dict[str, Any] = {}
    for key, sub in ((schema or {}).get("properties") or {}).items():
        if isinstance(sub, dict) and sub.get("default") == {} and key != "metadata":
            result[key] = empty_object(sub)
    return result


class Conflicts(ApiError):
    """409: an apply would change fields other managers own."""

    def __init__(self, conflicts: list[tuple[Entry, Path]]) -> None:
        conflicts = sorted(conflicts, key=lambda c: (json.dumps(c[0].key), c[1]))
        self.conflicts = conflicts
        causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {entry.describe()}",
                   "field": path_text(path)} for entry, path in conflicts]
        if len(conflicts) == 1:
            entry, path = conflicts[0]
            message = f"Apply failed with 1 conflict: conflict with {entry.describe()}: {path_text(path)}"
        else:
            lines = []
            by_manager: dict[str, list[Path]] = {}
            for entry, path in conflicts:
                by_manager.setdefault(entry.describe(), []).append(path)
            for manager in sorted(by_manager):
                lines.append(f"conflicts with {manager}:")
                lines += [f"- {path_text(path)}" for path in by_manager[manager]]
            message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
        super().__init__(409, message, "Conflict", {"causes": causes})


def _update_others(managers: dict[tuple[str, str, str, str], Entry], changes: Comparison, me: tuple[str, ...] | None,
                   force: bool) -> None:
    """SMD's update: other managers lose what changed (a conflict unless forced) and what was removed."""
    conflicts = []
    for key, entry in managers.items():
        if key == me:
            continue
        taken = entry.fields & changes.changed()
        conflicts += [(entry, path) for path in taken]
    if conflicts and not force:
        raise Conflicts(conflicts)
    for key, entry in list(managers.items()):
        if key == me:
            continue
        entry.fields = entry.fields - changes.changed() - changes.removed
        if not entry.fields:
            del managers[key]


def record_update(
    rt: ResourceType, live: Mapping[str, Any] | None, new: dict[str, Any], manager: str, subresource: str,
    now: str | Callable[[], str], touched: Any = None,
) -> None:
    """Set `new`'s managedFields after a non-apply write (`live` is None for a create; `touched`: the body of a
    merge patch, where all the changes are)."""
    schema = root_schema(rt)
    metadata = new.setdefault("metadata", {})
    given = metadata.get("managedFields")
    if given == [{}] and not subresource:
        metadata.pop("managedFields", None)  # a request that resets managedFields
        return
    live_meta = (live or {}).get("metadata") or {}
    base = given if (given and not subresource) else live_meta.get("managedFields")
    managers = decode(base)
    before = _stripped(live) if live is not None else empty_object(schema)
    if live is not None and isinstance(touched, dict) and "managedFields" not in (touched.get("metadata") or {}):
        changes = compare_touched(before, _stripped(new), schema, touched)
    else:
        changes = compare(before, _stripped(new), schema)
    changes = changes.without(_ignored(rt, subresource))
    _update_others(managers, changes, None, True)
    taken = _without(changes.changed(), _ignored(rt, subresource)) - STRIPPED
    if taken:
        mine = Entry(manager, "Update", rt.api_version, subresource, taken, now if isinstance(now, str) else now())
        previous = managers.get(mine.key)
        if previous is not None:  # (its stored encoding is reused when its fields are the same)
            previous.fields, previous.time = previous.fields | taken, mine.time
            mine = previous
        managers[mine.key] = mine
    encoded = encode(managers)
    if encoded:
        metadata["managedFields"] = encoded
    else:
        metadata.pop("managedFields", None)


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def apply(
    rt: ResourceType, live: Mapping[str, Any] | None, config: Mapping[str, Any], manager: str, subresource: str,
    force: bool, now: str,
) -> dict[str, Any]:
    """Server-side apply of `config` by `manager` to `live` (None: the object does not exist): the new object,
    its managedFields set (before the write's defaulting, which nobody owns). 409 `Conflicts` unless forced.

    As kube-apiserver, the manager `kubectl` may take over what `kubectl apply` (client-side) applied: conflicts
    on fields of the last-applied-configuration annotation that still hold their applied values are forced, and
    the annotation is rewritten to the new configuration."""
    try:
        new = _apply(rt, live, config, manager, subresource, force, now)
    except Conflicts as conflicts:
        if manager != "kubectl" or live is None:
            raise
        allowed = _last_applied_fields(rt, live)
        if allowed is None or not {path for _, path in conflicts.conflicts} <= allowed:
            remaining = [(entry, path) for entry, path in conflicts.conflicts if path not in (allowed or set())]
            raise Conflicts(remaining) from None
        new = _apply(rt, live, config, manager, subresource, True, now)
    annotations = (new.get("metadata") or {}).get("annotations") or {}
    if manager == "kubectl" and annotations.get(LAST_APPLIED):
        applied = copy_json(dict(config))
        metadata = applied.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
            metadata["annotations"].pop(LAST_APPLIED, None)
            if not metadata["annotations"]:
                del metadata["annotations"]
        new["metadata"]["annotations"] = {**annotations, LAST_APPLIED: json.dumps(
            applied, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"}
    return new


def _last_applied_fields(rt: ResourceType, live: Mapping[str, Any]) -> FieldSet | None:
    """The fields of the live object's last-applied-configuration that still have the applied values."""
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    try:
        last = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != rt.api_version:
        return None
    schema = root_schema(rt)
    changed = compare(last, _stripped(live), schema)
    return field_set(last, schema) - changed.added - changed.modified - changed.removed


def _apply(
    rt: ResourceType, live: Mapping[str, Any] | None, config: Mapping[str, Any], manager: str, subresource: str,
    force: bool, now: str,
) -> dict[str, Any]:
    schema = root_schema(rt)
    ignored = _ignored(rt, subresource)
    live_object = _stripped(live) if live is not None else empty_object(schema)
    managers = decode(((live or {}).get("metadata") or {}).get("managedFields"))
    config = _stripped(config)
    new = merge(live_object, config, schema)
    me = Entry(manager, "Apply", rt.api_version, subresource, set(), now)
    last = managers.get(me.key)
    me.fields = _without(field_set(config, schema), ignored) - STRIPPED
    managers[me.key] = me
    if last is not None and last.fields:
        new = _prune(new, managers, last.fields, schema)
    changes = compare(live_object, new, schema).without(ignored)
    _update_others(managers, changes, me.key, force)
    if new == live_object:  # nothing changes: the applier's entry keeps its time (a new one has none)
        me.time = last.time if last is not None else None
    if not me.fields:
        del managers[me.key]
    encoded = encode(managers)
    metadata = new.setdefault("metadata", {}) if isinstance(new, dict) else {}
    if encoded:
        metadata["managedFields"] = encoded
    else:
        metadata.pop("managedFields", None)
    return new if isinstance(new, dict) else {}


def _prune(merged: Any, managers: Mapping[Any, Entry], last: FieldSet, schema: Schema) -> Any:
    """What the manager applied last time and no one (itself included, now) owns any more goes."""
    owned: FieldSet = set()
    for entry in managers.values():
        owned |= named_fields_are_members(entry.fields, schema)
    last_members = named_fields_are_members(last, schema)
    present = leaves_of(merged, schema)
    doomed = {path for path in last_members & present if path not in owned}
    below_owned = {owned_path[:n] for owned_path in owned for n in range(1, len(owned_path))}
    doomed = {path for path in doomed if path not in below_owned}
    doomed = {path for path in doomed if not any(path[:n] in doomed for n in range(1, len(path)))}
    return remove_items(merged, doomed, schema) if doomed else merged
