"""The real API server's journal: its audit log (JSON lines), read as a list of requests.

The server logs a request at up to three stages: `RequestReceived`, `ResponseStarted` (long-running requests
only: a watch's response starts streaming) and `ResponseComplete`. A watch completes only when its connection
ends, which may be long after the process that opened it has stopped; so a request counts as soon as its
response has started, and `pending` names the requests the server has received but not yet answered (a reader
that must see everything waits until none of those it cares about is left)."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass(frozen=True)
class AuditEntry:
    """One request as the API server recorded it when its response started (a watch) or completed."""

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
    agent: str = ""  # the client's User-Agent: its program's name first
    source: str = ""  # the client's address (the first of sourceIPs): a pod's IP tells pods apart

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


ANSWERED_STAGES = ("ResponseStarted", "ResponseComplete")


@dataclass(frozen=True)
class AuditLog:
    """The answered requests in the order the server answered them, and the ones it has not answered yet."""

    entries: list[AuditEntry]
    pending: list[AuditEntry]


def read(path: Path) -> list[AuditEntry]:
    """Every answered request in the audit log at `path`, once each, in the order the server answered them."""
    return read_log(path).entries


def read_log(path: Path) -> AuditLog:
    answered: dict[str, AuditEntry] = {}
    received: dict[str, AuditEntry] = {}
    if path.exists():
        text = path.read_text()
        complete = text if text.endswith("\n") else text[:text.rfind("\n") + 1]  # the server may be mid-line
        for line in complete.splitlines():
            if not line.strip():
                continue
            event = json.loads(line)
            audit_id = event.get("auditID", "")
            stage = event.get("stage")
            if stage in ANSWERED_STAGES:
                answered.setdefault(audit_id, _entry(event))
            elif stage == "RequestReceived":
                received.setdefault(audit_id, _entry(event))
    return AuditLog(
        entries=list(answered.values()),
        pending=[entry for audit_id, entry in received.items() if audit_id not in answered],
    )


def _entry(event: dict[str, Any]) -> AuditEntry:
    ref = event.get("objectRef") or {}
    return AuditEntry(
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
        agent=event.get("userAgent", ""),
        source=(event.get("sourceIPs") or [""])[0],
    )


def _seconds(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
