"""Strategic merge patch (`application/strategic-merge-patch+json`) of the built-in kinds, as client-side
`kubectl apply` sends it: a merge patch whose lists with `x-kubernetes-patch-strategy: merge` merge item by item
(by their `x-kubernetes-patch-merge-key`, or by value for lists of scalars), with the directives `$patch`
(`delete`, `replace`, `merge`), `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys`.
The strategies come from kube-apiserver's OpenAPI schema of the kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..patch import PatchError, copy_json
from .fieldsets import child_schema

Schema = Mapping[str, Any] | None

_ORDER = "$setElementOrder/"
_DELETE_FROM = "$deleteFromPrimitiveList/"


def _merge_strategy(schema: Schema) -> tuple[bool, str | None]:
    """(merge the list item by item, its merge key)."""
    if schema is None:
        return False, None
    strategies = str(schema.get("x-kubernetes-patch-strategy", "")).split(",")
    key = schema.get("x-kubernetes-patch-merge-key")
    return "merge" in strategies, str(key) if key else None


def strategic_merge(target: Any, patch: Any, schema: Schema) -> Any:
    """Apply a strategic merge patch to `target` (pure); PatchError for a malformed directive."""
    if not isinstance(patch, dict):
        return copy_json(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {key: copy_json(value) for key, value in patch.items() if key != "$patch"}
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch directive {directive!r}")
    result: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        sub = child_schema(schema, key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                result[key] = strategic_merge(result.get(key), value, sub)
        elif isinstance(value, list) and _merge_strategy(sub)[0]:
            result[key] = _merge_list(result.get(key), value, sub)
        else:
            result[key] = copy_json(value)
    for key, value in patch.items():
        if key.startswith(_DELETE_FROM) and isinstance(value, list):
            name = key[len(_DELETE_FROM):]
            if isinstance(result.get(name), list):
                result[name] = [item for item in result[name] if item not in value]
        elif key.startswith(_ORDER) and isinstance(value, list):
            name = key[len(_ORDER):]
            if isinstance(result.get(name), list):
                result[name] = _order(result[name], value, _merge_strategy(child_schema(schema, name))[1])
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {key: value for key, value in result.items() if key in retain}
    return result


def _merge_list(current: Any, patch: list[Any], schema: Schema) -> list[Any]:
    items: list[Any] = list(current) if isinstance(current, list) else []
    _, key = _merge_strategy(schema)
    element = schema.get("items") if schema is not None else None
    if key is None:  # a list of scalars merged by value
        if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
            return [copy_json(item) for item in patch if not isinstance(item, dict)]
        return items + [copy_json(item) for item in patch if item not in items]
    for entry in patch:
        if not isinstance(entry, dict):
            raise PatchError(f"an item of a list merged by {key} is not an object")
        if entry.get("$patch") == "replace":
            return [copy_json({k: v for k, v in item.items() if k != "$patch"}) for item in patch
                    if isinstance(item, dict) and item.get("$patch") != "replace"]
        found = next((index for index, item in enumerate(items)
                      if isinstance(item, dict) and item.get(key) == entry.get(key)), None)
        if entry.get("$patch") == "delete":
            items = [item for item in items if not (isinstance(item, dict) and item.get(key) == entry.get(key))]
        elif found is None:
            items.append(strategic_merge({}, entry, element if isinstance(element, dict) else None))
        else:
            items[found] = strategic_merge(items[found], entry, element if isinstance(element, dict) else None)
    return items


def _order(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    """`$setElementOrder`: the listed items first, in its order, then the others as they were."""
    def identity(item: Any) -> Any:
        return item.get(key) if key is not None and isinstance(item, dict) else item

    wanted = [identity(item) for item in order]
    listed = sorted((item for item in items if identity(item) in wanted), key=lambda item: wanted.index(
        identity(item)))
    return listed + [item for item in items if identity(item) not in wanted]
