"""What the events come from, as one object the service is built with: what each kind of source can do."""

from __future__ import annotations

from binding_scheduler.scheduling.lifecycle.event_source import LISTED_AT_START, EventSource


def test_fast_path_reports_lists_and_names_failing_watches() -> None:
    source = EventSource.streamed(lambda: {"resourcebindings": 2, "clusters": 1})
    assert (source.reports_lists, source.resync_every) == (True, None)
    assert source.watch_problem() == "the watch of clusters, resourcebindings is failing"


def test_kopfs_own_path_reports_nothing_and_is_resynced() -> None:
    source = EventSource.resynced(300.0)
    assert (source.reports_lists, source.resync_every, source.watch_problem()) == (False, 300.0, None)


def test_sourceless_service_lists_at_start() -> None:
    assert (LISTED_AT_START.reports_lists, LISTED_AT_START.resync_every, LISTED_AT_START.watch_problem()) == (
        False, None, None)
