"""kube's JSONPath for the simple paths printer columns use, and how it prints what it finds."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(
    r"""\.\.(?P<deep>[A-Za-z0-9_-]+)|\.(?P<field>[A-Za-z0-9_-]+)|\[\s*'(?P<quoted>[^']*)'\s*\]"""
    r"""|\[\s*(?P<index>-?\d+)\s*\]|\[\s*\*\s*\]|\[\?\((?P<filter>.*?)\)\]"""
)
_FILTER = re.compile(r"""\s*@((?:\.[A-Za-z0-9_-]+)*)\s*(==|!=|<=|>=|<|>)\s*(?:"([^"]*)"|'([^']*)'|(\S+))\s*""")


def _walk(value: Any, fields: str) -> list[Any]:
    node = value
    for key in [part for part in fields.split(".") if part]:
        if not isinstance(node, Mapping) or key not in node:
            return []
        node = node[key]
    return [node]


def _descend(value: Any, key: str) -> list[Any]:
    found = []
    if isinstance(value, Mapping):
        if key in value:
            found.append(value[key])
        for item in value.values():
            found.extend(_descend(item, key))
    elif isinstance(value, list):
        for item in value:
            found.extend(_descend(item, key))
    return found


def _compare(left: Any, operator: str, literal: str, quoted: bool) -> bool:
    right: Any = literal
    if not quoted:
        try:
            right = json.loads(literal)
        except ValueError:
            right = literal
    try:
        return bool({"==": left == right, "!=": left != right}.get(operator) if operator in ("==", "!=") else
                    {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[operator])
    except TypeError:
        return False


def jsonpath(obj: Any, expression: str) -> list[Any]:
    """kube's JSONPath (with missing keys allowed) for the simple paths printer columns use: `.a.b`, `['a.b']`,
    `[0]`, `[*]`, `..a` and filters `[?(@.type=="Ready")]`. Returns every result, in order."""
    path = expression.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path.startswith("$"):
        path = path[1:]
    current = [obj]
    position = 0
    while position < len(path):
        match = _TOKEN.match(path, position)
        if match is None:
            return []
        position = match.end()
        following: list[Any] = []
        for value in current:
            if match.group("deep") is not None:
                following.extend(_descend(value, match.group("deep")))
            elif match.group("field") is not None or match.group("quoted") is not None:
                key = match.group("field") if match.group("field") is not None else match.group("quoted")
                if isinstance(value, Mapping) and key in value:
                    following.append(value[key])
            elif match.group("index") is not None:
                index = int(match.group("index"))
                if isinstance(value, list) and -len(value) <= index < len(value):
                    following.append(value[index])
            elif match.group("filter") is not None:
                condition = _FILTER.fullmatch(match.group("filter"))
                if condition is None or not isinstance(value, list):
                    continue
                fields, operator, double, single, bare = condition.groups()
                literal = double if double is not None else single if single is not None else bare
                for item in value:
                    if any(_compare(found, operator, literal, bare is None) for found in _walk(item, fields)):
                        following.append(item)
            elif isinstance(value, list):  # [*]
                following.extend(value)
            elif isinstance(value, Mapping):
                following.extend(value.values())
        current = following
    return current


def go_text(value: Any) -> str:
    """How kube's JSONPath prints one result: strings bare, numbers and booleans as Go prints them, maps and
    lists as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if value is None:
        return "<nil>"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
