"""Kubernetes resource quantities (`100m`, `1Gi`, `2e3`), exact, with Kubernetes' rounding rules."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from .errors import ValidationError, show
from .fields import FrozenMap

_PATTERN = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_BINARY = MappingProxyType({"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60})
_DECIMAL = MappingProxyType({
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
})
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")
# Bounds that keep parsing cheap: `1e999999999` would otherwise build a billion-digit integer, and Python refuses
# to convert numbers of more than 4300 digits from text. Real quantities are nowhere near either.
_MAX_TEXT = 100
_MAX_EXPONENT = 400


def _away_from_zero(value: Fraction) -> int:
    """Kubernetes' rounding of an inexact Value()/MilliValue(): up for positive amounts, down for negative ones
    (`-1500m` has Value() -2, not -1)."""
    if value >= 0:
        return -((-value.numerator) // value.denominator)
    return value.numerator // value.denominator


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact amount; `binary` tells whether it was written with a binary (Ki, Mi, ...) suffix."""

    amount: Fraction
    text: str
    binary: bool = False

    def value(self) -> int:
        """Whole units, rounded away from zero, like Kubernetes' `Quantity.Value()`."""
        return _away_from_zero(self.amount)

    def milli_value(self) -> int:
        """Thousandths, rounded away from zero, like Kubernetes' `Quantity.MilliValue()`."""
        return _away_from_zero(self.amount * 1000)

    def __str__(self) -> str:
        return self.text


def parse_quantity(value: Any, path: str) -> Quantity:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValidationError(path, f"expected a quantity, got {show(value)}")
    if isinstance(value, int) and value.bit_length() > 256:
        raise ValidationError(path, "the integer is too large for a quantity")
    text = str(value) if not isinstance(value, float) else repr(value)
    if len(text.strip()) > _MAX_TEXT:
        raise ValidationError(path, f"{show(text[:20] + '...')} is too long for a quantity")
    match = _PATTERN.match(text.strip())
    if match is None:
        raise ValidationError(path, f"{show(value)} is not a valid quantity")
    number, suffix = match.groups()
    amount = Fraction(number)
    binary = False
    if suffix in _BINARY:
        amount *= _BINARY[suffix]
        binary = True
    elif suffix in _DECIMAL:
        amount *= _DECIMAL[suffix]
    elif (exponent := _EXPONENT.match(suffix)) is not None:
        power = int(exponent.group(1))
        if abs(power) > _MAX_EXPONENT:
            raise ValidationError(path, f"{show(value)} has an exponent out of range")
        amount *= Fraction(10) ** power
    else:
        raise ValidationError(path, f"{show(value)} is not a valid quantity")
    return Quantity(amount=amount, text=text.strip(), binary=binary)


ResourceList = Mapping[str, Quantity]
EMPTY_RESOURCES: ResourceList = FrozenMap()


def parse_resource_list(value: Any, path: str) -> ResourceList:
    if value is None:
        return EMPTY_RESOURCES
    if not isinstance(value, Mapping):
        raise ValidationError(path, f"expected an object of quantities, got {show(value)}")
    return FrozenMap({str(k): parse_quantity(v, f"{path}.{k}") for k, v in value.items()})
