"""OpenAPI documents: `/openapi/v3` (the index), `/openapi/v3/<group-version>` and `/openapi/v2` (JSON).

Custom resources get the documents kube-apiserver's CRD builder makes (apiextensions-apiserver's
`controller/openapi/builder`): every route of a served version with kube's operation ids, descriptions, query
parameters, request bodies and responses, and the CRD's schema with `apiVersion`, `kind` and `metadata` set as
kube sets them. The built-in kinds devcluster serves have kube-apiserver v1.35.4's own documents, trimmed to what
devcluster serves (`openapi-builtins.yaml`, written by tests/devcluster/kubectl/openapi_snapshot.py). kubectl reads v3:
`kubectl explain`, and `kubectl apply`/`create`, which find `fieldValidation` among the PATCH parameters and so let
the server validate (devcluster then does, see `fieldvalidation.py`).

`/openapi/v2` is answered in JSON only. kubectl asks it in protobuf
(`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`); a server that cannot produce an asked media type
answers 406 with an empty body (as kube-apiserver does for one it does not know), and kubectl carries on without
v2 everywhere but `kubectl explain --output plaintext-openapiv2`.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiohttp import web

from ..resources import Registry, ResourceType

DATA_FILE = Path(__file__).resolve().parent / "openapi-builtins.yaml"
V3_PREFIX = "#/components/schemas/"
V2_PREFIX = "#/definitions/"
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
V2_ACCEPT = ("application/json", "*/*", "application/*")


@functools.cache
def builtins() -> dict[str, Any]:
    """The snapshot of kube-apiserver's documents (JSON after a comment header, so YAML reads it too)."""
    text = DATA_FILE.read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    data: dict[str, Any] = json.loads(body)
    return data


@functools.cache
def builtin_schema(group: str, version: str, kind: str) -> dict[str, Any] | None:
    """A built-in kind's schema from kube-apiserver's document, its `$ref`s inlined, for pruning unknown fields
    (free-form objects, such as FieldsV1, keep everything). None for kinds whose schema refers to itself (the
    CustomResourceDefinition's JSONSchemaProps) or that the documents lack."""
    key = f"apis/{group}/{version}" if group else f"api/{version}"
    document = builtins()["v3"].get(key)
    if document is None:
        return None
    schemas = document["components"]["schemas"]
    name = next((name for name, schema in schemas.items() if {"group": group, "version": version, "kind": kind}
                 in schema.get("x-kubernetes-group-version-kind", ())), None)
    if name is None:
        return None

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        target = node.get("$ref") or next((item["$ref"] for item in node.get("allOf", ()) if "$ref" in item), None)
        if target is not None:
            ref = target.rsplit("/", 1)[1]
            if ref in seen:
                raise RecursionError(ref)
            merged = {**resolve(schemas[ref], (*seen, ref)), **{k: v for k, v in node.items()
                                                                  if k not in ("$ref", "allOf")}}
            return merged
        out = {key: (({prop: resolve(sub, seen) for prop, sub in value.items()} if key == "properties" else
                      resolve(value, seen)) if key in ("properties", "items", "additionalProperties") else value)
               for key, value in node.items()}
        if out.get("type") == "object" and "properties" not in out and "additionalProperties" not in out:
            out["x-kubernetes-preserve-unknown-fields"] = True
        return out

    try:
        resolved: dict[str, Any] = resolve(schemas[name], (name,))
    except RecursionError:
        return None
    return resolved


# ---- names, as kube-apiserver forms them ------------------------------------------------------------------------


def operation_id_part(text: str, capitalize: bool) -> str:
    """apiserver's `ToValidOperationID`."""
    out = []
    for index, char in enumerate(text):
        if char.isalpha() or char == "_" or (index != 0 and char.isdigit()):
            out.append(char.upper() if capitalize else char)
            capitalize = False
        else:
            capitalize = True
    return "".join(out)


def model_name(group: str, version: str, kind: str) -> str:
    return f"{'.'.join(reversed(group.split('.')))}.{version}.{kind}"


def _article(noun: str) -> str:
    if not noun.endswith("ss") and noun.endswith("s"):
        return " "
    return " an " if noun[:1].lower() in "aeiou" else " a "


# ---- the CRD builder, v3 ----------------------------------------------------------------------------------------

_OPTION_PARAMETERS = {
    "get": ("resourceVersion",),
    "list": ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
             "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"),
    "put": ("dryRun", "fieldManager", "fieldValidation"),
    "patch": ("dryRun", "fieldManager", "fieldValidation", "force"),
    "post": ("dryRun", "fieldManager", "fieldValidation"),
    "delete": ("dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
               "orphanDependents", "propagationPolicy"),
}
_OPTION_PARAMETERS["deletecollection"] = _OPTION_PARAMETERS["list"]
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")


def _content(ref: str, types: Iterable[str] = ("application/json", "application/yaml")) -> dict[str, Any]:
    return {media: {"schema": {"$ref": ref}} for media in types}


class _Builder:
    """The routes of one served version of a CRD (apiextensions' `generateBuilder`)."""

    def __init__(self, rt: ResourceType) -> None:
        self.rt = rt
        self.kind_ref = V3_PREFIX + model_name(rt.group, rt.version, rt.kind)
        self.list_ref = V3_PREFIX + model_name(rt.group, rt.version, rt.list_kind)
        group = rt.group.removesuffix(".k8s.io")
        self.tag = f"{operation_id_part(group, False)}_{operation_id_part(rt.version, False)}"
        self.id_infix = operation_id_part(group, True) + operation_id_part(rt.version, True)

    def description(self, sub: str, verb: str) -> str:
        kind = self.rt.kind
        article = {"list": " objects of kind ", "read": " the specified ", "replace": " the specified ",
                   "patch": " the specified "}.get(verb, _article(kind) if verb in ("create", "delete") else "")
        of = f" {sub} of" if sub else ""
        if verb == "patch":
            return f"partially update{of}{article}{kind}"
        if verb == "deletecollection":
            return f"delete collection of{of + ' a' if of else ''} {kind}"
        return f"{verb}{of}{article}{kind}"

    def operation_id(self, operation: str) -> str:
        for verb in ("list", "read", "replace", "patch", "delete", "create"):
            if operation.startswith(verb):
                return verb + self.id_infix + operation_id_part(operation[len(verb):], True)
        return operation  # pragma: no cover

    def route(self, path: str, sub: str, action: str, verb: str, operation: str | None = None) -> tuple[
            str, list[dict[str, Any]], dict[str, Any]]:
        rt = self.rt
        parameters = [dict(builtins()["crd"]["parameters"]["pretty"])]
        if "{namespace}" in path:
            parameters.append(dict(builtins()["crd"]["parameters"]["namespace"]))
        if "{name}" in path:
            parameters.append({"name": "name", "in": "path", "description": f"name of the {rt.kind}",
                               "required": True, "schema": {"type": "string", "uniqueItems": True}})
        table = {**builtins()["crd"]["parameters"], **(builtins()["crd"]["patchParameters"] if action == "patch"
                                                        else {})}
        parameters += [dict(table[name]) for name in _OPTION_PARAMETERS[action]]
        namespaced = "Namespaced" if rt.namespaced else ""
        name = operation or f"{verb}{namespaced}{rt.kind}{sub.title()}"
        result = self.kind_ref
        if action == "list":
            result = self.list_ref
        elif action in ("delete", "deletecollection"):
            result = V3_PREFIX + META + "Status"
        responses: dict[str, Any] = {"200": {"description": "OK", "content": _content(result)}}
        if action == "post":
            responses["201"] = {"description": "Created", "content": _content(result)}
            responses["202"] = {"description": "Accepted", "content": _content(result)}
        elif action == "put":
            responses["201"] = {"description": "Created", "content": _content(result)}
        elif action == "delete":
            responses["202"] = {"description": "Accepted", "content": _content(result)}
        responses["401"] = {"description": "Unauthorized"}
        op: dict[str, Any] = {"tags": [self.tag], "description": self.description(sub, verb),
                              "operationId": self.operation_id(name), "responses": responses,
                              "x-kubernetes-action": action,
                              "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version,
                                                                  "kind": rt.kind}}
        if action in ("post", "put"):
            op["requestBody"] = {"content": _content(self.kind_ref), "required": True}
        elif action == "patch":
            op["requestBody"] = {"content": _content(V3_PREFIX + META + "Patch", _PATCH_TYPES), "required": True}
        elif action == "delete":
            op["requestBody"] = {"content": _content(V3_PREFIX + META + "DeleteOptions")}
        return path, parameters, op

    def routes(self) -> list[tuple[str, str, list[dict[str, Any]], dict[str, Any]]]:
        rt = self.rt
        root = f"/apis/{rt.group}/{rt.version}/{rt.plural}"
        found: list[tuple[str, str, list[dict[str, Any]], dict[str, Any]]] = []

        def add(method: str, route: tuple[str, list[dict[str, Any]], dict[str, Any]]) -> None:
            found.append((route[0], method, route[1], route[2]))

        if rt.namespaced:
            add("get", self.route(root, "", "list", "list", f"list{rt.kind}ForAllNamespaces"))
            root = f"/apis/{rt.group}/{rt.version}/namespaces/{{namespace}}/{rt.plural}"
        add("get", self.route(root, "", "list", "list"))
        add("post", self.route(root, "", "post", "create"))
        add("delete", self.route(root, "", "deletecollection", "deletecollection"))
        item = root + "/{name}"
        add("get", self.route(item, "", "get", "read"))
        add("put", self.route(item, "", "put", "replace"))
        add("delete", self.route(item, "", "delete", "delete"))
        add("patch", self.route(item, "", "patch", "patch"))
        if rt.has_status:
            add("get", self.route(item + "/status", "status", "get", "read"))
            add("put", self.route(item + "/status", "status", "put", "replace"))
            add("patch", self.route(item + "/status", "status", "patch", "patch"))
        return found


def _paths(routes: list[tuple[str, str, list[dict[str, Any]], dict[str, Any]]]) -> dict[str, Any]:
    """Routes as path items: parameters every operation of a path shares go to the path (kube-openapi's
    builder3), each list sorted by name."""
    paths: dict[str, Any] = {}
    grouped: dict[str, list[tuple[str, list[dict[str, Any]], dict[str, Any]]]] = {}
    for path, method, parameters, op in routes:
        grouped.setdefault(path, []).append((method, parameters, op))
    for path, operations in grouped.items():
        keys = [{(p["name"], p["in"]) for p in parameters} for _, parameters, _ in operations]
        common = set.intersection(*keys)
        item: dict[str, Any] = {}
        shared: dict[tuple[str, str], dict[str, Any]] = {}
        for method, parameters, op in operations:
            own = sorted((p for p in parameters if (p["name"], p["in"]) not in common), key=lambda p: p["name"])
            shared.update({(p["name"], p["in"]): p for p in parameters if (p["name"], p["in"]) in common})
            item[method] = {**op, "parameters": own} if own else op
        item["parameters"] = sorted(shared.values(), key=lambda p: p["name"])
        paths[path] = item
    return paths


def _embedded(schema: dict[str, Any], metadata: dict[str, Any]) -> None:
    """apiextensions' addEmbeddedProperties: objects marked `x-kubernetes-embedded-resource` get apiVersion, kind
    and metadata as a top-level object has them."""
    for sub in (schema.get("properties") or {}).values():
        _embedded(sub, metadata)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            _embedded(schema[key], metadata)
    if schema.get("x-kubernetes-embedded-resource"):
        crd = builtins()["crd"]
        properties = schema.setdefault("properties", {})
        properties["apiVersion"] = {**crd["apiVersion"], "description": (
            "apiVersion defines the versioned schema of this representation of an object. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")}
        properties["kind"] = {**crd["kind"], "description": (
            "kind is a string value representing the type of this object. In CamelCase. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")}
        properties["metadata"] = copy.deepcopy(metadata)
        required = schema.setdefault("required", [])
        for key in ("kind", "apiVersion"):
            if key not in required:
                required.append(key)


def kind_schema(rt: ResourceType, v2: bool = False) -> dict[str, Any]:
    """The schema of a custom resource as the CRD builder publishes it."""
    crd = builtins()["crd"]
    root = rt.schema.root if rt.schema is not None else None
    gvk = [{"group": rt.group, "kind": rt.kind, "version": rt.version}]
    if root is None:
        return {"type": "object", "x-kubernetes-group-version-kind": gvk}
    schema: dict[str, Any] = copy.deepcopy(dict(root))
    prefix = V2_PREFIX if v2 else V3_PREFIX
    metadata: dict[str, Any] = {"description": crd["metadata"]}
    if v2:
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return {"type": "object", "x-kubernetes-group-version-kind": gvk}
        schema = _v2_schema(to_v2(schema))
        metadata["$ref"] = prefix + META + "ObjectMeta"
    else:
        metadata["allOf"] = [{"$ref": prefix + META + "ObjectMeta"}]
    properties = schema.setdefault("properties", {})
    properties["metadata"] = metadata
    properties["apiVersion"] = dict(crd["apiVersion"])
    properties["kind"] = dict(crd["kind"])
    if not v2 or not schema.get("x-kubernetes-preserve-unknown-fields"):
        _embedded(schema, metadata)
    schema["x-kubernetes-group-version-kind"] = gvk
    return schema


def list_schema(rt: ResourceType, v2: bool = False) -> dict[str, Any]:
    crd = builtins()["crd"]
    prefix = V2_PREFIX if v2 else V3_PREFIX
    metadata: dict[str, Any] = {"description": crd["listMetadata"]}
    if v2:
        metadata["$ref"] = prefix + META + "ListMeta"
    else:
        metadata["allOf"] = [{"$ref": prefix + META + "ListMeta"}]
    return {
        "description": f"{rt.list_kind} is a list of {rt.kind}", "type": "object", "required": ["items"],
        "properties": {
            "apiVersion": dict(crd["apiVersion"]),
            "items": {"description": f"List of {rt.plural}. More info: "
                                     "https://git.k8s.io/community/contributors/devel/sig-architecture/"
                                     "api-conventions.md",
                      "type": "array", "items": {"$ref": prefix + model_name(rt.group, rt.version, rt.kind)}},
            "kind": dict(crd["kind"]),
            "metadata": metadata,
        },
        "x-kubernetes-group-version-kind": [{"group": rt.group, "kind": rt.list_kind, "version": rt.version}],
    }


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[1])
            else:
                found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def crd_document(types: list[ResourceType]) -> dict[str, Any]:
    """The v3 document of one group/version of custom resources."""
    crd = builtins()["crd"]
    routes = []
    schemas: dict[str, Any] = {}
    for rt in sorted(types, key=lambda t: t.plural):
        routes += _Builder(rt).routes()
        schemas[model_name(rt.group, rt.version, rt.kind)] = kind_schema(rt)
        schemas[model_name(rt.group, rt.version, rt.list_kind)] = list_schema(rt)
    paths = _paths(routes)
    needed = _refs(paths) | _refs(schemas)
    meta = crd["schemas"]
    while True:
        more = set().union(*(_refs(meta[name]) for name in needed if name in meta)) - needed
        if not more:
            break
        needed |= more
    schemas.update({name: meta[name] for name in needed if name in meta})
    return {"openapi": "3.0.0", "info": dict(crd["info"]), "paths": dict(sorted(paths.items())),
            "components": {"schemas": dict(sorted(schemas.items()))}}


# ---- v2 ---------------------------------------------------------------------------------------------------------


def to_v2(schema: Any) -> Any:
    """apiextensions' `ToStructuralOpenAPIV2` (what kubectl's v2 consumers cannot take, removed), for a CRD's
    structural schema given as JSON."""
    if isinstance(schema, list):
        return [to_v2(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: to_v2(value) if key in ("properties", "items", "additionalProperties") else value
           for key, value in schema.items() if key not in ("allOf", "oneOf", "anyOf", "not")}
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {key: to_v2(value) for key, value in schema["properties"].items()}
    if out.pop("nullable", False):
        out.pop("type", None)
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("x-kubernetes-preserve-unknown-fields"):
        out.pop("items", None)
        out.pop("properties", None)
        if out.get("type") == "object":
            out.pop("type")
    if "items" not in out and out.get("type") == "array":
        out.pop("type")
    nullable = {key for key, value in (schema.get("properties") or {}).items()
                if isinstance(value, dict) and value.get("nullable")}
    if nullable and "required" in out:
        out["required"] = [key for key in out["required"] if key not in nullable] or None
        if out["required"] is None:
            del out["required"]
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict) and additional.get("nullable"):
        out.pop("required", None)
    return out


def _v2_schema(node: Any) -> Any:
    """A v3 schema as v2 has it: no `default`s, refs to `#/definitions/`, a lone `allOf` ref as a `$ref` beside
    its siblings."""
    if isinstance(node, list):
        return [_v2_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "default":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _v2_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            out[key] = _v2_schema(value)
        else:
            out[key] = value
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        del out["allOf"]
        out["$ref"] = all_of[0]["$ref"]
    if isinstance(out.get("$ref"), str):
        out["$ref"] = out["$ref"].replace(V3_PREFIX, V2_PREFIX)
    return out


def _v2_parameter(parameter: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in parameter.items() if key != "schema"}
    out.update(parameter.get("schema") or {})
    return out


def _v2_operation(op: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {key: value for key, value in op.items()
                           if key not in ("parameters", "requestBody", "responses")}
    parameters = [_v2_parameter(p) for p in op.get("parameters", ())]
    body = op.get("requestBody")
    if body is not None:
        out["consumes"] = list(body["content"])
        schema = next(iter(body["content"].values()))["schema"]
        parameters.insert(0, {"name": "body", "in": "body", "required": bool(body.get("required")),
                              "schema": _v2_schema(schema)})
    if parameters:
        out["parameters"] = parameters
    produces: list[str] = []
    responses = {}
    for code, response in op.get("responses", {}).items():
        converted = {"description": response.get("description", "")}
        content = response.get("content") or {}
        if content:
            converted["schema"] = _v2_schema(next(iter(content.values()))["schema"])
            produces += [media for media in content if media not in produces]
        responses[code] = converted
    out["responses"] = responses
    if produces:
        out["produces"] = produces
    out["schemes"] = ["https"]
    return out


def v2_document(v3_documents: Iterable[Mapping[str, Any]], crd_types: Iterable[ResourceType]) -> dict[str, Any]:
    """One v2 document from the group/version documents (custom resources' definitions per
    `ToStructuralOpenAPIV2`)."""
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for doc in v3_documents:
        for path, item in doc.get("paths", {}).items():
            paths[path] = {method: (_v2_operation(op) if method != "parameters" else
                                    [_v2_parameter(p) for p in op]) for method, op in item.items()}
        for name, schema in doc.get("components", {}).get("schemas", {}).items():
            definitions[name] = _v2_schema(schema)
    for rt in crd_types:
        definitions[model_name(rt.group, rt.version, rt.kind)] = kind_schema(rt, v2=True)
        definitions[model_name(rt.group, rt.version, rt.list_kind)] = list_schema(rt, v2=True)
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "1.35"},
            "paths": dict(sorted(paths.items())), "definitions": dict(sorted(definitions.items())),
            "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                    "name": "authorization", "in": "header"}},
            "security": [{"BearerToken": []}]}


# ---- serving ----------------------------------------------------------------------------------------------------


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
