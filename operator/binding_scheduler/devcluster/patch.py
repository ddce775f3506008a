"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and a fast copy of JSON values."""

from __future__ import annotations

from typing import Any

# The media types of PATCH bodies (the last two are the kubectl package's to apply).
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


class PatchError(Exception):
    """The patch cannot be applied (the server answers 422)."""


class PatchTestFailed(PatchError):
    """A JSON patch `test` operation did not hold."""


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-like value (much faster than `copy.deepcopy`)."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, `null` removes a key, anything else replaces. Pure."""
    if not isinstance(patch, dict):
        return copy_json(patch)
    result: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = merge_patch(result.get(key), value)
        else:
            result[key] = copy_json(value)
    return result


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _split_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}")
    return [_unescape(token) for token in pointer[1:].split("/")]


def _index(container: list[Any], token: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not allow_end):
        raise PatchError(f"array index {index} is out of range")
    return index


def _resolve(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"missing key {token!r}")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, allow_end=False)]
        else:
            raise PatchError(f"cannot descend into a scalar at {token!r}")
    return node


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise PatchError("cannot add into a scalar")
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"missing key {last!r}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, allow_end=False))
    raise PatchError("cannot remove from a scalar")


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 on a copy of `target`; raises `PatchTestFailed` or `PatchError`."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy_json(target)
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise PatchError(f"invalid operation {operation!r}")
        op, tokens = operation["op"], _split_pointer(str(operation["path"]))
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError(f"operation {op!r} needs a value")
        match op:
            case "add":
                doc = _add(doc, tokens, copy_json(operation["value"]))
            case "remove":
                _remove(doc, tokens)
            case "replace":
                _resolve(doc, tokens)  # must exist
                if tokens:
                    _remove(doc, tokens)
                doc = _add(doc, tokens, copy_json(operation["value"]))
            case "move" | "copy":
                source = _split_pointer(str(operation.get("from", "")))
                value = copy_json(_resolve(doc, source))
                if op == "move":
                    if tokens[: len(source)] == source and tokens != source:
                        raise PatchError("cannot move a value into itself")
                    _remove(doc, source)
                doc = _add(doc, tokens, value)
            case "test":
                try:
                    actual = _resolve(doc, tokens)
                except PatchError as exc:
                    raise PatchTestFailed(f"testing value {operation['path']} failed: {exc}") from exc
                if actual != operation["value"]:
                    raise PatchTestFailed(f"testing value {operation['path']} failed: test operation failed")
            case _:
                raise PatchError(f"unknown operation {op!r}")
    return doc
