"""Objects deleted while the watches were down are forgotten once Kopf lists again (after 410 Gone), as an
informer's replace forgets them: no binding is placed on a deleted cluster, no deleted binding is retried."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    DUPLICATED,
    apply,
    binding_doc,
    binding_writes,
    cluster_doc,
    cluster_path,
    hold_watches,
    namespaces,
    rb_path,
    request,
    running_operator,
    scheduled,
    wait_until,
)

HISTORY = 8


@pytest.fixture
def api() -> Iterator[DevCluster]:
    with DevCluster.in_thread(history=HISTORY) as cluster:
        namespaces(cluster, "default", "karmada-system")
        yield cluster


def churn(api: DevCluster, count: int) -> None:
    """`count` unrelated writes, so that the watches' resume versions fall out of the retained history."""
    for i in range(count):
        status, _ = request(api, "POST", "/api/v1/namespaces/karmada-system/services",
                            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"churn-{i}"}})
        assert status == 201


def test_deletions_during_watch_gap_are_forgotten_after_relist(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("old", placement=DUPLICATED))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "old"), what="the first binding to be scheduled")
        hold_watches(api, "/clusters", "/resourcebindings")
        assert request(api, "DELETE", cluster_path("m2"))[0] == 200
        assert request(api, "DELETE", rb_path("old"))[0] == 200
        churn(api, HISTORY + 2)
        for fault in list(api.faults):
            fault.remove()
        service = operator.app.service
        assert service is not None
        wait_until(lambda: operator.call(lambda: service.scheduler.ctx.clusters.get("m2") is None),
                   what="the deleted cluster to leave the snapshot")
        apply(api, binding_doc("new", placement=DUPLICATED))
        body = wait_until(lambda: scheduled(api, "new"), what="the new binding to be scheduled")
        assert operator.call(lambda: service.scheduler.ctx.bindings.body("default/old")) is None
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 1}]
    old_writes = [(w.path.endswith("/status"), w.status) for w in binding_writes(api, "old")]
    # Its pass before the gap; after it at most one pass (requeued by the cluster's removal before the list of
    # bindings showed it gone) whose spec write got 404 and forgot it: nothing retried.
    assert old_writes in ([(False, 200), (True, 200)], [(False, 200), (True, 200), (False, 404)])
