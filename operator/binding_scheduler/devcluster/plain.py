"""What devcluster does without its kubectl package, which is optional (the `kubectl` extra of
binding-scheduler-devcluster installs it): the core's hand-offs, by the same names, answered as the scheduler,
Kopf and client-go need and no further.

* Every answer is plain JSON: `Accept` is not negotiated (no Tables, PartialObjectMetadata or YAML).
* A request body in another media type than JSON or YAML is a 415 (no protobuf).
* Writes record no managedFields and keep none; a server-side apply and a strategic merge patch are 415s.
* `fieldValidation` is not applied: no warnings, no refusals under `Strict`.
* Built-in kinds are pruned of their unknown `metadata` fields only (kube-apiserver's schemas of them are the
  package's).
* `/openapi/v2` and `/openapi/v3` answer 404, and so do the review kinds of `kubectl auth`.

`handoff.py` picks this module when the package is not installed; a test holds its names and signatures to the
package's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .errors import ApiError
from .patch import JSON_PATCH, MERGE_PATCH
from .resources import Registry, ResourceType

if TYPE_CHECKING:
    from .store import Obj, Store

__all__ = [
    "FieldValidation",
    "OpenAPIEndpoint",
    "Representation",
    "WriteOptions",
    "answer_review",
    "apply",
    "builtin_schema",
    "decode_body",
    "negotiate",
    "record_update",
    "strategic_merge",
]

_BODY_TYPES = "application/json, application/yaml"
_PATCH_TYPES = f"{JSON_PATCH}, {MERGE_PATCH}"


def _unsupported(accepted: str) -> ApiError:
    return ApiError(415, f"the body of the request was in an unknown format - accepted media types include: "
                         f"{accepted}", "UnsupportedMediaType")


@dataclass(frozen=True)
class Representation:
    """JSON, the object as it is."""

    encoding: str = "json"
    form: str = "object"
    version: str = "v1"

    def of_object(self, rt: ResourceType, obj: dict[str, Any], include_object: str) -> dict[str, Any]:
        return obj

    def of_list(self, rt: ResourceType, listing: dict[str, Any], include_object: str) -> dict[str, Any]:
        return listing

    def watch_encoder(self, rt: ResourceType, include_object: str) -> Callable[[dict[str, Any]], bytes] | None:
        return None


def negotiate(accept: str | None, *, watch: bool = False, builtin: bool = False) -> Representation:
    return Representation()


def decode_body(content_type: str, raw: bytes, rt: ResourceType, method: str) -> Any:
    raise _unsupported(_PATCH_TYPES if method == "PATCH" else _BODY_TYPES)


def answer_review(rtype: ResourceType, body: Any) -> dict[str, Any]:
    raise ApiError(404, "the server could not find the requested resource", "NotFound", {})


@dataclass
class FieldValidation:
    """Applies nothing, warns of nothing."""

    mode: str = "Ignore"
    warnings: list[str] = field(default_factory=list)

    def check(self, rt: ResourceType, obj: Mapping[str, Any], *, patched: Mapping[str, Any] | None = None) -> None:
        return None

    def headers(self) -> list[tuple[str, str]]:
        return []


@dataclass
class WriteOptions:
    """The field manager a write names (recorded nowhere), no `force`, no field validation."""

    manager: str
    force: bool
    validation: FieldValidation

    @classmethod
    def read(cls, request: web.BaseRequest, rt: ResourceType, body: Any, raw: bytes) -> WriteOptions:
        return cls(request.query.get("fieldManager", ""), False, FieldValidation())

    def headers(self) -> list[tuple[str, str]]:
        return []


class OpenAPIEndpoint:
    """No OpenAPI documents: the Go mux's 404 for a path nothing serves."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def answer(self, request: web.BaseRequest) -> web.Response:
        return web.Response(status=404, text="404 page not found\n", content_type="text/plain",
                            headers={"X-Content-Type-Options": "nosniff"})


def record_update(
    rt: ResourceType, live: Mapping[str, Any] | None, new: dict[str, Any], manager: str, subresource: str,
    now: str | Callable[[], str], touched: Any = None,
) -> None:
    metadata = new.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)


def apply(
    store: Store, rt: ResourceType, name: str, config: Any, *, namespace: str | None, subresource: str | None,
    manager: str, force: bool, dry_run: bool,
) -> tuple[Obj, bool]:
    raise _unsupported(_PATCH_TYPES)


def strategic_merge(target: Any, patch: Any, schema: Mapping[str, Any] | None) -> Any:
    raise _unsupported(_PATCH_TYPES)


def builtin_schema(group: str, version: str, kind: str) -> dict[str, Any] | None:
    return None
