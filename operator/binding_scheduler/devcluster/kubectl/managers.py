"""managedFields, after kube-apiserver's field manager: every write records its manager. A non-apply write is an
`Update` that takes the fields it added or changed (from everyone, as kube does); what a write removes leaves
every manager; the reset fields of the strategy (`status` of the main resource, `spec` through `/status`) and the
object's identity are nobody's."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ApiError
from ..resources import ResourceType
from .builtin_schemas import builtin_schema
from .fieldsets import Comparison, FieldSet, Path, Schema, compare, compare_touched, without
from .fieldsv1 import from_fields_v1, path_text, to_fields_v1

# Never owned by anyone (the field manager's stripMeta).
STRIPPED: frozenset[Path] = frozenset({
    ("f:apiVersion",), ("f:kind",), ("f:metadata",), ("f:metadata", "f:name"), ("f:metadata", "f:namespace"),
    ("f:metadata", "f:creationTimestamp"), ("f:metadata", "f:selfLink"), ("f:metadata", "f:uid"),
    ("f:metadata", "f:clusterName"), ("f:metadata", "f:generation"), ("f:metadata", "f:managedFields"),
    ("f:metadata", "f:resourceVersion"),
})


def _object_meta() -> Schema:
    namespace = builtin_schema("", "v1", "Namespace")
    return namespace["properties"]["metadata"] if namespace is not None else None


_ROOTS: dict[int, tuple[Any, dict[str, Any]]] = {}


def root_schema(rt: ResourceType) -> Schema:
    """The schema SMD types an object of `rt` with: the CRD's, with ObjectMeta's for `metadata`."""
    if rt.schema is None:
        return builtin_schema(rt.group, rt.version, rt.kind)
    cached = _ROOTS.get(id(rt.schema))
    if cached is not None and cached[0] is rt.schema:
        return cached[1]
    root = dict(rt.schema.root)
    properties = dict(root.get("properties") or {})
    properties["metadata"] = _object_meta()
    root["properties"] = properties
    _ROOTS[id(rt.schema)] = (rt.schema, root)
    return root


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


def ignored_fields(rt: ResourceType, subresource: str) -> tuple[Path, ...]:
    """The strategy's reset fields: `status` for the main resource of a kind with a status subresource, `spec`
    for its `/status`."""
    if subresource == "status":
        return (("f:spec",),)
    return (("f:status",),) if rt.has_status else ()


def stripped(obj: Mapping[str, Any]) -> dict[str, Any]:
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


def update_others(managers: dict[tuple[str, str, str, str], Entry], changes: Comparison, me: tuple[str, ...] | None,
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
    before = stripped(live) if live is not None else empty_object(schema)
    if live is not None and isinstance(touched, dict) and "managedFields" not in (touched.get("metadata") or {}):
        changes = compare_touched(before, stripped(new), schema, touched)
    else:
        changes = compare(before, stripped(new), schema)
    changes = changes.without(ignored_fields(rt, subresource))
    update_others(managers, changes, None, True)
    taken = without(changes.changed(), ignored_fields(rt, subresource)) - STRIPPED
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
