"""kube-apiserver's rules for what a write makes of an object, where they need no store: the fields a create sets,
the names it takes, what an update keeps of the stored object, and when generation moves."""

from __future__ import annotations

import json
import random
import re
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from . import errors
from .patch import copy_json
from .resources import ResourceType

Obj = dict[str, Any]

NAMESPACES = ("", "namespaces")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the same alphabet kube-apiserver uses

_IMMUTABLE_META = ("name", "namespace", "uid", "creationTimestamp", "generateName")
_KEPT_META = (*_IMMUTABLE_META, "generation", "deletionTimestamp", "deletionGracePeriodSeconds")
_TRANSIENT_META = ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion")

_NOW: list[Any] = [0, ""]  # (second, its RFC 3339 text): formatting costs more than the rest of a small write


def now_rfc3339() -> str:
    second = int(time.time())
    if second != _NOW[0]:
        _NOW[0], _NOW[1] = second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(_NOW[1])


# ---- creates ------------------------------------------------------------------------------------------------------


def generated_name(prefix: str) -> str:
    """`generateName`'s name: the prefix and 5 random characters (the caller retries on a collision)."""
    return prefix + "".join(random.choices(GENERATE_ALPHABET, k=5))


def initialize(rt: ResourceType, obj: Obj, name: str, namespace: str | None) -> Obj | None:
    """Set what a create sets (kind, name, uid, creationTimestamp, generation 1; no status for a kind with a
    status subresource). For a namespace, also what its strategy adds: it returns the namespace as its creator
    sent it (the label included, which its creator owns; finalizers and phase are nobody's). None otherwise."""
    metadata = obj["metadata"]
    obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
    for transient in _TRANSIENT_META:
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
    if rt.storage_key != NAMESPACES:
        return None
    metadata["labels"] = {**(metadata.get("labels") or {}), NAMESPACE_NAME_LABEL: name}
    sent: Obj = copy_json(obj)
    obj["spec"] = {**(obj.get("spec") or {}), "finalizers": ["kubernetes"]}
    obj["status"] = {"phase": "Active"}
    return sent


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def name_causes(rt: ResourceType, name: str) -> list[dict[str, str]]:
    """kube-apiserver's checks of `metadata.name`: a DNS label for namespaces, a DNS subdomain otherwise."""
    if rt.storage_key == NAMESPACES:
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


# ---- updates ------------------------------------------------------------------------------------------------------


def replacement(rt: ResourceType, old: Obj, new: Obj, subresource: str | None) -> Obj:
    """What an update (PUT or patched object) of `old` to `new` stores, before its schema is applied: through
    `/status` only `status` changes; on the main resource everything but `status` (for a kind with a status
    subresource) and the identity metadata. The stored resourceVersion stays (the store moves it)."""
    if subresource == "status":
        result = _status_write(old, new)
    elif subresource is not None:
        raise errors.not_found(f"{rt.plural}/{subresource}", rt.group, old["metadata"]["name"])
    else:
        result = _main_write(rt, old, new)
    result["apiVersion"], result["kind"] = old["apiVersion"], old["kind"]
    result["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
    return result


def _status_write(old: Obj, new: Obj) -> Obj:
    result = {k: v for k, v in old.items() if k != "status"}
    if "status" in new:
        result["status"] = new["status"]
    result["metadata"] = dict(old["metadata"])
    return result


def _main_write(rt: ResourceType, old: Obj, new: Obj) -> Obj:
    """The main resource's update: `new` with the stored status (kinds with a status subresource) and identity;
    the managedFields it sent, else the stored ones."""
    old_meta = old["metadata"]
    result = {k: v for k, v in new.items() if k != "status"}
    if rt.has_status:
        if "status" in old:
            result["status"] = old["status"]
    elif "status" in new:
        result["status"] = new["status"]
    sent = new.get("metadata")
    metadata = dict(sent) if isinstance(sent, dict) else {}
    for key in _KEPT_META:
        if key in old_meta:
            metadata[key] = old_meta[key]
        else:
            metadata.pop(key, None)
    if "managedFields" not in metadata and "managedFields" in old_meta:
        metadata["managedFields"] = old_meta["managedFields"]
    if old_meta.get("deletionTimestamp"):
        _refuse_new_finalizers(rt, old_meta, metadata)
    if not metadata.get("finalizers"):
        metadata.pop("finalizers", None)
    if rt.storage_key == NAMESPACES:
        result["spec"] = {**(result.get("spec") or {}), "finalizers": (old.get("spec") or {}).get(
            "finalizers", ["kubernetes"])}
        metadata["labels"] = {**(metadata.get("labels") or {}), NAMESPACE_NAME_LABEL: old_meta["name"]}
    result["metadata"] = metadata
    return result


def _refuse_new_finalizers(rt: ResourceType, old_meta: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    """An object being deleted takes no new finalizer (422)."""
    added = [f for f in metadata.get("finalizers") or () if f not in (old_meta.get("finalizers") or ())]
    if added:
        found = ", ".join(json.dumps(f) for f in added)
        raise errors.invalid(rt.group, rt.kind, old_meta["name"], [{
            "reason": "FieldValueForbidden",
            "message": "Forbidden: no new finalizers can be added if the object is being deleted, "
                       f"found new finalizers []string{{{found}}}",
            "field": "metadata.finalizers"}])


def _spec_part(obj: Mapping[str, Any], has_status: bool) -> dict[str, Any]:
    skip = ("metadata", "status") if has_status else ("metadata",)
    return {k: v for k, v in obj.items() if k not in skip}


def bump_generation(rt: ResourceType, old: Obj, result: Obj) -> None:
    """+1 when anything outside `metadata` (and `status`, for a kind with a status subresource) changed."""
    if rt.generation and _spec_part(result, rt.has_status) != _spec_part(old, rt.has_status):
        result["metadata"]["generation"] = int(old["metadata"].get("generation") or 0) + 1


# ---- deletes ------------------------------------------------------------------------------------------------------


def marked_for_deletion(rt: ResourceType, old: Obj) -> Obj:
    """What the delete of an object with finalizers (or of a namespace) stores: `deletionTimestamp` set (with a
    grace period of 0; a namespace becomes `Terminating`), and generation +1."""
    is_namespace = rt.storage_key == NAMESPACES
    old_meta = old["metadata"]
    metadata = dict(old_meta)
    metadata["deletionTimestamp"] = now_rfc3339()
    if not is_namespace:
        metadata["deletionGracePeriodSeconds"] = 0
    if rt.generation and old_meta.get("generation"):
        metadata["generation"] = int(old_meta["generation"]) + 1
    obj = {**old, "metadata": metadata}
    if is_namespace:
        obj["status"] = {**(old.get("status") or {}), "phase": "Terminating"}
    return obj
