"""Go/Kubernetes duration strings (`3s`, `500ms`, `1m30s`, `1.5h`) as seconds."""

from __future__ import annotations

import re
from types import MappingProxyType

from .errors import ValidationError

_UNITS = MappingProxyType({"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0})
_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)")  # ASCII digits only, as Go


def parse_duration(text: str, path: str) -> float:
    """Seconds for a Go duration string; a bare `0` is allowed, negative durations are not."""
    value = text.strip()
    if value == "0":
        return 0.0
    position, total = 0, 0.0
    while position < len(value):
        match = _PART.match(value, position)
        if match is None:
            raise ValidationError(path, f"{text!r} is not a duration (examples: 3s, 500ms, 1m30s)")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not value:
        raise ValidationError(path, "empty duration")
    return total
