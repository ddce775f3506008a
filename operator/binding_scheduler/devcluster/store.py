"""The object store: one global resourceVersion, object semantics, and the event history for watches.

Every method runs synchronously inside the event loop, so each write is atomic. Stored objects are never
mutated in place (writes replace them), so the dicts handed out are consistent snapshots: treat them as
read-only and `copy_json()` them before changing anything.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import random
import re
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import errors, kubectl
from .errors import ApiError
from .objects import now_rfc3339
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
from .schema import prune_unknown
from .selectors import Matcher

Obj = dict[str, Any]
StorageKey = tuple[str, str]

DEFAULT_MANAGER = "devcluster"  # who writes through the in-process Store API

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the same alphabet kube-apiserver uses
_IMMUTABLE_META = ("name", "namespace", "uid", "creationTimestamp", "generateName")
_NAMESPACES = ("", "namespaces")
_CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
_NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Event:
    """One write as watchers see it. `old` is the previous object of a MODIFIED/DELETED event."""

    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    key: StorageKey
    namespace: str | None
    obj: Obj
    old: Obj | None = None


@dataclass(eq=False)
class Subscriber:
    """A live watch: receives every new event of one storage key (and namespace, if given)."""

    key: StorageKey
    namespace: str | None
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)

    def poke(self) -> None:
        """Wake the watch up without an event (to re-check faults or the server stopping)."""
        self.queue.put_nowait(None)


def _spec_part(obj: Mapping[str, Any], has_status: bool) -> dict[str, Any]:
    skip = ("metadata", "status") if has_status else ("metadata",)
    return {k: v for k, v in obj.items() if k not in skip}


class Store:
    """All objects of all served types, plus the retained event history (`history` events)."""

    def __init__(self, registry: Registry, history: int = 1000) -> None:
        self.registry = registry
        self._objects: dict[StorageKey, dict[tuple[str, str], Obj]] = {}
        self._rv = 0
        self._history: deque[Event] = deque(maxlen=max(history, 0))
        self._evicted_rv = 0
        # The version at which a custom resource type began to be served: a watch from an older version is
        # 410 Expired, as kube-apiserver's watch cache of the type starts there.
        self._origins: dict[StorageKey, int] = {}
        self._subscribers: set[Subscriber] = set()

    # ---- introspection ----------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The latest resourceVersion handed out (0 before the first write)."""
        return self._rv

    @property
    def oldest_watchable_rv(self) -> int:
        """A watch from a version older than this gets `410 Gone` (its events are no longer retained)."""
        return self._evicted_rv

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
        bucket = self._objects.get(rt.storage_key, {})
        result = []
        for (ns, _), obj in sorted(bucket.items(), key=lambda item: item[0]):
            if rt.namespaced and namespace is not None and ns != namespace:
                continue
            if matcher is None or matcher(obj):
                result.append(obj)
        return result

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
        return [
            obj for (ns, _), obj in sorted(bucket.items(), key=lambda item: item[0])
            if not (rt.namespaced and namespace is not None and ns != namespace) and (matcher is None or matcher(obj))
        ]

    def history_since(self, rv: int, key: StorageKey) -> builtins.list[Event]:
        """Retained events of one storage key newer than `rv` (410 `ApiError` if some were dropped, or if the
        type was not served yet at `rv`)."""
        oldest = max(self._evicted_rv, self._origins.get(key, 0))
        if rv < oldest:
            raise errors.expired(f"too old resource version: {rv} ({oldest + 1})")
        return [event for event in self._history if event.rv > rv and event.key == key]

    # ---- subscriptions ----------------------------------------------------------------------------

    def subscribe(self, rtype: ResourceType, namespace: str | None) -> Subscriber:
        subscriber = Subscriber(rtype.storage_key, namespace if rtype.namespaced else None)
        self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)

    def poke_all(self) -> None:
        for subscriber in list(self._subscribers):
            subscriber.poke()

    # ---- writes -----------------------------------------------------------------------------------

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _emit(self, event: Event) -> None:
        history = self._history
        if history.maxlen == 0:
            self._evicted_rv = event.rv
        else:
            if len(history) == history.maxlen:
                self._evicted_rv = history[0].rv
            history.append(event)
        for subscriber in self._subscribers:
            if subscriber.key == event.key and subscriber.namespace in (None, event.namespace):
                subscriber.queue.put_nowait(event)

    def _put(self, rt: ResourceType, obj: Obj, event_type: str, old: Obj | None) -> None:
        metadata = obj["metadata"]
        namespace = metadata.get("namespace") if rt.namespaced else None
        self._objects.setdefault(rt.storage_key, {})[(namespace or "", metadata["name"])] = obj
        self._emit(Event(int(metadata["resourceVersion"]), event_type, rt.storage_key, namespace, obj, old))
        if rt.storage_key == _CRDS:
            served = types_from_crd(obj)
            for served_type in served:
                if event_type == "ADDED" or served_type.storage_key not in self._origins:
                    self._origins[served_type.storage_key] = int(metadata["resourceVersion"])
            self.registry.add_all(served)

    def _drop(self, rt: ResourceType, obj: Obj, old: Obj) -> None:
        metadata = obj["metadata"]
        namespace = metadata.get("namespace") if rt.namespaced else None
        self._objects.get(rt.storage_key, {}).pop((namespace or "", metadata["name"]), None)
        self._emit(Event(int(metadata["resourceVersion"]), "DELETED", rt.storage_key, namespace, obj, old))
        if rt.storage_key == _CRDS:
            self.registry.remove_crd(obj)
        if namespace:
            self._finish_namespace(namespace)

    def _check_namespace(self, rt: ResourceType, name: str, namespace: str | None) -> str | None:
        if not rt.namespaced:
            return None
        if not namespace:
            raise errors.bad_request("the server could not find the requested resource (namespace required)")
        ns = self.find("namespaces", namespace)
        if ns is None:
            raise errors.not_found("namespaces", "", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            raise errors.namespace_terminating(rt.plural, rt.group, name, namespace)
        return namespace

    def create(
        self, rtype: ResourceType | str, body: Mapping[str, Any], namespace: str | None = None, *,
        dry_run: bool = False, manager: str = DEFAULT_MANAGER, managed_fields: builtins.list[Obj] | None = None,
    ) -> Obj:
        """Create (POST): uid, timestamps, generation 1, a new resourceVersion, `generateName`; `manager` owns
        what it sent (an `Update` in managedFields), unless `managed_fields` (a server-side apply's) are given.

        A dry run answers what would be stored, without a resourceVersion, and stores nothing."""
        rt = self._type(rtype)
        if not isinstance(body, Mapping):
            raise errors.bad_request("the body of the request must be a JSON object")
        obj: Obj = copy_json(dict(body))
        metadata = obj.get("metadata")
        if not isinstance(metadata, dict):
            metadata = obj["metadata"] = {}
        body_ns = metadata.get("namespace")
        if rt.namespaced:
            if namespace is not None and body_ns and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request")
            namespace = namespace or body_ns
        name = metadata.get("name")
        # kube-apiserver's order: namespace admission (404/403), then validation (422), then existence (409).
        self._check_namespace(rt, str(name or ""), namespace)
        if not name:
            prefix = metadata.get("generateName")
            if not prefix:
                raise errors.invalid(rt.group, rt.kind, "", [{
                    "reason": "FieldValueRequired",
                    "message": "Required value: name or generateName is required",
                    "field": "metadata.name"}])
            bucket = self._objects.get(rt.storage_key, {})
            while True:
                name = prefix + "".join(random.choices(_GENERATE_ALPHABET, k=5))
                if (namespace or "" if rt.namespaced else "", name) not in bucket:
                    break
        name = str(name)
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        for transient in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
            metadata.pop(transient, None)
        metadata["name"] = name
        if rt.namespaced:
            metadata["namespace"] = namespace
        else:
            metadata.pop("namespace", None)
        metadata["uid"] = str(uuid.uuid4())
        metadata["creationTimestamp"] = now_rfc3339()
        if rt.generation:
            metadata["generation"] = 1
        else:
            metadata.pop("generation", None)
        if rt.has_status:
            obj.pop("status", None)
        sent = None
        if rt.storage_key == _NAMESPACES:
            # The name label is a default (its creator owns it); finalizers and phase are the strategy's (nobody's)
            metadata["labels"] = {**(metadata.get("labels") or {}), _NAMESPACE_NAME_LABEL: name}
            sent = copy_json(obj)
            obj["spec"] = {**(obj.get("spec") or {}), "finalizers": ["kubernetes"]}
            obj["status"] = {"phase": "Active"}
        causes = _name_causes(rt, name)
        if rt.schema is not None:
            rt.schema.normalize(obj)
            causes += rt.schema.validate(obj)
        else:
            _prune_builtin(rt, obj)
        if causes:
            raise errors.invalid(rt.group, rt.kind, name, causes)
        if self.find(rt, name, namespace) is not None:
            raise errors.already_exists(rt.plural, rt.group, name)
        if managed_fields is not None:
            metadata["managedFields"] = managed_fields
            if not managed_fields:
                del metadata["managedFields"]
        else:
            owned = obj if sent is None else _pruned_copy(rt, sent)
            kubectl.record_update(rt, None, owned, manager, "", metadata["creationTimestamp"])
            if owned.get("metadata", {}).get("managedFields"):
                metadata["managedFields"] = owned["metadata"]["managedFields"]
            else:
                metadata.pop("managedFields", None)
        if dry_run:
            return obj
        metadata["resourceVersion"] = str(self._next_rv())
        self._put(rt, obj, "ADDED", None)
        return obj

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
        return self._write(rt, old, copy_json(dict(body)), subresource, dry_run=dry_run, replace=True,
                           manager=manager)

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
        """Patch: merge patch or JSON patch. A `metadata.resourceVersion` in the result is a precondition.
        `field_validation` sees the unknown fields of the patch (a merge patch: only it can add any)."""
        rt = self._type(rtype)
        if content_type == STRATEGIC_PATCH and rt.group not in ("", "coordination.k8s.io"):
            raise ApiError(415, "the body of the request was in an unknown format - accepted media types "
                                f"include: {JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}", "UnsupportedMediaType")
        if content_type not in (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH):
            raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                                f"include: {JSON_PATCH}, {MERGE_PATCH}, {STRATEGIC_PATCH}",
                           "UnsupportedMediaType")
        old = self.get(rt, name, namespace)
        try:
            if content_type == JSON_PATCH:
                new = json_patch(old, patch)
            else:
                if not isinstance(patch, dict):
                    raise PatchError("a merge patch must be a JSON object")
                new = (merge_patch(old, patch) if content_type == MERGE_PATCH else
                       kubectl.strategic_merge(old, patch, kubectl.builtin_schema(rt.group, rt.version, rt.kind)))
        except PatchError as exc:  # kube-apiserver says no more than this
            raise errors.ApiError(422, "the server rejected our request due to an error in our request",
                                  "Invalid", {}) from exc
        if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
            raise errors.ApiError(422, "the server rejected our request due to an error in our request",
                                  "Invalid", {})
        if field_validation is not None:
            field_validation.check(rt, patch if content_type == MERGE_PATCH else new, patched=new)
        return self._write(rt, old, new, subresource, dry_run=dry_run, manager=manager,
                           touched=patch if content_type == MERGE_PATCH else None)

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
        return self._write(rt, old, new, subresource, dry_run=dry_run, applied=True)

    def _write(
        self, rt: ResourceType, old: Obj, new: Obj, subresource: str | None, *, dry_run: bool = False,
        replace: bool = False, manager: str = DEFAULT_MANAGER, applied: bool = False, touched: Any = None,
    ) -> Obj:
        old_meta = old["metadata"]
        new_meta = new.get("metadata")
        if not isinstance(new_meta, dict):
            new_meta = {}
        wanted_rv = new_meta.get("resourceVersion")
        if replace and wanted_rv in (None, "") and not rt.unconditional_update:
            raise errors.invalid_resource(rt.plural, rt.group, old_meta["name"], [{
                "reason": "FieldValueInvalid", "message": "Invalid value: 0: must be specified for an update",
                "field": "metadata.resourceVersion"}])
        if wanted_rv not in (None, "") and str(wanted_rv) != old_meta["resourceVersion"]:
            raise errors.conflict(rt.plural, rt.group, old_meta["name"])
        if subresource == "status":
            result = {k: v for k, v in old.items() if k != "status"}
            if "status" in new:
                result["status"] = new["status"]
            metadata = dict(old_meta)
        elif subresource is not None:
            raise errors.not_found(f"{rt.plural}/{subresource}", rt.group, old_meta["name"])
        else:
            result = {k: v for k, v in new.items() if k != "status"}
            if rt.has_status:
                if "status" in old:
                    result["status"] = old["status"]
            elif "status" in new:
                result["status"] = new["status"]
            metadata = dict(new_meta)
            for key in (*_IMMUTABLE_META, "generation", "deletionTimestamp", "deletionGracePeriodSeconds"):
                if key in old_meta:
                    metadata[key] = old_meta[key]
                else:
                    metadata.pop(key, None)
            if old_meta.get("deletionTimestamp"):
                added = [f for f in metadata.get("finalizers") or () if f not in (old_meta.get("finalizers") or ())]
                if added:
                    found = ", ".join(json.dumps(f) for f in added)
                    raise errors.invalid(rt.group, rt.kind, old_meta["name"], [{
                        "reason": "FieldValueForbidden",
                        "message": "Forbidden: no new finalizers can be added if the object is being deleted, "
                                   f"found new finalizers []string{{{found}}}",
                        "field": "metadata.finalizers"}])
            if not metadata.get("finalizers"):
                metadata.pop("finalizers", None)
            if rt.storage_key == _NAMESPACES:
                result["spec"] = {**(result.get("spec") or {}), "finalizers": (old.get("spec") or {}).get(
                    "finalizers", ["kubernetes"])}
                metadata["labels"] = {**(metadata.get("labels") or {}), _NAMESPACE_NAME_LABEL: old_meta["name"]}
        result["apiVersion"], result["kind"] = old["apiVersion"], old["kind"]
        metadata["resourceVersion"] = old_meta["resourceVersion"]
        result["metadata"] = metadata
        if rt.schema is not None:
            if subresource == "status":
                rt.schema.normalize_part(result, "status")
                causes = rt.schema.validate(result, only="status")
            else:
                rt.schema.normalize(result)
                causes = rt.schema.validate(result)
            if causes:
                raise errors.invalid(rt.group, rt.kind, old_meta["name"], causes)
        else:
            _prune_builtin(rt, result)
        if applied:  # a server-side apply set them already
            metadata["managedFields"] = new_meta.get("managedFields") or []
            if not metadata["managedFields"]:
                del metadata["managedFields"]
        else:
            if subresource is None and "managedFields" in new_meta:
                metadata["managedFields"] = new_meta["managedFields"]
            elif "managedFields" in old_meta:
                metadata["managedFields"] = old_meta["managedFields"]
            kubectl.record_update(rt, old, result, manager, subresource or "", now_rfc3339, touched)
        if result == old:
            return old  # a no-op write stores nothing: no new resourceVersion, no event (as kube-apiserver)
        if rt.generation and _spec_part(result, rt.has_status) != _spec_part(old, rt.has_status):
            metadata["generation"] = int(old_meta.get("generation") or 0) + 1
        if dry_run:
            return result
        if metadata.get("deletionTimestamp") and not metadata.get("finalizers") and not (
            rt.storage_key == _NAMESPACES and self._has_content(metadata["name"])
        ):
            # The last finalizer went: the update is not stored, the object goes instead. As kube-apiserver:
            # the DELETED event carries the last stored object at a new version, the answer the object as the
            # update left it, at its previous version.
            gone = {**old, "metadata": {**old_meta, "resourceVersion": str(self._next_rv())}}
            self._drop(rt, gone, old)
            return result
        metadata["resourceVersion"] = str(self._next_rv())
        self._put(rt, result, "MODIFIED", old)
        return result

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
        old_meta = old["metadata"]
        for key, label, why in (("uid", "UID", "replaced"), ("resourceVersion", "ResourceVersion", "modified")):
            wanted = (preconditions or {}).get(key)
            if wanted and str(wanted) != old_meta.get(key):
                raise errors.conflict(rt.kind, rt.group, name, (
                    f"the {label} in the precondition ({wanted}) does not match the {label} in record "
                    f"({old_meta.get(key)}). The object might have been {why}"), details_kind=rt.kind)
        if old_meta.get("deletionTimestamp"):
            return old, False
        is_namespace = rt.storage_key == _NAMESPACES
        if old_meta.get("finalizers") or is_namespace:
            metadata = dict(old_meta)
            metadata["deletionTimestamp"] = now_rfc3339()
            if not is_namespace:
                metadata["deletionGracePeriodSeconds"] = 0
            if rt.generation and old_meta.get("generation"):
                metadata["generation"] = int(old_meta["generation"]) + 1
            obj = {**old, "metadata": metadata}
            if is_namespace:
                obj["status"] = {**(old.get("status") or {}), "phase": "Terminating"}
            if dry_run:
                return obj, False
            metadata["resourceVersion"] = str(self._next_rv())
            self._put(rt, obj, "MODIFIED", old)
            if is_namespace:  # answered as Terminating even when it went at once (kube's controller is slower)
                self._empty_namespace(name)
                return self.find(rt, name) or obj, False
            return obj, False
        if dry_run:
            return old, True
        metadata = {**old_meta, "resourceVersion": str(self._next_rv())}
        obj = {**old, "metadata": metadata}
        self._drop(rt, obj, old)
        return obj, True

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


def _prune_builtin(rt: ResourceType, obj: Obj) -> None:
    """A built-in kind keeps only the fields its kube-apiserver schema knows (as its Go type does)."""
    root = kubectl.builtin_schema(rt.group, rt.version, rt.kind)
    if root is not None:
        prune_unknown(obj, root)
    else:
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            prune_unknown({"metadata": metadata}, {})


def _pruned_copy(rt: ResourceType, obj: Obj) -> Obj:
    copied: Obj = copy_json(obj)
    _prune_builtin(rt, copied)
    return copied


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _name_causes(rt: ResourceType, name: str) -> list[dict[str, str]]:
    """kube-apiserver's checks of `metadata.name`: a DNS label for namespaces, a DNS subdomain otherwise."""
    if rt.storage_key == _NAMESPACES:
        pattern, limit = _DNS_LABEL, 63
        what = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
    else:
        pattern, limit = _DNS_SUBDOMAIN, 253
        what = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    causes = []
    shown = json.dumps(name)
    if len(name) > limit:
        causes.append({"reason": "FieldValueInvalid", "field": "metadata.name",
                       "message": f"Invalid value: {shown}: must be no more than {limit} characters"})
    if not pattern.fullmatch(name):
        causes.append({"reason": "FieldValueInvalid", "field": "metadata.name",
                       "message": f"Invalid value: {shown}: {what}"})
    return causes
