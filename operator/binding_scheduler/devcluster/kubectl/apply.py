"""Server-side apply (`PATCH` with `application/apply-patch+yaml`), after kube-apiserver's field manager: an apply
is an `Apply` entry that owns exactly the fields of its configuration; the configuration is merged into the live
object, what the manager applied before and nobody owns any more is removed, and a change to a field another
manager owns is a 409 listing them (unless `force=true`, which takes them). The result is created, or stored as
an update, with the managedFields the apply set."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ApiError, bad_request, not_found
from ..objects import now_rfc3339
from ..patch import copy_json
from ..resources import ResourceType
from .fieldsets import (
    FieldSet,
    Schema,
    compare,
    field_set,
    leaves_of,
    merge,
    named_fields_are_members,
    remove_items,
    without,
)
from .managers import (
    STRIPPED,
    Conflicts,
    Entry,
    decode,
    empty_object,
    encode,
    ignored_fields,
    root_schema,
    stripped,
    update_others,
)

if TYPE_CHECKING:
    from ..store import Obj, Store


def _check(rt: ResourceType, name: str, config: Any) -> None:
    """kube-apiserver's refusals of a configuration: not this kind (400), another name (400), fields the schema
    does not declare (500, as its typed patch fails)."""
    if not isinstance(config, Mapping):
        raise bad_request("invalid object type: /, Kind=")
    group, _, version = str(config.get("apiVersion") or "").rpartition("/")
    if (config.get("apiVersion"), config.get("kind")) != (rt.api_version, rt.kind):
        raise bad_request(f"invalid object type: {group}/{version}, Kind={config.get('kind') or ''}")
    body_name = (config.get("metadata") or {}).get("name")
    if body_name is not None and body_name != name:
        raise bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({name})")
    unknown = rt.schema.unknown_fields(config) if rt.schema is not None else []
    if unknown:
        where = f"{(config.get('metadata') or {}).get('namespace') or ''}/{name}; {rt.group}/{rt.version}, " \
                f"Kind={rt.kind}"
        problems = [f".{path}: field not declared in schema" for path in unknown]
        detail = problems[0] if len(problems) == 1 else "\n".join(["errors:", *(f"  {p}" for p in problems)])
        raise ApiError(500, f"failed to create typed patch object ({where}): {detail}", "InternalError")


def apply(
    store: Store, rt: ResourceType, name: str, config: Any, *, namespace: str | None, subresource: str | None,
    manager: str, force: bool, dry_run: bool,
) -> tuple[Obj, bool]:
    """Apply `config` as `manager`: the object, and whether it was created. 409 on conflicts with other managers
    unless `force`."""
    _check(rt, name, config)
    old = store.find(rt, name, namespace)
    now = now_rfc3339()
    if old is None:
        if subresource is not None:
            raise not_found(rt.plural, rt.group, name)
        new = applied(rt, None, config, manager, "", force, now)
        new.setdefault("metadata", {})["name"] = name
        owned = new["metadata"].pop("managedFields", [])
        return store.create(rt, new, namespace, dry_run=dry_run, managed_fields=owned), True
    new = applied(rt, old, config, manager, subresource or "", force, now)
    return store.write_applied(rt, old, new, subresource, dry_run=dry_run), False


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def applied(
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
    changed = compare(last, stripped(live), schema)
    return field_set(last, schema) - changed.added - changed.modified - changed.removed


def _apply(
    rt: ResourceType, live: Mapping[str, Any] | None, config: Mapping[str, Any], manager: str, subresource: str,
    force: bool, now: str,
) -> dict[str, Any]:
    schema = root_schema(rt)
    ignored = ignored_fields(rt, subresource)
    live_object = stripped(live) if live is not None else empty_object(schema)
    managers = decode(((live or {}).get("metadata") or {}).get("managedFields"))
    config = stripped(config)
    new = merge(live_object, config, schema)
    me = Entry(manager, "Apply", rt.api_version, subresource, set(), now)
    last = managers.get(me.key)
    me.fields = without(field_set(config, schema), ignored) - STRIPPED
    managers[me.key] = me
    if last is not None and last.fields:
        new = _prune(new, managers, last.fields, schema)
    changes = compare(live_object, new, schema).without(ignored)
    update_others(managers, changes, me.key, force)
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
