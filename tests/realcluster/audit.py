"""The real API server's journal: its audit log (JSON lines), read as a list of requests."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass(frozen=True)
class AuditEntry:
    """One request as the API server recorded it when its response completed."""

    verb: str
    user: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    uri: str
    code: int
    received: float  # requestReceivedTimestamp, seconds since the epoch
    body: Any

    @property
    def is_write(self) -> bool:
        return self.verb in WRITE_VERBS

    @property
    def permission(self) -> tuple[str, str, str]:
        """(verb, group, resource[/subresource]) as an RBAC rule names it."""
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        return self.verb, self.group, resource

    def __str__(self) -> str:
        return f"{self.verb} {self.uri} {self.code}"


def read(path: Path) -> list[AuditEntry]:
    """Every completed request in the audit log at `path`, in the order the server finished them."""
    entries = []
    if not path.exists():
        return entries
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        if event.get("stage") != "ResponseComplete":
            continue
        ref = event.get("objectRef") or {}
        entries.append(
            AuditEntry(
                verb=event.get("verb", ""),
                user=(event.get("user") or {}).get("username", ""),
                group=ref.get("apiGroup", ""),
                resource=ref.get("resource", ""),
                subresource=ref.get("subresource", ""),
                namespace=ref.get("namespace", ""),
                name=ref.get("name", ""),
                uri=event.get("requestURI", ""),
                code=int((event.get("responseStatus") or {}).get("code", 0)),
                received=_seconds(event["requestReceivedTimestamp"]),
                body=event.get("requestObject"),
            )
        )
    return entries


def _seconds(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
