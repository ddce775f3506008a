"""Lists as kube-apiserver answers them: selected by labels and fields, in pages (`limit`, `continue`) that are
one snapshot (the later pages are served as the store was at the first page's version), and deletecollection."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from .errors import ApiError, bad_request, expired
from .resources import ResourceType
from .selectors import make_matcher
from .store import Store
from .watch import parse_rv

CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter."
)


def _continue_token(listed_at: int, after: tuple[str, str]) -> str:
    """What the next page needs, as kube-apiserver's token holds it: the list's version and the last key."""
    return base64.urlsafe_b64encode(_compact({"v": "meta.k8s.io/v1", "rv": listed_at, "start": list(after)})).decode()


def _read_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        listed_at, (namespace, name) = int(decoded["rv"]), decoded["start"]
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise bad_request(f"invalid continue token: continue key is not valid: {error}") from None
    if decoded.get("v") != "meta.k8s.io/v1":
        raise bad_request("invalid continue token: continue key is not valid: incorrect encoded start resourceVersion "
                          "(version meta.k8s.io/v1 required)")
    if listed_at <= 0:
        raise bad_request("invalid continue token: continue key is not valid: incorrect encoded start "
                          "resourceVersion (version meta.k8s.io/v1)")
    return listed_at, (str(namespace), str(name))


def _sort_key(obj: dict[str, Any]) -> tuple[str, str]:
    metadata = obj["metadata"]
    return (metadata.get("namespace") or "", metadata["name"])


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def list_page(store: Store, rt: ResourceType, namespace: str | None, query: Mapping[str, str]) -> dict[str, Any]:
    """The page of a list the query asks for (`labelSelector`, `fieldSelector`, `limit`, `continue`)."""
    parse_rv(query.get("resourceVersion"))
    matcher = make_matcher(query.get("labelSelector"), query.get("fieldSelector"), rt.fields)
    token = query.get("continue")
    if token:
        listed_at, after = _read_continue(token)
        try:
            items = store.list_at(rt, listed_at, namespace, matcher)
        except ApiError as error:
            if error.code != 410:
                raise
            raise expired(CONTINUE_EXPIRED) from None
        items = [obj for obj in items if _sort_key(obj) > after]
    else:
        listed_at = store.resource_version
        items = store.list(rt, namespace, matcher)
    metadata: dict[str, Any] = {"resourceVersion": str(listed_at)}
    limit = int(query.get("limit") or 0)
    if limit > 0 and len(items) > limit:
        metadata["continue"] = _continue_token(listed_at, _sort_key(items[limit - 1]))
        metadata["remainingItemCount"] = len(items) - limit
        items = items[:limit]
    elif rt.custom:
        metadata["continue"] = ""
    return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": metadata, "items": items}


def delete_collection(
    store: Store, rt: ResourceType, namespace: str | None, query: Mapping[str, str], dry_run: bool
) -> dict[str, Any]:
    """Delete every object the selectors select; the list of what was deleted (or marked for deletion)."""
    matcher = make_matcher(query.get("labelSelector"), query.get("fieldSelector"), rt.fields)
    deleted = [store.delete(rt, obj["metadata"]["name"], obj["metadata"].get("namespace"), dry_run=dry_run)
               for obj in store.list(rt, namespace, matcher)]
    return {"kind": rt.list_kind, "apiVersion": rt.api_version,
            "metadata": {"resourceVersion": str(store.resource_version)}, "items": deleted}
