"""Label selectors (every operator of the string syntax) and field selectors (the fields each kind supports)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request

_SET_RE = re.compile(r"^\s*([^\s!=<>(),]+)\s+(in|notin)\s*\(([^)]*)\)\s*$")
_CMP_RE = re.compile(r"^\s*([^\s!=<>(),]+)\s*(==|=|!=|>|<)\s*([^\s!=<>(),]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)\s*([^\s!=<>(),]+)\s*$")

Matcher = Callable[[Mapping[str, Any]], bool]
Getter = Callable[[Mapping[str, Any]], str]


def field_getter(path: str) -> Getter:
    """The value of a dotted field as a field selector sees it ("" when absent)."""
    keys = path.split(".")

    def get(obj: Mapping[str, Any]) -> str:
        node: Any = obj
        for key in keys:
            if not isinstance(node, Mapping):
                return ""
            node = node.get(key)
        if node is None:
            return ""
        if isinstance(node, bool):
            return "true" if node else "false"
        return str(node)

    return get


def _event_source(obj: Mapping[str, Any]) -> str:
    return str((obj.get("source") or {}).get("component") or obj.get("reportingComponent") or "")


@dataclass(frozen=True)
class FieldLabels:
    """The fields a type can be selected by, and how kube-apiserver words a field it does not know: core/v1
    kinds and custom resources say `field label not supported: X`, other built-in kinds list what they know."""

    getters: Mapping[str, Getter]
    listed: bool = False  # the `"X" is not a known field selector: only ...` wording

    def unsupported(self, name: str) -> str:
        if self.listed:
            known = ", ".join(f'"{field}"' for field in self.getters)
            return f'"{name}" is not a known field selector: only {known}'
        return f"field label not supported: {name}"

    @classmethod
    def of(cls, *paths: str, listed: bool = False, **special: Getter) -> FieldLabels:
        getters: dict[str, Getter] = {path: field_getter(path) for path in paths}
        getters.update({name.replace("__", "."): getter for name, getter in special.items()})
        return cls(getters, listed)


DEFAULT_FIELDS = FieldLabels.of("metadata.name", "metadata.namespace")
EVENT_FIELDS = FieldLabels.of(
    "metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
    "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
    "involvedObject.fieldPath", "reason", "reportingComponent", "type", source=_event_source)


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


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped with a backslash (kube's `fields.ParseSelector`)."""
    terms, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == ",":
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    index = 0
    while index < len(term):
        if term[index] == "\\":
            index += 2
            continue
        for operator in ("!=", "==", "="):
            if term.startswith(operator, index):
                return term[:index], operator, term[index + len(operator):]
        index += 1
    return None


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def parse_field_selector(text: str, fields: FieldLabels = DEFAULT_FIELDS) -> tuple[tuple[str, str, str], ...]:
    """Parse `metadata.name=x,metadata.namespace!=y` into (field, operator, value) triples; a field the type
    does not support is a 400 worded as kube-apiserver words it for that type."""
    terms: list[tuple[str, str, str]] = []
    for part in _split_terms(text or ""):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field_name, operator, value = split
        if field_name not in fields.getters:
            raise ApiError(400, fields.unsupported(field_name), "BadRequest")
        terms.append((field_name, "!=" if operator == "!=" else "=", _unescape(value)))
    return tuple(terms)


def make_matcher(
    label_selector: str | None, field_selector: str | None, fields: FieldLabels = DEFAULT_FIELDS
) -> Matcher | None:
    """A predicate over objects for both selectors, or None when neither filters anything."""
    labels_req = parse_label_selector(label_selector or "")
    fields_req = [(fields.getters[name], operator, value)
                  for name, operator, value in parse_field_selector(field_selector or "", fields)]
    if not labels_req and not fields_req:
        return None

    def matches(obj: Mapping[str, Any]) -> bool:
        metadata = obj.get("metadata") or {}
        labels = metadata.get("labels") or {}
        if not all(req.matches(labels) for req in labels_req):
            return False
        return all((getter(obj) == value) == (operator == "=") for getter, operator, value in fields_req)

    return matches
