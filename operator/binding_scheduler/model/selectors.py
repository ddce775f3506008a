"""Label selectors, field selectors, taints and tolerations: the matching rules Karmada uses on clusters."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ValidationError
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


_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_label_key(key: str) -> bool:
    """Kubernetes' `IsLabelKey` (a qualified name): an optional DNS-subdomain prefix and `/`, then a name of
    at most 63 alphanumerics, `-`, `_` or `.`, starting and ending with an alphanumeric."""
    parts = key.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or _DNS1123_SUBDOMAIN.fullmatch(prefix) is None:
            return False
    else:
        name = parts[0]
    return 0 < len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None


def is_label_value(value: str) -> bool:
    """Kubernetes' `IsValidLabelValue`: empty, or a label name of at most 63 characters."""
    return len(value) <= 63 and (not value or _LABEL_NAME.fullmatch(value) is not None)


def requirement_is_valid(key: str, operator: str, values: tuple[str, ...], operators: tuple[str, ...]) -> bool:
    """Whether Kubernetes builds this requirement (`labels.NewRequirement`, after the operator translation of
    `LabelSelectorAsSelector` / `NodeSelectorRequirementsAsSelector`): a known operator, a label key, values
    as the operator needs them (In/NotIn some, Exists/DoesNotExist none, Gt/Lt one int64), each a label value."""
    if operator not in operators or not is_label_key(key):
        return False
    if operator in ("In", "NotIn") and not values:
        return False
    if operator in ("Exists", "DoesNotExist") and values:
        return False
    if operator in ("Gt", "Lt") and (len(values) != 1 or _parse_int64(values[0]) is None):
        return False
    return all(is_label_value(v) for v in values)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `key operator values` expression, with Kubernetes label-requirement semantics.

    `valid` is False for an expression Kubernetes cannot turn into a selector requirement (an unknown
    operator, an invalid key or value, values that do not suit the operator). The API server stores such an
    expression (the CRDs do not check it), and Karmada's `ClusterMatches` then matches no cluster: the
    conversion fails and the affinity is taken as not matching. So does `matches` here.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()
    valid: bool = True

    def matches(self, labels: Mapping[str, str]) -> bool:
        if not self.valid:
            return False
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
    """An expression as the CRDs store it: `key` and `operator` must be there (strings), anything else is
    Kubernetes' to judge, as `Requirement.valid` (an invalid expression matches nothing; it is not refused:
    Karmada schedules such a binding, as NoClusterFit when nothing else matches)."""
    for required in ("key", "operator"):
        if not item.has(required):
            raise ValidationError(item.at(required), "is required")
    key, operator, values = item.text("key"), item.text("operator"), item.strings("values")
    return Requirement(key, operator, values, valid=requirement_is_valid(key, operator, values, operators))


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
    """A toleration as the CRDs store it: strings, checked no further. Kubernetes' pod validation (Exists takes
    no value, an empty key needs Exists, known operators and effects) does not run on a placement, and
    Karmada's policy validation only refuses Gt and Lt; Karmada then applies `ToleratesTaint` as it is, which
    `Toleration.tolerates` does (an Exists with a value tolerates, an unknown operator tolerates nothing)."""
    return Toleration(
        key=fields.text("key"),
        operator=fields.text("operator"),
        value=fields.text("value"),
        effect=fields.text("effect"),
        toleration_seconds=fields.integer("tolerationSeconds") if fields.has("tolerationSeconds") else None,
    )
