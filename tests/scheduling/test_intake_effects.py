"""What intake does besides queueing: the priority an event queues a binding with, the
workload groups index fed by every event, assumptions released when a workload turns Healthy, a version that
does not end the wait after a 409, bodies placed on a cluster that is gone, and the requeue task's name and
bookkeeping."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from binding_scheduler.model import Binding, TargetCluster
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.observability.labels import PassOutcome
from binding_scheduler.scheduling.state.workload_groups import WorkloadGroupIndex
from tests.scheduling.test_intake import body, events_counted, make_scheduler, queued, with_small_slices
from testsupport.builders import cluster

RUNTIME = "binding_scheduler.scheduling.lifecycle.runtime"


def test_new_binding_is_queued_by_schedule_priority() -> None:
    scheduler = make_scheduler()
    scheduler.on_binding(body("a-none"))
    scheduler.on_binding(body("b-one", priority=1))
    scheduler.on_binding(body("c-five", priority=5))
    assert queued(scheduler) == ["default/c-five", "default/b-one", "default/a-none"]


@pytest.mark.parametrize("priority", ["9", 1.5])
def test_schedule_priority_that_is_not_integer_counts_as_zero(priority: object) -> None:
    scheduler = make_scheduler()
    scheduler.on_binding(body("a-none"))
    odd = body("b-odd")
    odd["spec"]["schedulePriority"] = {"priority": priority}
    scheduler.on_binding(odd)
    scheduler.on_binding(body("c-minus", priority=-1))
    assert queued(scheduler) == ["default/a-none", "default/b-odd", "default/c-minus"]


def test_newly_filtered_in_binding_is_added() -> None:
    scheduler = make_scheduler()
    unlabelled = body("web")
    unlabelled["metadata"]["labels"] = {}
    scheduler.on_binding(unlabelled)
    assert queued(scheduler) == []

    scheduler.on_binding(body("web", version="2"))

    assert queued(scheduler) == ["default/web"]
    assert events_counted(scheduler, "BindingAdd") == 1


def grouped(name: str, group: str) -> dict[str, Any]:
    doc = body(name)
    doc["spec"]["workloadAffinityGroups"] = {"affinityGroup": group}
    return doc


def with_groups() -> tuple[Scheduler, WorkloadGroupIndex]:
    scheduler = make_scheduler()
    index = WorkloadGroupIndex()
    scheduler.ctx.workload_groups = index
    return scheduler, index


def test_groups_index_follows_store() -> None:
    scheduler, index = with_groups()
    scheduler.on_binding(grouped("a", "g"))
    scheduler.on_binding(grouped("b", "g"))
    stored = [m.name for m in index.affinity_members("g")]

    scheduler.on_binding_deleted(grouped("a", "g"))

    assert stored == ["a", "b"]
    assert [m.name for m in index.affinity_members("g")] == ["b"]


def test_missing_binding_leaves_groups_index() -> None:
    scheduler, index = with_groups()
    kept = grouped("kept", "g")
    scheduler.on_binding(kept)
    scheduler.on_binding(grouped("gone", "g"))

    scheduler.on_bindings_relisted(True, [kept])

    assert [m.name for m in index.affinity_members("g")] == ["kept"]


def test_binding_missing_from_complete_list_leaves_queue() -> None:
    scheduler = make_scheduler()
    scheduler.on_binding(body("gone"))
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.queue.done(info)
    scheduler.queue.push_backoff(info)

    scheduler.on_bindings_relisted(True, [])

    assert scheduler.queue.where("default/gone") is None


def test_unfit_binding_missing_from_list_is_not_waiting_for_api(
) -> None:
    scheduler = make_scheduler(cluster("m1", apis=[]))
    scheduler.on_binding(body("web"))
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.queue.done(info)
    scheduler._route(info, PassOutcome.NO_CLUSTER_FIT, "1")  # its NoClusterFit status event not seen yet
    scheduler.on_bindings_relisted(True, [])
    scheduled = {"schedulerObservedGeneration": 1,
                 "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": "x"}]}
    scheduler.on_binding(body("web", version="5", status=scheduled, on=("m1",)))  # created again, scheduled
    queued(scheduler)

    scheduler.on_cluster(cluster("m1"))  # now it serves Deployments

    assert queued(scheduler) == []


def assume_on(scheduler: Scheduler, key: str, *names: str) -> None:
    parsed = scheduler.ctx.bindings.parsed(key)
    assert isinstance(parsed, Binding)
    scheduler.ctx.assumptions.assume(parsed, [TargetCluster(name, 1) for name in names], False)


def healthy_on(doc: dict[str, Any], *names: str) -> dict[str, Any]:
    doc["status"] = {"aggregatedStatus": [{"clusterName": name, "health": "Healthy"} for name in names]}
    return doc


def test_healthy_workload_releases_that_cluster() -> None:
    scheduler = make_scheduler(cluster("m1"), cluster("m2"))
    scheduler.on_binding(body("web", on=("m1", "m2")))
    assume_on(scheduler, "default/web", "m1", "m2")

    scheduler.on_binding(healthy_on(body("web", version="2", on=("m1", "m2")), "m1"))

    assert list(scheduler.ctx.assumptions.assumed_on("m1")) == []
    assert list(scheduler.ctx.assumptions.assumed_on("m2")) == ["default/web"]


def test_healthy_workload_keeps_newer_assumption() -> None:
    scheduler = make_scheduler(cluster("m1"))
    scheduler.on_binding(healthy_on(body("web", on=("m1",)), "m1"))
    assume_on(scheduler, "default/web", "m1")

    scheduler.on_binding(healthy_on(body("web", version="2", on=("m1",)), "m1"))

    assert list(scheduler.ctx.assumptions.assumed_on("m1")) == ["default/web"]


def test_binding_missing_from_list_gives_back_assumed() -> None:
    scheduler = make_scheduler(cluster("m1"))
    kept = body("kept", on=("m1",))
    scheduler.on_binding(kept)
    scheduler.on_binding(body("gone", on=("m1",)))
    assume_on(scheduler, "default/kept", "m1")
    assume_on(scheduler, "default/gone", "m1")

    scheduler.on_bindings_relisted(True, [kept])

    assert list(scheduler.ctx.assumptions.assumed_on("m1")) == ["default/kept"]


def test_wait_ends_on_newer_event_not_refused_one() -> None:
    scheduler = make_scheduler()
    scheduler.on_binding(body("web", version="5"))
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.queue.done(info)
    scheduler.queue.requeue_when_newer(info, "5", "5")

    scheduler.on_binding(body("web", version="5"))
    waiting = queued(scheduler)
    scheduler.on_binding(body("web", version="6"))

    assert waiting == []
    assert queued(scheduler) == ["default/web"]


def test_body_on_gone_cluster_queued_as_change() -> None:
    scheduler = make_scheduler(cluster("m1"))
    scheduler.on_binding(body("web", on=("m1",)))
    queued(scheduler)

    scheduler.on_binding(body("web", version="2", on=("m9",)))  # same generation: only the placement tells

    assert queued(scheduler) == ["default/web"]
    assert events_counted(scheduler, "ClusterChanged") == 1


def test_own_write_onto_removed_cluster_is_requeued() -> None:
    scheduler = make_scheduler(cluster("m1"))
    scheduler.on_binding(body("web", on=("m1",)))
    queued(scheduler)
    scheduler.ctx.bindings.wrote("default/web", 2)

    scheduler.on_binding(body("web", generation=2, version="2", on=("m9",)))

    assert queued(scheduler) == ["default/web"]
    assert events_counted(scheduler, "ClusterChanged") == 1


def test_invalid_cluster_kept_with_error_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    scheduler = make_scheduler(cluster("m1"), cluster("m2"))
    broken = cluster("m2")
    broken["spec"]["taints"] = [{"key": "x", "effect": "Sometimes"}]

    with caplog.at_level(logging.ERROR, logger=RUNTIME):
        scheduler.on_cluster(broken)

    error = scheduler.ctx.clusters.invalid["m2"]
    assert "spec.taints[0].effect" in str(error)
    assert [r.getMessage() for r in caplog.records if r.name == RUNTIME] == [
        f"cluster m2 is invalid and is left out of scheduling: {error}"]


def test_deleted_cluster_counts_requeues() -> None:
    scheduler = make_scheduler(cluster("m1"), cluster("m2"))
    scheduler.on_binding(body("a", on=("m2",)))
    scheduler.on_binding(body("b", on=("m2",)))
    queued(scheduler)

    scheduler.on_cluster_deleted(cluster("m2"))

    assert events_counted(scheduler, "ClusterChanged") == 2


@pytest.mark.parametrize(("change", "task"), [
    ("labels", "requeue-for-m1"),
    ("deleted", "requeue-off-m1"),
])
async def test_slice_requeue_task_is_named_after_cluster(
    monkeypatch: pytest.MonkeyPatch, change: str, task: str
) -> None:
    scheduler = with_small_slices(monkeypatch, [cluster("m1", labels={"tier": "gold"}), cluster("m2")],
                                  [body(f"b{index}", on=("m1",)) for index in range(5)])

    if change == "labels":
        scheduler.on_cluster(cluster("m1", labels={"tier": "silver"}))
    else:
        scheduler.on_cluster_deleted(cluster("m1"))
    names = {t.get_name() for t in scheduler._requeues}
    async with asyncio.timeout(5):
        await asyncio.gather(*scheduler._requeues)
    await asyncio.sleep(0)  # the done callbacks

    assert names == {task}
    assert scheduler._requeues == set()
    assert len(queued(scheduler)) == 5


async def test_one_slice_requeued_without_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scheduler = with_small_slices(monkeypatch, [cluster("m1", labels={"tier": "gold"})],
                                  [body(f"b{index}") for index in range(2)])

    scheduler.on_cluster(cluster("m1", labels={"tier": "silver"}))

    assert scheduler._requeues == set()
    assert queued(scheduler) == ["default/b0", "default/b1"]


def test_loopless_requeue_runs_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scheduler = with_small_slices(monkeypatch, [cluster("m1", labels={"tier": "gold"})],
                                  [body(f"b{index}") for index in range(5)])

    scheduler.on_cluster(cluster("m1", labels={"tier": "silver"}))

    assert queued(scheduler) == [f"default/b{index}" for index in range(5)]
