"""Label requirements, label selectors, taints and tolerations: Kubernetes' matching rules (reference 2.3)."""

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


def test_an_empty_selector_matches_everything() -> None:
    assert LabelSelector().matches({})


def test_a_selector_needs_every_match_label_and_every_expression() -> None:
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


def test_in_and_not_in_need_values() -> None:
    assert requirement_error({"key": "a", "operator": "NotIn"}) == "e.values: must be non-empty for operator NotIn"


def test_exists_and_does_not_exist_take_no_values() -> None:
    assert requirement_error({"key": "a", "operator": "DoesNotExist", "values": ["x"]}) == (
        "e.values: must be empty for operator DoesNotExist"
    )


def test_gt_and_lt_need_one_integer() -> None:
    assert requirement_error({"key": "a", "operator": "Lt", "values": ["1", "2"]}, NODE_SELECTOR_OPERATORS) == (
        "e.values: must hold exactly one integer for operator Lt"
    )
    assert requirement_error({"key": "a", "operator": "Gt", "values": ["x"]}, NODE_SELECTOR_OPERATORS) == (
        "e.values: must hold exactly one integer for operator Gt"
    )


def test_label_selectors_do_not_allow_gt() -> None:
    assert requirement_error({"key": "a", "operator": "Gt", "values": ["1"]}) == (
        "e.operator: 'Gt' is not one of In, NotIn, Exists, DoesNotExist"
    )


def test_a_requirement_needs_a_key() -> None:
    assert requirement_error({"operator": "Exists"}) == "e.key: is required"


def test_values_must_be_strings() -> None:
    assert requirement_error({"key": "a", "operator": "In", "values": [1]}) == "e.values[0]: expected a string, got 1"


# --- taints ------------------------------------------------------------------------------------------------


def test_a_taint_is_written_key_value_effect() -> None:
    assert str(Taint("dedicated", "NoSchedule", "gpu")) == "dedicated=gpu:NoSchedule"


def test_a_taint_without_value_is_written_key_effect() -> None:
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


def toleration_error(data: dict[str, object]) -> str:
    with pytest.raises(ValidationError) as caught:
        parse_toleration(Fields(data, "t"))
    return str(caught.value)


def test_an_empty_key_needs_exists() -> None:
    assert toleration_error({"operator": "Equal", "value": "v"}) == "t.operator: must be Exists when key is empty"


def test_exists_takes_no_value() -> None:
    assert toleration_error({"key": "k", "operator": "Exists", "value": "v"}) == (
        "t.value: must be empty when operator is Exists, got 'v'"
    )


def test_a_toleration_operator_is_exists_or_equal() -> None:
    assert toleration_error({"key": "k", "operator": "Gt"}) == "t.operator: 'Gt' is not one of Exists, Equal"


def test_a_toleration_effect_is_an_enum() -> None:
    assert toleration_error({"key": "k", "effect": "Never"}) == (
        "t.effect: 'Never' is not one of NoSchedule, PreferNoSchedule, NoExecute"
    )


def test_a_toleration_keeps_its_seconds_and_writes_back() -> None:
    toleration = parse_toleration(Fields({"key": "k", "operator": "Exists", "tolerationSeconds": 30}, "t"))
    assert toleration == Toleration("k", "Exists", "", "", 30)
    assert toleration.to_dict() == {"key": "k", "operator": "Exists", "tolerationSeconds": 30}
