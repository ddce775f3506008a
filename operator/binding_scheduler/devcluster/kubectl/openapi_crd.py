"""The OpenAPI v3 document of one group/version of custom resources, as kube-apiserver's CRD builder makes it
(apiextensions-apiserver's `controller/openapi/builder`): every route of a served version with kube's operation
ids, descriptions, query parameters, request bodies and responses, and the CRD's schema with `apiVersion`, `kind`
and `metadata` set as kube sets them."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..resources import ResourceType
from .builtin_schemas import builtins
from .openapi_v2 import V2_PREFIX, V3_PREFIX, to_v2, v2_schema

META = "io.k8s.apimachinery.pkg.apis.meta.v1."


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
        schema = v2_schema(to_v2(schema))
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


def schema_refs(node: Any) -> set[str]:
    """The names of every definition `node` refers to (`$ref: #/definitions/NAME`), at any depth."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[1])
            else:
                found |= schema_refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= schema_refs(value)
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
    needed = schema_refs(paths) | schema_refs(schemas)
    meta = crd["schemas"]
    while True:
        more = set().union(*(schema_refs(meta[name]) for name in needed if name in meta)) - needed
        if not more:
            break
        needed |= more
    schemas.update({name: meta[name] for name in needed if name in meta})
    return {"openapi": "3.0.0", "info": dict(crd["info"]), "paths": dict(sorted(paths.items())),
            "components": {"schemas": dict(sorted(schemas.items()))}}
