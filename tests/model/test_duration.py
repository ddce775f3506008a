"""Go duration strings as seconds."""

from __future__ import annotations

import pytest

from binding_scheduler.model import ValidationError
from binding_scheduler.model.duration import parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0.0),
        ("3s", 3.0),
        ("500ms", 0.5),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        ("2h45m", 9900.0),
        (".5s", 0.5),
        ("100us", 1e-4),
        ("100µs", 1e-4),
        ("10ns", 1e-8),
        (" 2s ", 2.0),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, "d") == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["1", "1d", "-1s", "s", "1h2", "1 s", "1.2.3s", "١s"])
def test_invalid_durations_name_field(text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_duration(text, "spec.drainTimeout")
    assert str(caught.value) == f"spec.drainTimeout: {text!r} is not a duration (examples: 3s, 500ms, 1m30s)"


def test_empty_duration_is_rejected() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_duration("", "d")
    assert str(caught.value) == "d: empty duration"
