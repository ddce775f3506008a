"""The object store: one global resourceVersion, the verbs' object semantics, and the event history for watches.

Every method runs synchronously inside the event loop, so each write is atomic. Stored objects are never
mutated in place (writes replace them), so the dicts handed out are consistent snapshots: treat them as
read-only and `copy_json()` them before changing anything.

A write goes: the object it asks for (created, replaced, patched or applied), what of the stored object it keeps
(`objects.py`), the schema (`validation.py`), the managedFields (the kubectl package's), then `_commit` (no-op,
generation, dry run, the last finalizer).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from . import errors, objects
from .errors import ApiError
from .handoff import kubectl
from .history import Event, History, Obj, StorageKey, Subscriber
from .objects import CRDS, NAMESPACES, now_rfc3339
from .patch import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_PATCH,
    PatchError,
    copy_json,
    json_patch,
    merge_patch,
)
from .resources import Registry, ResourceType, types_from_crd
from .selectors import Matcher
from .validation import normalized, pruned_copy

__all__ = ["DEFAULT_MANAGER", "Event", "Obj", "Store", "Subscriber"]

DEFAULT_MANAGER = "devcluster"  # who writes through the in-process Store API

_REJECTED_PATCH = "the server rejected our request due to an error in our request"  # all kube says of a bad patch


class Store:
    """All objects of all served types, plus the retained event history (`history` events)."""

    def __init__(self, registry: Registry, history: int = 1000) -> None:
        self.registry = registry
        self._objects: dict[StorageKey, dict[tuple[str, str], Obj]] = {}
        self._rv = 0
        self._history = History(history)

    # ---- introspection ----------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The latest resourceVersion handed out (0 before the first write)."""
        return self._rv

    @property
    def oldest_watchable_rv(self) -> int:
        """A watch from a version older than this gets `410 Gone` (its events are no longer retained)."""
        return self._history.oldest_watchable_rv

    def _type(self, rtype: ResourceType | str) -> ResourceType:
        return rtype if isinstance(rtype, ResourceType) else self.registry.resolve(rtype)

    # ---- reads ------------------------------------------------------------------------------------

    def get(self, rtype: ResourceType | str, name: str, namespace: str | None = None) -> Obj:
        """The stored object (404 `ApiError` if absent)."""
        rt = self._type(rtype)
        obj = self._objects.get(rt.storage_key, {}).get((namespace or "" if rt.namespaced else "", name))
        if obj is None:
            raise errors.not_found(rt.plural, rt.group, name)
        return obj

    def find(self, rtype: ResourceType | str, name: str, namespace: str | None = None) -> Obj | None:
        """The stored object or None."""
        try:
            return self.get(rtype, name, namespace)
        except ApiError:
            return None

    def list(
        self, rtype: ResourceType | str, namespace: str | None = None, matcher: Matcher | None = None
    ) -> builtins.list[Obj]:
        """Objects sorted by (namespace, name); all namespaces when `namespace` is None."""
        rt = self._type(rtype)
        return _selected(rt, self._objects.get(rt.storage_key, {}), namespace, matcher)

    def list_at(
        self, rtype: ResourceType | str, rv: int, namespace: str | None = None, matcher: Matcher | None = None
    ) -> builtins.list[Obj]:
        """`list()` as it was at `rv`: the later writes of the type undone from the retained history (410
        `ApiError` when some of them are no longer retained). A paged list serves its later pages this way,
        from the first page's version, as kube-apiserver serves them from one etcd revision."""
        rt = self._type(rtype)
        later = self.history_since(rv, rt.storage_key)
        if not later:
            return self.list(rt, namespace, matcher)
        bucket = dict(self._objects.get(rt.storage_key, {}))
        for event in reversed(later):
            metadata = event.obj["metadata"]
            at = ((metadata.get("namespace") or "") if rt.namespaced else "", metadata["name"])
            if event.type == "ADDED" or event.old is None:
                bucket.pop(at, None)
            else:
                bucket[at] = event.old
        return _selected(rt, bucket, namespace, matcher)

    def history_since(self, rv: int, key: StorageKey) -> builtins.list[Event]:
        """Retained events of one storage key newer than `rv` (410 `ApiError` if some were dropped, or if the
        type was not served yet at `rv`)."""
        return self._history.since(rv, key)

    # ---- subscriptions ----------------------------------------------------------------------------

    def subscribe(self, rtype: ResourceType, namespace: str | None) -> Subscriber:
        return self._history.subscribe(rtype.storage_key, namespace if rtype.namespaced else None)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._history.unsubscribe(subscriber)

    def poke_all(self) -> None:
        self._history.poke_all()

    # ---- storing ----------------------------------------------------------------------------------

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _put(self, rt: ResourceType, obj: Obj, event_type: str, old: Obj | None) -> None:
        metadata = obj["metadata"]
        namespace = metadata.get("namespace") if rt.namespaced else None
        self._objects.setdefault(rt.storage_key, {})[(namespace or "", metadata["name"])] = obj
        rv = int(metadata["resourceVersion"])
        self._history.emit(Event(rv, event_type, rt.storage_key, namespace, obj, old))
        if rt.storage_key == CRDS:
            served = types_from_crd(obj)
            for served_type in served:
                self._history.served_from(served_type.storage_key, rv, again=event_type == "ADDED")
            self.registry.add_all(served)

    def _drop(self, rt: ResourceType, obj: Obj, old: Obj) -> None:
        metadata = obj["metadata"]
        namespace = metadata.get("namespace") if rt.namespaced else None
        self._objects.get(rt.storage_key, {}).pop((namespace or "", metadata["name"]), None)
        self._history.emit(Event(int(metadata["resourceVersion"]), "DELETED", rt.storage_key, namespace, obj, old))
        if rt.storage_key == CRDS:
            self.registry.remove_crd(obj)
        if namespace:
            self._finish_namespace(namespace)

    def _commit(self, rt: ResourceType, old: Obj, result: Obj, dry_run: bool) -> Obj:
        """Store an update's `result`: nothing when it changes nothing (no new resourceVersion, no event, as
        kube-apiserver), generation +1 when the spec changed, and the object goes instead when it lost its last
        finalizer while being deleted."""
        if result == old:
            return old
        objects.bump_generation(rt, old, result)
        if dry_run:
            return result
        metadata = result["metadata"]
        if metadata.get("deletionTimestamp") and not metadata.get("finalizers") and not (
            rt.storage_key == NAMESPACES and self._has_content(metadata["name"])
        ):
            # As kube-apiserver: the DELETED event carries the last stored object at a new version, the answer
            # the object as the update left it, at its previous version.
            gone = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self._next_rv())}}
            self._drop(rt, gone, old)
            return result
        metadata["resourceVersion"] = str(self._next_rv())
        self._put(rt, result, "MODIFIED", old)
        return result

    # ---- create -----------------------------------------------------------------------------------

    def create(
        self, rtype: ResourceType | str, body: Mapping[str, Any], namespace: str | None = None, *,
        dry_run: bool = False, manager: str = DEFAULT_MANAGER, managed_fields: builtins.list[Obj] | None = None,
    ) -> Obj:
        """Create (POST): uid, timestamps, generation 1, a new resourceVersion, `generateName`; `manager` owns
        what it sent (an `Update` in managedFields), unless `managed_fields` (a server-side apply's) are given.

        A dry run answers what would be stored, without a resourceVersion, and stores nothing."""
        rt = self._type(rtype)
        obj, namespace = _requested(rt, body, namespace)
        metadata = obj["metadata"]
        # kube-apiserver's order: namespace admission (404/403), then validation (422), then existence (409).
        self._check_namespace(rt, str(metadata.get("name") or ""), namespace)
        name = metadata.get("name") or self._generated_name(rt, metadata.get("generateName"), namespace)
        sent = objects.initialize(rt, obj, str(name), namespace)
        causes = objects.name_causes(rt, str(name)) + normalized(rt, obj)
        if causes:
            raise errors.invalid(rt.group, rt.kind, str(name), causes)
        if self.find(rt, str(name), namespace) is not None:
            raise errors.already_exists(rt.plural, rt.group, str(name))
        if managed_fields is not None:
            _set_managed_fields(obj, managed_fields)
        else:
            owned = obj if sent is None else pruned_copy(rt, sent)
            kubectl.record_update(rt, None, owned, manager, "", metadata["creationTimestamp"])
            _set_managed_fields(obj, owned["metadata"].get("managedFields"))
        if dry_run:
            return obj
        metadata["resourceVersion"] = str(self._next_rv())
        self._put(rt, obj, "ADDED", None)
        return obj

    def _check_namespace(self, rt: ResourceType, name: str, namespace: str | None) -> None:
        """A namespaced create needs its namespace to exist (404) and not be terminating (403)."""
        if not rt.namespaced:
            return
        if not namespace:
            raise errors.bad_request("the server could not find the requested resource (namespace required)")
        ns = self.find("namespaces", namespace)
        if ns is None:
            raise errors.not_found("namespaces", "", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            raise errors.namespace_terminating(rt.plural, rt.group, name, namespace)

    def _generated_name(self, rt: ResourceType, prefix: Any, namespace: str | None) -> str:
        """A name from `generateName` that no object has (422 without a prefix: a create needs one or a name)."""
        if not prefix:
            raise errors.invalid(rt.group, rt.kind, "", [{
                "reason": "FieldValueRequired", "message": "Required value: name or generateName is required",
                "field": "metadata.name"}])
        bucket = self._objects.get(rt.storage_key, {})
        while True:
            name = objects.generated_name(str(prefix))
            if (namespace or "" if rt.namespaced else "", name) not in bucket:
                return name

    # ---- update, patch, apply ---------------------------------------------------------------------

    def update(
        self,
        rtype: ResourceType | str,
        name: str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        dry_run: bool = False,
        manager: str = DEFAULT_MANAGER,
    ) -> Obj:
        """Replace (PUT). `metadata.resourceVersion` must be the current one (else 409); a missing one is a 422
        unless the kind allows unconditional updates (namespaces, events, services)."""
        rt = self._type(rtype)
        old = self.get(rt, name, namespace)
        if not isinstance(body, Mapping):
            raise errors.bad_request("the body of the request must be a JSON object")
        body_name = (body.get("metadata") or {}).get("name")
        if body_name is not None and body_name != name:
            raise errors.bad_request(f"the name of the object ({body_name}) does not match the name on the URL "
                                     f"({name})")
        new = copy_json(dict(body))
        if _version_of(new) is None and not rt.unconditional_update:
            raise errors.invalid_resource(rt.plural, rt.group, name, [{
                "reason": "FieldValueInvalid", "message": "Invalid value: 0: must be specified for an update",
                "field": "metadata.resourceVersion"}])
        result = self._replacement(rt, old, new, subresource)
        kubectl.record_update(rt, old, result, manager, subresource or "", now_rfc3339)
        return self._commit(rt, old, result, dry_run)

    def patch(
        self,
        rtype: ResourceType | str,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        content_type: str = MERGE_PATCH,
        dry_run: bool = False,
        field_validation: kubectl.FieldValidation | None = None,
        manager: str = DEFAULT_MANAGER,
    ) -> Obj:
        """Patch: merge patch, JSON patch, or (built-in kinds) strategic merge patch. A
        `metadata.resourceVersion` in the result is a precondition. `field_validation` sees the unknown fields
        of the patch (a merge patch: only it can add any)."""
        rt = self._type(rtype)
        _check_patch_type(rt, content_type)
        old = self.get(rt, name, namespace)
        new = _patched(rt, old, patch, content_type)
        is_merge = content_type == MERGE_PATCH
        if field_validation is not None:
            field_validation.check(rt, patch if is_merge else new, patched=new)
        result = self._replacement(rt, old, new, subresource)
        kubectl.record_update(rt, old, result, manager, subresource or "", now_rfc3339, patch if is_merge else None)
        return self._commit(rt, old, result, dry_run)

    def apply(
        self,
        rtype: ResourceType | str,
        name: str,
        config: Any,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        manager: str,
        force: bool = False,
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """Server-side apply (create or update): the object, and whether it was created. 409 on conflicts with
        other managers unless `force`."""
        return kubectl.apply(self, self._type(rtype), name, config, namespace=namespace, subresource=subresource,
                             manager=manager, force=force, dry_run=dry_run)

    def write_applied(self, rt: ResourceType, old: Obj, new: Obj, subresource: str | None, *,
                      dry_run: bool = False) -> Obj:
        """Store what a server-side apply made of `old` (its managedFields set by the apply)."""
        result = self._replacement(rt, old, new, subresource)
        _set_managed_fields(result, (new.get("metadata") or {}).get("managedFields"))
        return self._commit(rt, old, result, dry_run)

    def _replacement(self, rt: ResourceType, old: Obj, new: Obj, subresource: str | None) -> Obj:
        """What an update of `old` to `new` stores, its schema applied; 409 when `new` names another version."""
        wanted = _version_of(new)
        if wanted is not None and wanted != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.plural, rt.group, old["metadata"]["name"])
        result = objects.replacement(rt, old, new, subresource)
        causes = normalized(rt, result, "status" if subresource == "status" else None)
        if causes:
            raise errors.invalid(rt.group, rt.kind, old["metadata"]["name"], causes)
        return result

    # ---- delete -----------------------------------------------------------------------------------

    def delete(
        self,
        rtype: ResourceType | str,
        name: str,
        namespace: str | None = None,
        preconditions: Mapping[str, Any] | None = None,
        *,
        dry_run: bool = False,
    ) -> Obj:
        """Delete: with finalizers only mark `deletionTimestamp`; without, remove (DELETED event)."""
        return self.delete_outcome(rtype, name, namespace, preconditions, dry_run=dry_run)[0]

    def delete_outcome(
        self,
        rtype: ResourceType | str,
        name: str,
        namespace: str | None = None,
        preconditions: Mapping[str, Any] | None = None,
        *,
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """`delete`, also saying whether the object is gone (True) or only marked for deletion (False)."""
        rt = self._type(rtype)
        old = self.get(rt, name, namespace)
        _check_preconditions(rt, old, preconditions or {})
        if old["metadata"].get("deletionTimestamp"):
            return old, False
        is_namespace = rt.storage_key == NAMESPACES
        if old["metadata"].get("finalizers") or is_namespace:
            obj = objects.marked_for_deletion(rt, old)
            if dry_run:
                return obj, False
            obj["metadata"]["resourceVersion"] = str(self._next_rv())
            self._put(rt, obj, "MODIFIED", old)
            if is_namespace:  # answered as Terminating even when it went at once (kube's controller is slower)
                self._empty_namespace(name)
                return self.find(rt, name) or obj, False
            return obj, False
        if dry_run:
            return old, True
        obj = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self._next_rv())}}
        self._drop(rt, obj, old)
        return obj, True

    # ---- namespaces -------------------------------------------------------------------------------

    def _empty_namespace(self, namespace: str) -> None:
        for key, bucket in list(self._objects.items()):
            for (ns, name), _ in list(bucket.items()):
                if ns == namespace:
                    rt = next((t for t in self.registry if t.storage_key == key), None)
                    if rt is not None and rt.namespaced:
                        self.delete(rt, name, namespace)
        self._finish_namespace(namespace)

    def _finish_namespace(self, namespace: str) -> None:
        ns = self.find("namespaces", namespace)
        if ns is None or not ns["metadata"].get("deletionTimestamp") or ns["metadata"].get("finalizers"):
            return
        if self._has_content(namespace):
            return
        rt = self.registry.resolve("namespaces")
        obj = {**ns, "metadata": {**ns["metadata"], "resourceVersion": str(self._next_rv())}}
        self._drop(rt, obj, ns)

    def _has_content(self, namespace: str) -> bool:
        return any(key_ns == namespace for bucket in self._objects.values() for key_ns, _ in bucket)

    def ensure_namespace(self, name: str) -> Obj:
        """Create a namespace unless it exists (for bootstrapping and tests)."""
        existing = self.find("namespaces", name)
        return existing if existing is not None else self.create("namespaces", {"metadata": {"name": name}},
                                                                 manager="kube-apiserver")


def _selected(
    rt: ResourceType, bucket: Mapping[tuple[str, str], Obj], namespace: str | None, matcher: Matcher | None
) -> list[Obj]:
    """A bucket's objects in (namespace, name) order, of one namespace (None: all) and matching `matcher`."""
    return [
        obj for (ns, _), obj in sorted(bucket.items(), key=lambda item: item[0])
        if not (rt.namespaced and namespace is not None and ns != namespace) and (matcher is None or matcher(obj))
    ]


def _requested(rt: ResourceType, body: Any, namespace: str | None) -> tuple[Obj, str | None]:
    """A copy of a create's body (with a `metadata`), and the namespace it goes to (the request's and the
    body's must agree)."""
    if not isinstance(body, Mapping):
        raise errors.bad_request("the body of the request must be a JSON object")
    obj: Obj = copy_json(dict(body))
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = obj["metadata"] = {}
    if not rt.namespaced:
        return obj, namespace
    body_ns = metadata.get("namespace")
    if namespace is not None and body_ns and body_ns != namespace:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request")
    return obj, namespace or body_ns


def _version_of(obj: Mapping[str, Any]) -> str | None:
    """The `metadata.resourceVersion` a write names (its precondition), if any."""
    metadata = obj.get("metadata")
    wanted = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
    return None if wanted in (None, "") else str(wanted)


def _check_patch_type(rt: ResourceType, content_type: str) -> None:
    """415 for a patch type the kind does not take (strategic merge: only the built-in kinds), worded as kube."""
    if content_type == STRATEGIC_PATCH and rt.group not in ("", "coordination.k8s.io"):
        raise ApiError(415, "the body of the request was in an unknown format - accepted media types "
                            f"include: {JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}", "UnsupportedMediaType")
    if content_type not in (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH):
        raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                            f"include: {JSON_PATCH}, {MERGE_PATCH}, {STRATEGIC_PATCH}", "UnsupportedMediaType")


def _patched(rt: ResourceType, old: Obj, patch: Any, content_type: str) -> Obj:
    """`old` with `patch` applied (422, as kube-apiserver says no more, for a patch that does not apply)."""
    try:
        if content_type == JSON_PATCH:
            new = json_patch(old, patch)
        elif not isinstance(patch, dict):
            raise PatchError("a merge patch must be a JSON object")
        elif content_type == MERGE_PATCH:
            new = merge_patch(old, patch)
        else:
            new = kubectl.strategic_merge(old, patch, kubectl.builtin_schema(rt.group, rt.version, rt.kind))
    except PatchError as exc:
        raise ApiError(422, _REJECTED_PATCH, "Invalid", {}) from exc
    if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
        raise ApiError(422, _REJECTED_PATCH, "Invalid", {})
    return new


def _check_preconditions(rt: ResourceType, old: Obj, preconditions: Mapping[str, Any]) -> None:
    """A delete's `preconditions` (uid, resourceVersion) must hold (409)."""
    old_meta = old["metadata"]
    for key, label, why in (("uid", "UID", "replaced"), ("resourceVersion", "ResourceVersion", "modified")):
        wanted = preconditions.get(key)
        if wanted and str(wanted) != old_meta.get(key):
            raise errors.conflict(rt.kind, rt.group, old_meta["name"], (
                f"the {label} in the precondition ({wanted}) does not match the {label} in record "
                f"({old_meta.get(key)}). The object might have been {why}"), details_kind=rt.kind)


def _set_managed_fields(obj: Obj, managed_fields: Any) -> None:
    """`obj`'s managedFields are these (none when empty)."""
    if managed_fields:
        obj["metadata"]["managedFields"] = managed_fields
    else:
        obj["metadata"].pop("managedFields", None)
