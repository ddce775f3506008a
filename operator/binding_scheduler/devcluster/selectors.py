"""Label selectors (every operator of the string syntax) and field selectors on name/namespace."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request

_SET_RE = re.compile(r"^\s*([^\s!=<>(),]+)\s+(in|notin)\s*\(([^)]*)\)\s*$")
_CMP_RE = re.compile(r"^\s*([^\s!=<>(),]+)\s*(==|=|!=|>|<)\s*([^\s!=<>(),]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)\s*([^\s!=<>(),]+)\s*$")

FIELD_SELECTABLE = ("metadata.name", "metadata.namespace")

Matcher = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        match self.operator:
            case "=":
                return present and value == self.values[0]
            case "!=":
                return not present or value != self.values[0]
            case "in":
                return present and value in self.values
            case "notin":
                return not present or value not in self.values
            case "exists":
                return present
            case "!":
                return not present
            case ">" | "<":
                try:
                    number, bound = int(str(value)), int(self.values[0])
                except ValueError:
                    return False
                return present and (number > bound if self.operator == ">" else number < bound)
        return False  # pragma: no cover


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip()]


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    """Parse `a=b,c!=d,e in (f,g),h notin (i),j,!k,l>1` into requirements (400 on a syntax error)."""
    requirements: list[Requirement] = []
    for part in _split_top_level(text or ""):
        if found := _SET_RE.match(part):
            values = tuple(v.strip() for v in found.group(3).split(",") if v.strip())
            requirements.append(Requirement(found.group(1), found.group(2), values))
        elif found := _CMP_RE.match(part):
            operator = "=" if found.group(2) == "==" else found.group(2)
            if operator in (">", "<") and not re.fullmatch(r"-?\d+", found.group(3)):
                raise bad_request(f"unable to parse requirement: for 'Gt', 'Lt' operators, "
                                  f"the value must be an integer: {part.strip()!r}")
            requirements.append(Requirement(found.group(1), operator, (found.group(3),)))
        elif found := _EXISTS_RE.match(part):
            requirements.append(Requirement(found.group(2), "!" if found.group(1) else "exists"))
        else:
            raise bad_request(f"unable to parse requirement: {part.strip()!r}")
    return tuple(requirements)


def parse_field_selector(text: str) -> tuple[tuple[str, str, str], ...]:
    """Parse `metadata.name=x,metadata.namespace!=y` into (field, operator, value) triples."""
    terms: list[tuple[str, str, str]] = []
    for part in (text or "").split(","):
        if not part.strip():
            continue
        found = re.fullmatch(r"\s*([^=!]+?)\s*(==|=|!=)\s*(.*?)\s*", part)
        if not found:
            raise bad_request(f"invalid selector: {part!r}; can't understand {part!r}")
        field_name, operator, value = found.groups()
        if field_name not in FIELD_SELECTABLE:
            raise ApiError(400, f"field label not supported: {field_name}", "BadRequest")
        terms.append((field_name, "!=" if operator == "!=" else "=", value))
    return tuple(terms)


def make_matcher(label_selector: str | None, field_selector: str | None) -> Matcher | None:
    """A predicate over objects for both selectors, or None when neither filters anything."""
    labels_req = parse_label_selector(label_selector or "")
    fields_req = parse_field_selector(field_selector or "")
    if not labels_req and not fields_req:
        return None

    def matches(obj: Mapping[str, Any]) -> bool:
        metadata = obj.get("metadata") or {}
        labels = metadata.get("labels") or {}
        if not all(req.matches(labels) for req in labels_req):
            return False
        for field_name, operator, value in fields_req:
            actual = metadata.get(field_name.split(".", 1)[1]) or ""
            if (actual == value) != (operator == "="):
                return False
        return True

    return matches
