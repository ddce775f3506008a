"""What the fencing tests read from a write: the resourceVersion it was sent with, or a failure naming the write
that carries none (a bare `KeyError: 'metadata'` says nothing of what broke)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def fence(body: Mapping[str, Any] | None, write: object) -> str:
    """The `metadata.resourceVersion` precondition of the write whose body is `body` (`write` names it in the
    failure: a path, a journal entry)."""
    metadata = (body or {}).get("metadata")
    version = metadata.get("resourceVersion") if isinstance(metadata, Mapping) else None
    assert version, (f"{write} is not fenced: its body carries no metadata.resourceVersion "
                     f"({json.dumps(body, default=str)[:300]})")
    return str(version)
