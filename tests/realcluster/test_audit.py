"""The audit reader: a request counts once, as soon as the server has answered it (a watch when its response
starts, long before its connection ends); a request received and not yet answered is pending."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testsupport.realcluster import audit


def event(audit_id: str, stage: str, verb: str = "watch", code: int | None = 200) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "auditID": audit_id, "stage": stage, "verb": verb, "requestURI": f"/apis/x/{audit_id}",
        "user": {"username": "scheduler"}, "objectRef": {"apiGroup": "cluster.karmada.io", "resource": "clusters"},
        "requestReceivedTimestamp": "2026-12-03T08:00:00.000000Z",
    }
    if code is not None:
        entry["responseStatus"] = {"code": code}
    return entry


def write(path: Path, *events: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_started_watch_counts_before_it_ends(tmp_path: Path) -> None:
    log = audit.read_log(write(tmp_path / "audit.log", event("w", "RequestReceived", code=None),
                               event("w", "ResponseStarted")))
    assert [(e.verb, e.permission, e.code) for e in log.entries] == [
        ("watch", ("watch", "cluster.karmada.io", "clusters"), 200)]
    assert log.pending == []


def test_request_logged_at_two_stages_counts_once(tmp_path: Path) -> None:
    log = audit.read_log(write(tmp_path / "audit.log", event("w", "RequestReceived", code=None),
                               event("w", "ResponseStarted"), event("w", "ResponseComplete")))
    assert len(log.entries) == 1


def test_request_received_and_not_answered_is_pending(tmp_path: Path) -> None:
    log = audit.read_log(write(tmp_path / "audit.log", event("g", "RequestReceived", verb="get", code=None),
                               event("p", "RequestReceived", verb="patch", code=None),
                               event("p", "ResponseComplete", verb="patch", code=409)))
    assert [e.verb for e in log.pending] == ["get"]
    assert [(e.verb, e.code) for e in log.entries] == [("patch", 409)]


def test_entries_are_in_order_server_answered_them(tmp_path: Path) -> None:
    log = audit.read_log(write(tmp_path / "audit.log", event("a", "RequestReceived", code=None),
                               event("b", "RequestReceived", code=None), event("b", "ResponseComplete"),
                               event("a", "ResponseComplete")))
    assert [e.uri for e in log.entries] == ["/apis/x/b", "/apis/x/a"]


def test_missing_log_is_empty(tmp_path: Path) -> None:
    assert audit.read(tmp_path / "none.log") == []
