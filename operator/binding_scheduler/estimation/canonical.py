"""Kubernetes' canonical text of a quantity (what `Quantity.String()` prints), which Karmada sends.

The rules, from the Kubernetes Quantity documentation:
- the format is kept: a binary suffix stays binary (BinarySI), `e<n>` stays an exponent (DecimalExponent),
  anything else is decimal (DecimalSI);
- values are rounded up (away from zero) to a whole number of nano-units;
- decimal forms print the integer mantissa with the largest exponent that is a multiple of 3
  (`0.5` -> `500m`, `2000` -> `2k`, `1.5G` -> `1500M`);
- binary forms print the largest power of 1024 that divides the value (`1024Mi` -> `1Gi`, `0.5Gi` -> `512Mi`,
  `1.5Ki` -> `1536`); a binary value below 1024 in magnitude, or not a whole number, prints in decimal form;
- zero is `0`.
"""

from __future__ import annotations

import re
from fractions import Fraction

from binding_scheduler.model import Quantity

_EXPONENT_SUFFIX = re.compile(r"[eE][+-]?[0-9]+$")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_NANO = 10**9


def _round_up_to_nanos(amount: Fraction) -> Fraction:
    scaled = abs(amount) * _NANO
    whole = -((-scaled.numerator) // scaled.denominator)
    return Fraction(whole if amount >= 0 else -whole, _NANO)


def _decimal(amount: Fraction, exponent_form: bool) -> str:
    sign = "-" if amount < 0 else ""
    mantissa = int(abs(amount) * _NANO)  # exact after rounding to nanos
    exponent = -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    if exponent_form:
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    while exponent > 18:
        mantissa *= 1000
        exponent -= 3
    return f"{sign}{mantissa}{_DECIMAL_SUFFIXES[exponent]}"


def _binary(value: int) -> str:
    sign = "-" if value < 0 else ""
    mantissa, power = abs(value), 0
    while mantissa % 1024 == 0 and power < 6:
        mantissa //= 1024
        power += 1
    return f"{sign}{mantissa}{_BINARY_SUFFIXES[power]}"


def canonical_quantity(quantity: Quantity) -> str:
    """The canonical text of `quantity`, e.g. `"0.5"` -> `"500m"`, `"1024Mi"` -> `"1Gi"`, `"1e3"` -> `"1e3"`."""
    amount = _round_up_to_nanos(quantity.amount)
    if amount == 0:
        return "0"
    if quantity.binary and abs(amount) >= 1024 and amount.denominator == 1:
        return _binary(int(amount))
    exponent_form = not quantity.binary and _EXPONENT_SUFFIX.search(quantity.text) is not None
    return _decimal(amount, exponent_form)
