"""Which event path runs, and what it says; the fast path's page-by-page start. What Kopf's own path does is
proven in test_kopf_event_path.py."""

from __future__ import annotations

import logging

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.operator import handlers, watch_guard
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    cluster_doc,
    running_operator,
    scheduled,
    wait_until,
)

HANDLERS = "binding_scheduler.operator.handlers"


def path_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == HANDLERS and r.levelno >= logging.INFO]


def test_unverified_kopf_runs_on_kopfs_handlers_and_says_so(
    api: DevCluster, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch_guard, "VERIFIED_KOPF", frozenset({"0.0.1"}))
    caplog.set_level(logging.INFO, logger=HANDLERS)
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=2))
    with running_operator(api, event_path="auto") as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled through Kopf's handlers")
        failing = operator.app.event_source.failing_watches()
    assert path_lines(caplog) == [
        "event path: Kopf's handlers (kopf 1.45.2 is not a release it was verified against (0.0.1)): slower per "
        "event, and a resync every 300s finds what was deleted while a watch was down"]
    assert failing == {}  # no watch_guard to count failures on this path


def test_fast_path_runs_on_verified_kopf(
    api: DevCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=HANDLERS)
    with running_operator(api, event_path="auto") as operator:
        service = operator.app.service
        assert service is not None and service.event_source.resync_every is None
    assert watch_guard.unsupported() is None
    assert path_lines(caplog) == []


def test_fast_path_schedules_each_page_as_listed(
    api: DevCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handlers, "LIST_CHUNK", 1)
    apply(api, cluster_doc("m1"), binding_doc("first"), binding_doc("second"))
    rest_of_the_list = api.faults.add(method="GET", path=r"/resourcebindings$", query=r"continue=", hang=True)
    operator = OperatorThread(api, event_path="auto").start()
    try:
        wait_until(lambda: scheduled(api, "first"), what="the first page's binding to be scheduled")
        second_meanwhile = scheduled(api, "second")
        held = [e for e in api.journal if e.path.endswith("/resourcebindings") and e.status == 0]
        rest_of_the_list.release()
        wait_until(lambda: scheduled(api, "second"), what="the second page's binding to be scheduled")
    finally:
        rest_of_the_list.remove()
        assert operator.stop() == 0
    assert second_meanwhile is None
    assert [(e.query.get("limit"), "continue" in e.query) for e in held] == [("1", True)]
    our_lists = [e for e in api.journal if e.path.endswith("/resourcebindings") and e.query.get("limit") == "500"]
    assert our_lists == []  # the service's sync listed only the clusters
