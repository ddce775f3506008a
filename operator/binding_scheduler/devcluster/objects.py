"""The rules of kube-apiserver's object semantics that need no store: timestamps, names, and what a write keeps."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

_NOW: list[Any] = [0, ""]  # (second, its RFC 3339 text): formatting costs more than the rest of a small write


def now_rfc3339() -> str:
    second = int(time.time())
    if second != _NOW[0]:
        _NOW[0], _NOW[1] = second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(_NOW[1])
