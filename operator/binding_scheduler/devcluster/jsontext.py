"""JSON on devcluster's wire: orjson, with the standard library where orjson refuses a document.

Encoding and decoding were a third of devcluster's CPU under the scheduler's load (a binding over 800 clusters
is ~60 KiB of JSON, read once and written to every watcher). The standard library still reads what orjson
refuses (`NaN`, `Infinity`, numbers beyond a double), so what devcluster accepts does not change, and still
writes what orjson cannot (integers beyond 64 bits, non-string keys). devcluster keeps its own codec, not the
scheduler's (`binding_scheduler.kube.jsonio`): an emulator that shared the client's JSON quirks would hide them.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(raw: bytes | str) -> Any:
    """The JSON value of `raw`; the standard library's `ValueError` (or `RecursionError`) when it is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def dumps(value: Any) -> bytes:
    """Compact JSON text (non-ASCII characters as UTF-8, not escaped)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
