"""Structural schemas of custom resources, applied the way kube-apiserver applies them.

On every create and update of a custom resource: unknown fields are pruned (kept under
`x-kubernetes-preserve-unknown-fields`), `null`s of non-nullable fields are dropped, defaults are filled in,
integral floats of integer fields become ints, and then the object is validated: types, `required`, `enum`,
`pattern`, `minLength`/`maxLength`, `minimum`/`maximum`, `minItems`/`maxItems`, `format: date-time`,
`x-kubernetes-int-or-string` and duplicates in `set`/`map` lists. Each problem is one cause of the 422,
with kube-apiserver's field path, reason and message. CEL rules (`x-kubernetes-validations`) are not run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from binding_scheduler.crds import version_schema
from binding_scheduler.crds.structural import OBJECT_META_FIELDS, child_path, unknown_fields

from .patch import copy_json

Cause = dict[str, str]

_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _allowed_types(schema: Mapping[str, Any]) -> tuple[str, ...]:
    if schema.get("x-kubernetes-int-or-string"):
        return ("integer", "string")
    declared = schema.get("type")
    return (str(declared),) if declared else ()


def _show(value: Any) -> str:
    """A value as kube-apiserver prints it in a cause: strings quoted, numbers bare."""
    return json.dumps(value, separators=(",", ":"))


class Schema:
    """The `openAPIV3Schema` of one served version of a CRD."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    @classmethod
    def of_version(cls, version: Mapping[str, Any]) -> Schema | None:
        root = version_schema(version)
        return cls(root) if root is not None else None

    # ---- pruning and defaulting -------------------------------------------------------------------

    def normalize(self, obj: dict[str, Any]) -> None:
        """Prune, drop nulls, default (in place). `apiVersion`/`kind` stay; `metadata` keeps ObjectMeta's fields."""
        properties = self.root.get("properties") or {}
        for key in list(obj):
            if key in ("apiVersion", "kind"):
                continue
            if key == "metadata":
                if isinstance(obj[key], dict):
                    for meta_key in [k for k in obj[key] if k not in OBJECT_META_FIELDS]:
                        del obj[key][meta_key]
                continue
            _normalize_entry(obj, key, properties.get(key), self.root)
        _default(obj, properties, skip=("apiVersion", "kind", "metadata"))

    def normalize_part(self, obj: dict[str, Any], key: str) -> None:
        """`normalize` of one top-level field only (a write through `/status`)."""
        properties = self.root.get("properties") or {}
        if key in obj:
            _normalize_entry(obj, key, properties.get(key), self.root)
        _default(obj, {key: properties[key]} if key in properties else {}, skip=())

    def unknown_fields(self, obj: Mapping[str, Any]) -> list[str]:
        """The paths pruning would drop (kube's order: unknown `metadata` fields, then the rest sorted), without
        changing `obj`: what `fieldValidation` reports."""
        return unknown_fields(obj, self.root)

    # ---- validation -------------------------------------------------------------------------------

    def validate(self, obj: Mapping[str, Any], only: str | None = None) -> list[Cause]:
        """The causes of a 422 for `obj` (empty when valid). With `only`, just that top-level field is checked,
        its messages naming paths relative to it (as kube-apiserver does for writes through `/status`)."""
        causes: list[Cause] = []
        properties = self.root.get("properties") or {}
        for key, sub in properties.items():
            if key in ("apiVersion", "kind", "metadata") or (only is not None and key != only):
                continue
            if key in obj:
                _validate(obj[key], sub, (None, key), only is not None, causes)
        if only is None:
            for key in self.root.get("required") or ():
                if key not in obj:
                    causes.append({"reason": "FieldValueRequired", "message": "Required value", "field": key})
        return causes


def prune_unknown(obj: dict[str, Any], root: Mapping[str, Any]) -> None:
    """Drop what `unknown_fields` reports (in place), and nothing else: the pruning of a built-in kind."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        for key in [k for k in metadata if k not in OBJECT_META_FIELDS]:
            del metadata[key]
    for path in unknown_fields(obj, root):
        _drop_path(obj, path)


def _drop_path(obj: Any, path: str) -> None:
    node = obj
    tokens = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    for token in tokens[:-1]:
        node = node[int(token[1:-1])] if token.startswith("[") else node[token]
    node.pop(tokens[-1], None)


def _normalize_entry(container: dict[str, Any], key: str, schema: Mapping[str, Any] | None,
                     parent: Mapping[str, Any]) -> None:
    value = container[key]
    if schema is None:
        additional = parent.get("additionalProperties")
        if isinstance(additional, dict):
            schema = additional
        elif additional is True or parent.get("x-kubernetes-preserve-unknown-fields"):
            return
        else:
            del container[key]
            return
    if value is None and not schema.get("nullable"):
        del container[key]
        return
    container[key] = _normalize(value, schema)


def _normalize(value: Any, schema: Mapping[str, Any]) -> Any:
    if isinstance(value, dict):
        properties = schema.get("properties")
        structural = (properties is not None or "additionalProperties" in schema
                      or schema.get("type") == "object")
        if not structural:
            return value
        for key in list(value):
            _normalize_entry(value, key, (properties or {}).get(key), schema)
        _default(value, properties or {}, skip=())
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [item if item is None else _normalize(item, items) for item in value]
        return value
    if isinstance(value, float) and value.is_integer() and "integer" in _allowed_types(schema):
        return int(value)
    return value


def _default(obj: dict[str, Any], properties: Mapping[str, Any], skip: tuple[str, ...]) -> None:
    for key, sub in properties.items():
        if key not in obj and key not in skip and isinstance(sub, dict) and "default" in sub:
            obj[key] = _normalize(copy_json(sub["default"]), sub)


def _type_error(path: str, body: str, actual: str, wanted: str) -> Cause:
    return {"reason": "FieldValueTypeInvalid", "field": path,
            "message": f'Invalid value: "{actual}": {body} in body must be of type {wanted}: "{actual}"'}


def _invalid(path: str, value: Any, why: str) -> Cause:
    return {"reason": "FieldValueInvalid", "field": path, "message": f"Invalid value: {_show(value)}: {why}"}


Where = tuple["Where | None", str | int]
"""Where a value is: its parent's `Where` (None at a top-level field) and its key or index. Rendered into a
field path only for a cause: building every path of an 800-entry list was most of a valid write's validation."""


def _field(where: Where) -> str:
    """The cause's field (`spec.clusters[0].name`)."""
    return _joined(_tokens(where))


def _shown(where: Where, relative: bool) -> str:
    """The path a message names: the field, or under `relative` (a write through `/status`) the path below the
    top-level field (`conditions[0].type`; the field itself where nothing is below it but indices)."""
    if not relative:
        return _field(where)
    tokens = _tokens(where)[1:]
    while tokens and isinstance(tokens[0], int):
        tokens.pop(0)
    return _joined(tokens) or _field(where)


def _tokens(where: Where | None) -> list[str | int]:
    tokens: list[str | int] = []
    while where is not None:
        where, token = where
        tokens.append(token)
    tokens.reverse()
    return tokens


def _joined(tokens: list[str | int]) -> str:
    path = ""
    for token in tokens:
        path = f"{path}[{token}]" if isinstance(token, int) else child_path(path, token)
    return path


def _validate(value: Any, schema: Mapping[str, Any], where: Where, relative: bool, causes: list[Cause]) -> None:
    if value is None and schema.get("nullable"):
        return
    allowed = _allowed_types(schema)
    actual = _json_type(value)
    if allowed and actual not in allowed and not (actual == "integer" and "number" in allowed):
        causes.append(_type_error(_field(where), _shown(where, relative), actual, ",".join(allowed)))
        return
    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(_show(item) for item in schema["enum"])
        causes.append({"reason": "FieldValueNotSupported", "field": _field(where),
                       "message": f"Unsupported value: {_show(value)}: supported values: {supported}"})
    if isinstance(value, str):
        _validate_string(value, schema, where, relative, causes)
    elif actual in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            causes.append(_invalid(_field(where), value, f"{_shown(where, relative)} in body should be greater "
                                                         f"than or equal to {schema['minimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            causes.append(_invalid(_field(where), value, f"{_shown(where, relative)} in body should be less than "
                                                         f"or equal to {schema['maximum']}"))
    elif isinstance(value, list):
        _validate_list(value, schema, where, relative, causes)
    elif isinstance(value, dict):
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, additional if isinstance(additional, dict) else None)
            if isinstance(sub, dict):
                _validate(item, sub, (where, key), relative, causes)
        for key in schema.get("required") or ():
            if key not in value:
                causes.append({"reason": "FieldValueRequired", "message": "Required value",
                               "field": _field((where, key))})


def _validate_string(value: str, schema: Mapping[str, Any], where: Where, relative: bool,
                     causes: list[Cause]) -> None:
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        causes.append({"reason": "FieldValueTooLong", "field": _field(where),
                       "message": f"Too long: may not be more than {schema['maxLength']} bytes"})
    if "minLength" in schema and len(value) < schema["minLength"]:
        causes.append(_invalid(_field(where), value, f"{_shown(where, relative)} in body should be at least "
                                                     f"{schema['minLength']} chars long"))
    if "pattern" in schema and not re.search(schema["pattern"], value):
        causes.append(_invalid(_field(where), value, f"{_shown(where, relative)} in body should match "
                                                     f"'{schema['pattern']}'"))
    if schema.get("format") == "date-time" and not _DATE_TIME.fullmatch(value):
        causes.append({"reason": "FieldValueTypeInvalid", "field": _field(where),
                       "message": f"Invalid value: {_show(value)}: {_shown(where, relative)} in body must be of "
                                  f"type date-time: {_show(value)}"})


def _validate_list(value: list[Any], schema: Mapping[str, Any], where: Where, relative: bool,
                   causes: list[Cause]) -> None:
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        causes.append({"reason": "FieldValueTooMany", "field": _field(where),
                       "message": f"Too many: {len(value)}: must have at most {schema['maxItems']} items"})
    if "minItems" in schema and len(value) < schema["minItems"]:
        causes.append(_invalid(_field(where), value, f"{_shown(where, relative)} in body should have at least "
                                                     f"{schema['minItems']} items"))
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            _validate(item, items, (where, index), relative, causes)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type not in ("set", "map"):
        return
    keys = schema.get("x-kubernetes-list-map-keys") or ()
    seen: list[Any] = []
    for index, item in enumerate(value):
        identity = (
            item if list_type == "set"
            else {k: item.get(k) for k in keys} if isinstance(item, dict) else item
        )
        if identity in seen:
            causes.append({"reason": "FieldValueDuplicate", "field": _field((where, index)),
                           "message": f"Duplicate value: {_show(identity)}"})
        else:
            seen.append(identity)
