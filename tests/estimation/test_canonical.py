"""The canonical quantity text Karmada sends (Kubernetes' Quantity.String())."""

from __future__ import annotations

import pytest

from binding_scheduler.estimation import canonical_quantity
from binding_scheduler.model import parse_quantity


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("0.5", "500m"),
        ("1024Mi", "1Gi"),
        ("100m", "100m"),
        ("2", "2"),
        ("2000", "2k"),
        ("1000m", "1"),
        ("1.5G", "1500M"),
        ("1.5", "1500m"),
        ("0", "0"),
        ("0Gi", "0"),
        ("0.5Gi", "512Mi"),
        ("1536Mi", "1536Mi"),
        ("1.5Ki", "1536"),
        ("512", "512"),
        ("0.5Ki", "512"),
        ("1e3", "1e3"),
        ("1.5e3", "1500"),
        ("129e6", "129e6"),
        ("129M", "129M"),
        ("128974848", "128974848"),
        ("123Mi", "123Mi"),
        ("0.1n", "1n"),
        ("-0.5", "-500m"),
        ("1E", "1E"),
    ],
)
def test_canonical_text(written: str, canonical: str) -> None:
    assert canonical_quantity(parse_quantity(written, "q")) == canonical
