"""What a write's query asks of the kubectl features: the field manager (managedFields), `force` (server-side
apply) and `fieldValidation`, each checked as kube-apiserver checks it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from ..errors import invalid_options
from ..patch import APPLY_PATCH
from ..resources import ResourceType
from .fieldvalidation import FieldValidation, duplicate_fields

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
OPTIONS_KINDS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions"}


def field_manager(request: web.BaseRequest) -> str:
    """The field manager of a write: `fieldManager`, else the User-Agent up to its first `/` (printable
    characters, at most 128), as kube-apiserver names it. An apply must name one; only an apply may `force`."""
    given = request.query.get("fieldManager")
    is_apply = request.method == "PATCH" and request.content_type == APPLY_PATCH
    if is_apply and not given:
        raise invalid_options("PatchOptions", [{"reason": "FieldValueRequired", "field": "fieldManager",
                                                "message": "Required value: is required for apply patch"}])
    if request.method == "PATCH" and not is_apply and "force" in request.query:
        raise invalid_options("PatchOptions", [{"reason": "FieldValueForbidden", "field": "force",
                                                "message": "Forbidden: may not be specified for non-apply patch"}])
    if given:
        return given
    agent = request.headers.get("User-Agent", "").split("/")[0]
    name = "".join(char for char in agent if char.isprintable())[:128]
    return name or "unknown"


@dataclass
class WriteOptions:
    """One create, update or patch's manager, `force` and field validation (whose warnings go in the answer's
    headers)."""

    manager: str
    force: bool
    validation: FieldValidation

    @classmethod
    def read(cls, request: web.BaseRequest, rt: ResourceType, body: Any, raw: bytes) -> WriteOptions:
        """The options of `request`; a create's or update's body is validated here (a patch's once patched)."""
        validation = FieldValidation.of(request.query.get("fieldValidation"), OPTIONS_KINDS[request.method],
                                        duplicate_fields(raw, body) if raw else [])
        if request.method in ("POST", "PUT") and isinstance(body, Mapping):
            validation.check(rt, body)
        return cls(field_manager(request), request.query.get("force", "") in _TRUE, validation)

    def headers(self) -> list[tuple[str, str]]:
        return self.validation.headers()
