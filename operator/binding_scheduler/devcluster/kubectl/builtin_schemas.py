"""kube-apiserver v1.35.4's OpenAPI documents of the built-in kinds devcluster serves, trimmed to them, and the
pieces its CRD documents share (`openapi-builtins.yaml`, written by tests/devcluster/kubectl/openapi_snapshot.py);
and the schema of a built-in kind taken from them (the core prunes built-in kinds by it)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().parent / "openapi-builtins.yaml"


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
