"""JSON for the API traffic: orjson where it can, the standard library where orjson refuses.

Every binding costs the scheduler about seven JSON documents of a few KiB: the three watch events of it (listed,
our spec write, our status write), the four answers to our writes, and the bodies we send. The standard
library parses such a body in ~40 us and serializes it in ~40 us on this project's machine; orjson takes
~15 us and ~2 us. orjson refuses a few documents the standard library takes (NaN and Infinity, which are not
JSON; integers beyond 64 bits or non-string keys when writing): those fall back to the standard library, so
what is accepted does not change. One difference remains: orjson reads an integer beyond 64 bits as a float.
The API server never sends one (Kubernetes integers are int64; a CRD's schema refuses anything larger).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text; `json.JSONDecodeError` (a ValueError) when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(bytes(data) if isinstance(data, memoryview) else data)


def dumps(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes (what `json.dumps(value, separators=(",", ":")).encode()` gives, up to
    the spelling of floats and of non-ASCII characters, which orjson writes unescaped)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode()


_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def dumps_indented(value: Any) -> str:
    """What `json.dumps(value, indent=2)` gives, byte for byte (non-ASCII characters escaped, as its default
    `ensure_ascii` does: outside strings JSON has none), written by orjson at a fraction of the time; the standard
    library where orjson refuses."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return json.dumps(value, indent=2)
    return _NON_ASCII.sub(_escaped, text)
