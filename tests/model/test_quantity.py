"""Kubernetes quantities: exact amounts, rounding up like `Value()` / `MilliValue()`, and exact errors."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from binding_scheduler.model import ValidationError, parse_quantity
from binding_scheduler.model.quantity import parse_resource_list


@pytest.mark.parametrize(
    ("text", "amount", "binary"),
    [
        ("1", Fraction(1), False),
        ("100m", Fraction(1, 10), False),
        ("1.5", Fraction(3, 2), False),
        (".5", Fraction(1, 2), False),
        ("250u", Fraction(1, 4000), False),
        ("5n", Fraction(5, 10**9), False),
        ("2k", Fraction(2000), False),
        ("3M", Fraction(3 * 10**6), False),
        ("1G", Fraction(10**9), False),
        ("1T", Fraction(10**12), False),
        ("1P", Fraction(10**15), False),
        ("1E", Fraction(10**18), False),
        ("1Ki", Fraction(1024), True),
        ("1Mi", Fraction(2**20), True),
        ("1.5Gi", Fraction(3 * 2**29), True),
        ("1Ti", Fraction(2**40), True),
        ("1Pi", Fraction(2**50), True),
        ("1Ei", Fraction(2**60), True),
        ("1e3", Fraction(1000), False),
        ("1E3", Fraction(1000), False),
        ("12e-3", Fraction(12, 1000), False),
        ("+4", Fraction(4), False),
        ("-4", Fraction(-4), False),
        ("0", Fraction(0), False),
    ],
)
def test_quantity_amounts(text: str, amount: Fraction, binary: bool) -> None:
    quantity = parse_quantity(text, "q")
    assert (quantity.amount, quantity.binary, str(quantity)) == (amount, binary, text)


def test_json_numbers_are_quantities() -> None:
    assert parse_quantity(2, "q").amount == 2
    assert parse_quantity(0.5, "q").amount == Fraction(1, 2)


@pytest.mark.parametrize(("text", "value", "milli"), [("100m", 1, 100), ("1", 1, 1000), ("1500m", 2, 1500),
                                                       ("1n", 1, 1), ("-1500m", -2, -1500), ("1Ki", 1024, 1024000),
                                                       ("-1n", -1, -1), ("-2", -2, -2000)])
def test_value_and_milli_value_round_away_from_zero(text: str, value: int, milli: int) -> None:
    quantity = parse_quantity(text, "q")
    assert (quantity.value(), quantity.milli_value()) == (value, milli)


@pytest.mark.parametrize("text", ["", "Ki", "1K", "1 Ki", "1.5.5", "0x10", "e3", "1e", "one", "1_000", "١"])
def test_invalid_quantities(text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_quantity(text, "spec.cpu")
    assert str(caught.value) == f"spec.cpu: {text!r} is not a valid quantity"


@pytest.mark.parametrize(("value", "shown"), [(True, "true"), (None, "null"), ([1], "list"), ({"a": 1}, "dict")])
def test_non_quantities(value: Any, shown: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_quantity(value, "q")
    assert str(caught.value) == f"q: expected a quantity, got {shown}"


def test_huge_exponent_is_rejected_at_once() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_quantity("1e999999999", "q")
    assert str(caught.value) == "q: '1e999999999' has an exponent out of range"


def test_very_long_quantity_is_rejected() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_quantity("1" * 5000, "q")
    assert str(caught.value) == "q: '11111111111111111111...' is too long for a quantity"


def test_huge_integer_is_rejected() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_quantity(10**5000, "q")
    assert str(caught.value) == "q: the integer is too large for a quantity"


def test_resource_list_maps_names_to_quantities() -> None:
    resources = parse_resource_list({"cpu": "2", "memory": "1Gi"}, "r")
    assert {k: v.value() for k, v in resources.items()} == {"cpu": 2, "memory": 2**30}


def test_absent_resource_list_is_empty() -> None:
    assert dict(parse_resource_list(None, "r")) == {}


def test_resource_list_must_be_object() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_resource_list(["cpu"], "spec.replicaRequirements.resourceRequest")
    assert str(caught.value) == "spec.replicaRequirements.resourceRequest: expected an object of quantities, got list"
