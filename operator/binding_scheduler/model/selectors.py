"""Label selectors, field selectors, taints and tolerations: the matching rules Karmada uses on clusters."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ValidationError, show
from .fields import EMPTY_MAP, Fields

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Exists", "Equal")


_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int64(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 10, 64)`: ASCII digits with an optional sign, in int64 range.

    Python's `int()` would also take `1_000`, surrounding spaces and non-ASCII digits, and has no range.
    """
    if _INT64.fullmatch(text) is None:
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `key operator values` expression, with Kubernetes label-requirement semantics."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        op = self.operator
        if op == "In":
            return present and labels[self.key] in self.values
        if op == "NotIn":
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if not present or len(self.values) != 1:
            return False
        have, want = _parse_int64(labels[self.key]), _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want


def parse_requirement(item: Fields, operators: tuple[str, ...]) -> Requirement:
    key = item.required_str("key")
    operator = item.text("operator")
    if operator not in operators:
        raise ValidationError(item.at("operator"), f"{show(operator)} is not one of {', '.join(operators)}")
    values = item.strings("values")
    if operator in ("In", "NotIn") and not values:
        raise ValidationError(item.at("values"), f"must be non-empty for operator {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise ValidationError(item.at("values"), f"must be empty for operator {operator}")
    if operator in ("Gt", "Lt") and (len(values) != 1 or _parse_int64(values[0]) is None):
        raise ValidationError(item.at("values"), f"must hold exactly one integer for operator {operator}")
    return Requirement(key=key, operator=operator, values=values)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    match_labels: Mapping[str, str] = EMPTY_MAP
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, value in self.match_labels.items():
            if labels.get(key) != value:
                return False
        for requirement in self.match_expressions:  # noqa: SIM110 - a plain loop is faster on the hot path
            if not requirement.matches(labels):
                return False
        return True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.match_labels:
            out["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            out["matchExpressions"] = [requirement_to_dict(r) for r in self.match_expressions]
        return out


def requirement_to_dict(req: Requirement) -> dict[str, Any]:
    out: dict[str, Any] = {"key": req.key, "operator": req.operator}
    if req.values:
        out["values"] = list(req.values)
    return out


def parse_label_selector(fields: Fields) -> LabelSelector:
    return LabelSelector(
        match_labels=fields.string_map("matchLabels"),
        match_expressions=tuple(parse_requirement(e, LABEL_OPERATORS) for e in fields.objects("matchExpressions")),
    )


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    effect: str
    value: str = ""

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key}
        if self.value:
            out["value"] = self.value
        out["effect"] = self.effect
        return out


def parse_taint(fields: Fields) -> Taint:
    return Taint(
        key=fields.required_str("key"),
        effect=fields.enum("effect", TAINT_EFFECTS) or _missing(fields, "effect"),
        value=fields.text("value"),
    )


def _missing(fields: Fields, key: str) -> str:
    raise ValidationError(fields.at(key), "is required")


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes' `ToleratesTaint`, with the numeric operators disabled as Karmada calls it."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in (("key", self.key), ("operator", self.operator), ("value", self.value),
                            ("effect", self.effect)):
            if value:
                out[name] = value
        if self.toleration_seconds is not None:
            out["tolerationSeconds"] = self.toleration_seconds
        return out


def parse_toleration(fields: Fields) -> Toleration:
    operator = fields.enum("operator", TOLERATION_OPERATORS)
    key = fields.text("key")
    value = fields.text("value")
    if operator == "Exists" and value:
        raise ValidationError(fields.at("value"), f"must be empty when operator is Exists, got {show(value)}")
    if not key and operator != "Exists":
        raise ValidationError(fields.at("operator"), "must be Exists when key is empty")
    return Toleration(
        key=key,
        operator=operator,
        value=value,
        effect=fields.enum("effect", TAINT_EFFECTS),
        toleration_seconds=fields.integer("tolerationSeconds") if fields.has("tolerationSeconds") else None,
    )
