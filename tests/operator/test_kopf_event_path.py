"""Kopf's own event path (`event_path="kopf"`: where the running Kopf is not a release watch_guard was verified
against), proven on a few behaviours: the behaviour tests run once, on the default path, and these run again here
on Kopf's handlers (imported, so they are the same tests), beside what only this path does: the sync lists every
binding before the first pass, and a resync finds what was deleted while a watch was down."""

from __future__ import annotations

from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.operator import handlers
from tests.operator.test_bad_input import test_bad_binding_errs_warns_and_backs_off
from tests.operator.test_cluster_events import test_cluster_label_change_requeues_bindings_it_now_matches
from tests.operator.test_conflicts import test_spec_409_retries_without_backoff
from tests.operator.test_first_schedule import test_new_binding_is_scheduled_with_two_fenced_writes
from tests.operator.test_no_kopf_writes import test_every_write_is_lease_fenced_binding_write_or_our_event
from tests.operator.test_triggers import test_scaling_up_reschedules_with_scale_write
from tests.operator.test_writes import test_divided_binding_gets_exactly_two_writes
from testsupport.operator import harness
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    cluster_path,
    hold_watches,
    request,
    running_operator,
    scheduled,
    wait_until,
)

ON_KOPFS_PATH = (
    test_new_binding_is_scheduled_with_two_fenced_writes,
    test_every_write_is_lease_fenced_binding_write_or_our_event,
    test_divided_binding_gets_exactly_two_writes,
    test_spec_409_retries_without_backoff,
    test_scaling_up_reschedules_with_scale_write,
    test_cluster_label_change_requeues_bindings_it_now_matches,
    test_bad_binding_errs_warns_and_backs_off,
)
"""The behaviour tests run again on Kopf's path (pytest collects them in this module, under its fixture)."""


@pytest.fixture(autouse=True)
def kopf_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every operator this module starts runs on Kopf's own handlers."""
    monkeypatch.setattr(harness, "EVENT_PATH", "kopf")


def test_resync_forgets_cluster_deleted_unwatched(
    api: DevCluster, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handlers, "RESYNC_PERIOD", 0.2)
    apply(api, cluster_doc("m1"), cluster_doc("m2"))
    with running_operator(api, config_file) as operator:
        service = operator.app.service
        assert service is not None
        wait_until(lambda: sorted(service.scheduler.ctx.clusters.names()) == ["m1", "m2"], what="both clusters")
        held = hold_watches(api, "/clusters")
        assert request(api, "DELETE", cluster_path("m2"))[0] == 200
        wait_until(lambda: list(service.scheduler.ctx.clusters.names()) == ["m1"], what="the resync to forget m2")
        held.remove()


def test_on_kopfs_path_sync_lists_every_binding_before_first_pass(
    api: DevCluster, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handlers, "LIST_CHUNK", 1)
    apply(api, cluster_doc("m1"), binding_doc("first"), binding_doc("second"))
    with running_operator(api, config_file):
        wait_until(lambda: scheduled(api, "first") and scheduled(api, "second"), what="both to be scheduled")
    lists = [e for e in api.journal if e.path.endswith("/resourcebindings") and not e.is_watch]
    first_write = min(e.time for e in api.journal if e.is_write and "/resourcebindings/" in e.path)
    assert lists[0].query.get("limit") == "500" and lists[0].finished is not None
    assert lists[0].finished <= first_write
