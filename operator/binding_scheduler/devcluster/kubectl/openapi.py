"""OpenAPI documents: `/openapi/v3` (the index), `/openapi/v3/<group-version>` and `/openapi/v2` (JSON).

Custom resources get the documents kube-apiserver's CRD builder makes (`openapi_crd.py`); the built-in kinds
devcluster serves have kube-apiserver v1.35.4's own documents (`builtin_schemas.py`). kubectl reads v3: `kubectl
explain`, and `kubectl apply`/`create`, which find `fieldValidation` among the PATCH parameters and so let the
server validate (devcluster then does, see `fieldvalidation.py`).

`/openapi/v2` is answered in JSON only. kubectl asks it in protobuf
(`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`); a server that cannot produce an asked media type
answers 406 with an empty body (as kube-apiserver does for one it does not know), and kubectl carries on without
v2 everywhere but `kubectl explain --output plaintext-openapiv2`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from ..resources import Registry, ResourceType
from .builtin_schemas import builtins
from .openapi_crd import crd_document, kind_schema, list_schema, model_name
from .openapi_v2 import v2_operation, v2_parameter, v2_schema

V2_ACCEPT = ("application/json", "*/*", "application/*")


def v2_document(v3_documents: Iterable[Mapping[str, Any]], crd_types: Iterable[ResourceType]) -> dict[str, Any]:
    """One v2 document from the group/version documents (custom resources' definitions per
    `ToStructuralOpenAPIV2`)."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for doc in v3_documents:
        for path, item in doc.get("paths", {}).items():
            paths[path] = {method: (v2_operation(op) if method != "parameters" else
                                    [v2_parameter(p) for p in op]) for method, op in item.items()}
        for name, schema in doc.get("components", {}).get("schemas", {}).items():
            definitions[name] = v2_schema(schema)
    for rt in crd_types:
        definitions[model_name(rt.group, rt.version, rt.kind)] = kind_schema(rt, v2=True)
        definitions[model_name(rt.group, rt.version, rt.list_kind)] = list_schema(rt, v2=True)
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "1.35"},
            "paths": dict(sorted(paths.items())), "definitions": dict(sorted(definitions.items())),
            "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                    "name": "authorization", "in": "header"}},
            "security": [{"BearerToken": []}]}


def digest(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


class OpenAPI:
    """The documents of what a registry serves, built when asked and kept until the served types change."""

    def __init__(self, types: Iterable[ResourceType]) -> None:
        self._types = list(types)
        self._cache: dict[str, bytes] = {}

    def _crd_groups(self) -> dict[str, list[ResourceType]]:
        groups: dict[str, list[ResourceType]] = {}
        for rt in self._types:
            if rt.custom:
                groups.setdefault(f"apis/{rt.group}/{rt.version}", []).append(rt)
        return groups

    def keys(self) -> list[str]:
        return sorted({*builtins()["v3"], *self._crd_groups()})

    def v3(self, key: str) -> bytes | None:
        """The document of `key` (`api/v1`, `apis/work.karmada.io/v1alpha2`...), or None."""
        if key not in self._cache:
            crd_types = self._crd_groups().get(key)
            if crd_types is not None:
                doc = crd_document(crd_types)
            elif key in builtins()["v3"]:
                doc = builtins()["v3"][key]
            else:
                return None
            self._cache[key] = json.dumps(doc, separators=(",", ":")).encode()
        return self._cache[key]

    def index(self) -> dict[str, Any]:
        return {"paths": {key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest(self.v3(key) or b'')}"}
                          for key in self.keys()}}

    def v2(self) -> bytes:
        if "v2" not in self._cache:
            documents = [json.loads(self.v3(key) or b"{}") for key in self.keys()]
            document = v2_document(documents, [rt for rt in self._types if rt.custom])
            self._cache["v2"] = json.dumps(document, separators=(",", ":")).encode()
        return self._cache["v2"]


class OpenAPIEndpoint:
    """`/openapi/v2` and `/openapi/v3...` of a registry, the documents rebuilt when the served types change."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._docs: OpenAPI | None = None
        self._generation = -1

    def _documents(self) -> OpenAPI:
        if self._docs is None or self._generation != self.registry.generation:
            self._docs = OpenAPI(self.registry)
            self._generation = self.registry.generation
        return self._docs

    def answer(self, request: web.BaseRequest) -> web.Response:
        """`/openapi/v2` (JSON; 406 with no body for any other media type, protobuf included) and `/openapi/v3`
        (the index, then one document per group/version, immutable when asked by its hash)."""
        docs = self._documents()
        path = request.path.rstrip("/")
        if path == "/openapi/v2":
            accept = request.headers.get("Accept", "")
            if accept and not any(media.split(";")[0].strip() in V2_ACCEPT for media in accept.split(",")):
                return web.Response(status=406)
            return web.Response(body=docs.v2(), content_type="application/json")
        if path == "/openapi/v3":
            return web.Response(body=json.dumps(docs.index(), separators=(",", ":")).encode(),
                                content_type="application/json")
        return self._document(docs, path.removeprefix("/openapi/v3/"), request.query.get("hash"))

    @staticmethod
    def _document(docs: OpenAPI, key: str, wanted: str | None) -> web.Response:
        body = docs.v3(key)
        if body is None:
            return web.Response(status=404)
        etag = digest(body)
        headers = {"Etag": f'"{etag}"'}
        if wanted:
            if wanted != etag:
                return web.Response(status=301, headers={"Location": f"/openapi/v3/{key}?hash={etag}"})
            expires = datetime.now(UTC) + timedelta(days=365)
            headers.update({"Vary": "Accept", "Cache-Control": "public, immutable",
                            "Expires": expires.strftime("%a, %d %b %Y %H:%M:%S UTC")})
        else:
            headers["Cache-Control"] = "no-cache, private"
        return web.Response(body=body, content_type="application/json", headers=headers)
