"""Label requirements, label selectors, taints and tolerations: Kubernetes' matching rules."""

from __future__ import annotations

import pytest

from binding_scheduler.model import LabelSelector, Requirement, Taint, Toleration, ValidationError
from binding_scheduler.model.fields import Fields, FrozenMap
from binding_scheduler.model.selectors import (
    LABEL_OPERATORS,
    NODE_SELECTOR_OPERATORS,
    parse_requirement,
    parse_toleration,
)

LABELS = {"env": "prod", "size": "10"}


@pytest.mark.parametrize(
    ("key", "operator", "values", "matches"),
    [
        ("env", "In", ("prod", "dev"), True),
        ("env", "In", ("dev",), False),
        ("team", "In", ("a",), False),
        ("env", "NotIn", ("dev",), True),
        ("env", "NotIn", ("prod",), False),
        ("team", "NotIn", ("a",), True),
        ("env", "Exists", (), True),
        ("team", "Exists", (), False),
        ("env", "DoesNotExist", (), False),
        ("team", "DoesNotExist", (), True),
        ("size", "Gt", ("9",), True),
        ("size", "Gt", ("10",), False),
        ("size", "Lt", ("11",), True),
        ("size", "Lt", ("10",), False),
        ("env", "Gt", ("1",), False),
        ("team", "Gt", ("1",), False),
        ("size", "Gt", ("x",), False),
    ],
)
def test_requirement_matching(key: str, operator: str, values: tuple[str, ...], matches: bool) -> None:
    assert Requirement(key, operator, values).matches(LABELS) is matches


def test_empty_selector_matches_everything() -> None:
    assert LabelSelector().matches({})


def test_selector_needs_every_match_label_and_every_expression() -> None:
    selector = LabelSelector(FrozenMap({"env": "prod"}), (Requirement("size", "Exists"),))
    assert selector.matches(LABELS)
    assert not selector.matches({"env": "prod"})
    assert not selector.matches({"env": "dev", "size": "1"})


def test_selector_written_form_omits_empty_parts() -> None:
    assert LabelSelector().to_dict() == {}
    selector = LabelSelector(FrozenMap({"a": "b"}), (Requirement("c", "In", ("d",)),))
    assert selector.to_dict() == {
        "matchLabels": {"a": "b"},
        "matchExpressions": [{"key": "c", "operator": "In", "values": ["d"]}],
    }


def requirement_error(data: dict[str, object], operators: tuple[str, ...] = LABEL_OPERATORS) -> str:
    with pytest.raises(ValidationError) as caught:
        parse_requirement(Fields(data, "e"), operators)
    return str(caught.value)


@pytest.mark.parametrize(
    ("data", "operators"),
    [
        ({"key": "a", "operator": "NotIn"}, LABEL_OPERATORS),  # In and NotIn need values
        ({"key": "a", "operator": "In", "values": []}, NODE_SELECTOR_OPERATORS),
        ({"key": "a", "operator": "DoesNotExist", "values": ["x"]}, LABEL_OPERATORS),  # Exists takes none
        ({"key": "a", "operator": "Lt", "values": ["1", "2"]}, NODE_SELECTOR_OPERATORS),  # Gt/Lt: one integer
        ({"key": "a", "operator": "Gt", "values": ["x"]}, NODE_SELECTOR_OPERATORS),
        ({"key": "a", "operator": "Gt"}, NODE_SELECTOR_OPERATORS),
        ({"key": "a", "operator": "Gt", "values": ["-5"]}, NODE_SELECTOR_OPERATORS),  # an int64, not a label value
        ({"key": "a", "operator": "Gt", "values": ["1"]}, LABEL_OPERATORS),  # label selectors have no Gt
        ({"key": "a", "operator": "Inn", "values": ["x"]}, LABEL_OPERATORS),
        ({"key": "a", "operator": "", "values": ["x"]}, NODE_SELECTOR_OPERATORS),
        ({"key": "", "operator": "Exists"}, NODE_SELECTOR_OPERATORS),  # not a label key
        ({"key": "bad key", "operator": "DoesNotExist"}, LABEL_OPERATORS),
        ({"key": "/a", "operator": "DoesNotExist"}, LABEL_OPERATORS),
        ({"key": "a/b/c", "operator": "DoesNotExist"}, LABEL_OPERATORS),
        ({"key": "Example.com/a", "operator": "DoesNotExist"}, LABEL_OPERATORS),  # the prefix is lower case
        ({"key": "a" * 64, "operator": "DoesNotExist"}, LABEL_OPERATORS),
        ({"key": "a", "operator": "NotIn", "values": ["not valid!"]}, LABEL_OPERATORS),  # not a label value
        ({"key": "a", "operator": "NotIn", "values": ["x" * 64]}, LABEL_OPERATORS),
    ],
)
def test_unbuildable_expression_matches_nothing(
    data: dict[str, object], operators: tuple[str, ...]
) -> None:
    # The CRDs store it; Karmada's ClusterMatches fails to convert the selector and matches no cluster (so a
    # binding with it ends NoClusterFit, as Karmada's does), where NotIn/DoesNotExist would otherwise match.
    parsed = parse_requirement(Fields(data, "e"), operators)
    assert not parsed.valid
    assert not parsed.matches({})
    assert not parsed.matches({"a": "1", "x": "x"})


@pytest.mark.parametrize(
    ("key", "operator", "values"),
    [
        ("example.com/a-b_c.d", "DoesNotExist", ()),
        ("a", "NotIn", ("",)),  # an empty value is a label value
        ("a", "Gt", ("5",)),
        ("A1", "In", ("Z_z-9.0",)),
    ],
)
def test_expression_kubernetes_builds_is_valid(key: str, operator: str, values: tuple[str, ...]) -> None:
    data = {"key": key, "operator": operator, "values": list(values)}
    assert parse_requirement(Fields(data, "e"), NODE_SELECTOR_OPERATORS).valid


def test_requirement_needs_key() -> None:
    assert requirement_error({"operator": "Exists"}) == "e.key: is required"


def test_values_must_be_strings() -> None:
    assert requirement_error({"key": "a", "operator": "In", "values": [1]}) == "e.values[0]: expected a string, got 1"


# --- taints ------------------------------------------------------------------------------------------------


def test_taint_is_written_key_value_effect() -> None:
    assert str(Taint("dedicated", "NoSchedule", "gpu")) == "dedicated=gpu:NoSchedule"


def test_taint_without_value_is_written_key_effect() -> None:
    assert str(Taint("cluster.karmada.io/not-ready", "NoExecute")) == "cluster.karmada.io/not-ready:NoExecute"


# --- tolerations: Kubernetes' ToleratesTaint with the numeric operators disabled ----------------------------

TAINT = Taint("k", "NoSchedule", "v")


@pytest.mark.parametrize(
    ("toleration", "tolerates"),
    [
        (Toleration("k", "Equal", "v", "NoSchedule"), True),
        (Toleration("k", "", "v", "NoSchedule"), True),
        (Toleration("k", "Equal", "w", "NoSchedule"), False),
        (Toleration("k", "Equal", "v", ""), True),
        (Toleration("k", "Equal", "v", "NoExecute"), False),
        (Toleration("k", "Exists", "", ""), True),
        (Toleration("other", "Exists", "", ""), False),
        (Toleration("", "Exists", "", ""), True),
        (Toleration("", "Exists", "", "NoExecute"), False),
        (Toleration("k", "Gt", "1", ""), False),
        (Toleration("k", "Lt", "9", ""), False),
    ],
)
def test_toleration_matching(toleration: Toleration, tolerates: bool) -> None:
    assert toleration.tolerates(TAINT) is tolerates


@pytest.mark.parametrize(
    ("data", "tolerates"),
    [
        ({"key": "k", "operator": "Exists", "value": "other"}, True),  # Exists ignores the value
        ({"operator": "Equal", "value": "v"}, True),  # an empty key matches every key, then Equal compares
        ({"operator": "Equal", "value": "w"}, False),
        ({"key": "k", "operator": "Gt", "value": "1"}, False),  # comparison operators are off in Karmada
        ({"key": "k", "operator": "exists"}, False),  # an unknown operator tolerates nothing
        ({"key": "k", "effect": "Never", "value": "v"}, False),  # an effect no taint has
    ],
)
def test_invalid_pod_toleration_kept_as_karmada_does(
    data: dict[str, object], tolerates: bool
) -> None:
    # The CRDs store it and Karmada's policy validation only refuses Gt/Lt: Karmada's ToleratesTaint decides.
    # We used to refuse such a binding (found by the differential tests).
    assert parse_toleration(Fields(data, "t")).tolerates(TAINT) is tolerates


def test_toleration_fields_are_strings() -> None:
    with pytest.raises(ValidationError, match=r"t\.operator: expected a string, got 1"):
        parse_toleration(Fields({"key": "k", "operator": 1}, "t"))


def test_toleration_keeps_seconds_and_writes_back() -> None:
    toleration = parse_toleration(Fields({"key": "k", "operator": "Exists", "tolerationSeconds": 30}, "t"))
    assert toleration == Toleration("k", "Exists", "", "", 30)
    assert toleration.to_dict() == {"key": "k", "operator": "Exists", "tolerationSeconds": 30}
