"""OpenAPI v3 as v2 has it: a CRD's structural schema as `ToStructuralOpenAPIV2` makes it, and v3 schemas,
parameters and operations in v2's form."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

V3_PREFIX = "#/components/schemas/"
V2_PREFIX = "#/definitions/"


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


def v2_schema(node: Any) -> Any:
    """A v3 schema as v2 has it: no `default`s, refs to `#/definitions/`, a lone `allOf` ref as a `$ref` beside
    its siblings."""
    if isinstance(node, list):
        return [v2_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "default":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: v2_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            out[key] = v2_schema(value)
        else:
            out[key] = value
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        del out["allOf"]
        out["$ref"] = all_of[0]["$ref"]
    if isinstance(out.get("$ref"), str):
        out["$ref"] = out["$ref"].replace(V3_PREFIX, V2_PREFIX)
    return out


def v2_parameter(parameter: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in parameter.items() if key != "schema"}
    out.update(parameter.get("schema") or {})
    return out


def v2_operation(op: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {key: value for key, value in op.items()
                           if key not in ("parameters", "requestBody", "responses")}
    parameters = [v2_parameter(p) for p in op.get("parameters", ())]
    body = op.get("requestBody")
    if body is not None:
        out["consumes"] = list(body["content"])
        schema = next(iter(body["content"].values()))["schema"]
        parameters.insert(0, {"name": "body", "in": "body", "required": bool(body.get("required")),
                              "schema": v2_schema(schema)})
    if parameters:
        out["parameters"] = parameters
    produces: list[str] = []
    responses = {}
    for code, response in op.get("responses", {}).items():
        converted = {"description": response.get("description", "")}
        content = response.get("content") or {}
        if content:
            converted["schema"] = v2_schema(next(iter(content.values()))["schema"])
            produces += [media for media in content if media not in produces]
        responses[code] = converted
    out["responses"] = responses
    if produces:
        out["produces"] = produces
    out["schemes"] = ["https"]
    return out
