"""Intake at the runtime level (Karmada's informer rules, pkg/scheduler/event_handler.go: addAllEventHandlers and
enqueueAffectedBindings): which events queue which bindings, with which priority, and what deletions and complete lists
forget. No operator, no emulator: the events are handed to the Scheduler as Kopf would, and the queue is read back."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.model import ValidationError, parse_cluster
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.lifecycle.stop_report import DrainReport
from binding_scheduler.scheduling.observability.labels import PassOutcome
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster, placement

POLICY = {"propagationpolicy.karmada.io/permanent-id": "p"}


class Events:
    async def record(self, *_: Any) -> None:
        return None


def make_scheduler(*clusters: dict[str, Any]) -> Scheduler:
    fleet = ClusterStore()
    for body in clusters or (cluster("m1"),):
        fleet.upsert(parse_cluster(body))
    metrics = SchedulerMetrics()
    ctx = PassContext(client=None, events=Events(), bindings=BindingStore(), clusters=fleet, metrics=metrics)
    settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins())
    return Scheduler(ctx, settings, queue=SchedulingQueue(), metrics=metrics)


def body(name: str, *, generation: int = 1, version: str = "1", priority: int = 0, on: tuple[str, ...] = (),
         affinity: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """A binding that passes the event filter (it has a policy label), at `generation`, placed `on` clusters."""
    out = binding(name, replicas=1, placement=placement(affinity=affinity), generation=generation,
                  clusters=list(on) if on else None)
    out["metadata"].update(labels=dict(POLICY), resourceVersion=version)
    if priority:
        out["spec"]["schedulePriority"] = {"priority": priority}
    if status is not None:
        out["status"] = status
    return out


def queued(scheduler: Scheduler) -> list[str]:
    """Pop every key the active queue holds, in hand-out order (priority first)."""
    keys = []
    while (info := scheduler.queue.pop_nowait()) is not None:
        keys.append(info.key)
        scheduler.queue.done(info)
    return keys


def events_counted(scheduler: Scheduler, event: str) -> float:
    value = scheduler.metrics.registry.get_sample_value(
        "karmada_scheduler_queue_incoming_bindings_total", {"event": event})
    return value or 0.0


def with_small_slices(monkeypatch: pytest.MonkeyPatch, clusters: list[dict[str, Any]],
                      bindings: list[dict[str, Any]]) -> Scheduler:
    """A scheduler whose requeues run 2 bindings at a time, with `bindings` stored and their first passes taken."""
    monkeypatch.setattr("binding_scheduler.scheduling.lifecycle.runtime.REQUEUE_SLICE", 2)
    scheduler = make_scheduler(*clusters)
    for item in bindings:
        scheduler.on_binding(item)
    queued(scheduler)
    return scheduler


def test_only_generation_change_queues() -> None:
    scheduler = make_scheduler()
    scheduler.on_binding(body("web"))
    assert queued(scheduler) == ["default/web"]
    scheduler.on_binding(body("web", version="2", status={"schedulerObservedGeneration": 1}))
    assert queued(scheduler) == []
    scheduler.on_binding(body("web", generation=2, version="3"))
    assert queued(scheduler) == ["default/web"]
    assert (events_counted(scheduler, "BindingAdd"), events_counted(scheduler, "BindingUpdate")) == (1, 1)


def test_label_change_requeues_old_and_new_matches() -> None:
    scheduler = make_scheduler(cluster("m1", labels={"tier": "gold"}), cluster("m2"))
    gold = {"labelSelector": {"matchLabels": {"tier": "gold"}}}
    silver = {"labelSelector": {"matchLabels": {"tier": "silver"}}}
    scheduler.on_binding(body("a-gold", affinity=gold))
    scheduler.on_binding(body("b-silver", affinity=silver, priority=5))
    scheduler.on_binding(body("c-m2", affinity={"clusterNames": ["m2"]}))
    queued(scheduler)

    scheduler.on_cluster(cluster("m1", labels={"tier": "silver"}))

    assert queued(scheduler) == ["default/b-silver", "default/a-gold"]
    assert events_counted(scheduler, "ClusterChanged") == 2


def test_status_only_cluster_change_requeues_nothing() -> None:
    scheduler = make_scheduler()
    scheduler.on_binding(body("web"))
    queued(scheduler)
    scheduler.on_cluster(cluster("m1", allocatable={"pods": "5"}))
    assert queued(scheduler) == []


def test_cluster_gaining_api_requeues_only_unfit() -> None:
    scheduler = make_scheduler(cluster("m1", apis=[]))
    no_fit = {"conditions": [{"type": "Scheduled", "status": "False", "reason": "NoClusterFit", "message": "x"}]}
    error = {"conditions": [{"type": "Scheduled", "status": "False", "reason": "SchedulerError", "message": "x"}]}
    scheduler.on_binding(body("waits", status=no_fit))
    scheduler.on_binding(body("erred", status=error))
    queued(scheduler)

    scheduler.on_cluster(cluster("m1"))  # now it serves Deployments

    assert queued(scheduler) == ["default/waits"]


def test_recreated_binding_is_not_waiting_for_api() -> None:
    scheduler = make_scheduler(cluster("m1", apis=[]))
    scheduler.on_binding(body("web"))
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.queue.done(info)
    scheduler._route(info, PassOutcome.NO_CLUSTER_FIT, "1")  # its NoClusterFit status event not seen yet
    scheduler.on_binding_deleted(body("web"))
    scheduled = {"schedulerObservedGeneration": 1,
                 "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": "x"}]}
    scheduler.on_binding(body("web", version="5", status=scheduled, on=("m1",)))
    queued(scheduler)

    scheduler.on_cluster(cluster("m1"))  # now it serves Deployments

    assert queued(scheduler) == []


def test_invalid_cluster_left_out_of_snapshot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    scheduler = make_scheduler(cluster("m1"), cluster("m2"))
    scheduler.on_binding(body("web"))
    queued(scheduler)
    broken = cluster("m2")
    broken["spec"]["taints"] = [{"key": "x", "effect": "Sometimes"}]

    scheduler.on_cluster(broken)

    assert queued(scheduler) == []
    assert list(scheduler.ctx.clusters.invalid) == ["m2"]
    assert [c.name for c in scheduler.ctx.clusters.snapshot().clusters] == ["m1"]
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage().startswith("cluster m2 is invalid and is left out of scheduling: ")


def test_deleted_cluster_queues_its_bindings_by_priority() -> None:
    scheduler = make_scheduler(cluster("m1"), cluster("m2"))
    scheduler.on_binding(body("a-elsewhere", on=("m1",)))
    scheduler.on_binding(body("b-low", on=("m2",)))
    scheduler.on_binding(body("c-high", on=("m1", "m2"), priority=7))
    unlabelled = body("d-no-policy", on=("m2",))
    unlabelled["metadata"]["labels"] = {}
    scheduler.on_binding(unlabelled)
    queued(scheduler)

    scheduler.on_cluster_deleted(cluster("m2"))

    assert scheduler.ctx.clusters.names() == ["m1"]
    assert queued(scheduler) == ["default/c-high", "default/b-low"]


def test_deleted_binding_forgotten_everywhere() -> None:
    scheduler = make_scheduler()
    scheduler.on_binding(body("web"))
    (info,) = [scheduler.queue.pop_nowait()]
    assert info is not None
    scheduler.queue.done(info)
    scheduler.queue.push_backoff(info)
    assert scheduler.queue.where("default/web") == "backoff"

    scheduler.on_binding_deleted(body("web"))

    assert scheduler.ctx.bindings.body("default/web") is None
    assert scheduler.queue.where("default/web") is None


def test_complete_list_forgets_bindings_of_its_kind_it_lacks() -> None:
    scheduler = make_scheduler()
    kept, gone = body("kept"), body("gone")
    crb = binding("crb", cluster_scoped=True, placement=placement())
    for item in (kept, gone, crb):
        scheduler.on_binding(item)

    assert scheduler.on_bindings_relisted(True, [kept]) == ["default/gone"]

    assert sorted(scheduler.ctx.bindings.keys()) == ["crb", "default/kept"]
    assert scheduler.on_bindings_relisted(False, []) == ["crb"]
    assert list(scheduler.ctx.bindings.keys()) == ["default/kept"]


async def test_workers_change_only_while_running_and_never_below_one() -> None:
    scheduler = make_scheduler()
    scheduler.set_workers(3)  # before start: remembered, nothing spawned
    assert (scheduler.workers, scheduler._tasks) == (3, [])
    scheduler.set_workers(0)
    assert scheduler.workers == 1
    scheduler.start()
    scheduler.set_workers(2)
    await asyncio.sleep(0)  # every worker has started and waits for a key
    live = sorted(t.get_name() for t in scheduler._tasks if not t.done())
    assert live == ["scheduling-queue-flushers", "scheduling-worker-0", "scheduling-worker-1"]
    report = await scheduler.drain(1.0)
    scheduler.set_workers(4)  # after the stop: nothing spawned
    assert all(t.done() for t in scheduler._tasks) and len(scheduler._tasks) == 3
    assert (report.cancelled, report.drained, report.cut) == (0, 0, 0)


def test_drain_report_line() -> None:
    assert DrainReport(cancelled=2, drained=1, cut=0, seconds=1.999).line() == (
        "scheduler stopped: 2 passes cancelled before their commit point, 1 drained, 0 cut at the drain deadline, "
        "in 1999 ms"
    )


def test_cluster_change_requeues_rbs_before_crbs() -> None:
    scheduler = make_scheduler(cluster("m1", labels={"tier": "gold"}))
    crb = binding("a-crb", cluster_scoped=True, placement=placement())
    crb["metadata"]["labels"] = {"clusterpropagationpolicy.karmada.io/permanent-id": "c"}
    scheduler.on_binding(crb)
    scheduler.on_binding(body("web"))
    queued(scheduler)

    scheduler.on_cluster(cluster("m1", labels={"tier": "silver"}))

    assert queued(scheduler) == ["default/web", "a-crb"]


def test_invalid_binding_requeued_at_priority_zero() -> None:
    """It gets its SchedulerError condition from its pass; it must not jump the queue, nor break intake."""
    scheduler = make_scheduler(cluster("m1"), cluster("m2"))
    scheduler.on_binding(body("a-valid", on=("m2",)))
    invalid = body("b-invalid", on=("m2",))
    invalid["spec"]["replicas"] = "three"
    scheduler.on_binding(invalid)
    assert isinstance(scheduler.ctx.bindings.parsed("default/b-invalid"), ValidationError)
    queued(scheduler)

    scheduler.on_cluster_deleted(cluster("m2"))

    assert queued(scheduler) == ["default/a-valid", "default/b-invalid"]


async def test_cluster_change_queues_many_bindings_in_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scheduler = with_small_slices(monkeypatch, [cluster("m1", labels={"tier": "gold"})],
                                  [body(f"b{index}") for index in range(5)])

    scheduler.on_cluster(cluster("m1", labels={"tier": "silver"}))
    first = queued(scheduler)
    await asyncio.sleep(0)
    second = queued(scheduler)
    for _ in range(3):
        await asyncio.sleep(0)

    assert first == ["default/b0", "default/b1"]
    assert second == ["default/b2", "default/b3"]
    assert queued(scheduler) == ["default/b4"]
    assert events_counted(scheduler, "ClusterChanged") == 10  # tested against its old labels and its new ones


async def test_deleted_cluster_requeues_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    placed = [body(f"b{index}", on=("m1",) if index != 2 else ("m2",)) for index in range(5)]
    scheduler = with_small_slices(monkeypatch, [cluster("m1"), cluster("m2")], placed)

    scheduler.on_cluster_deleted(cluster("m1"))
    first = queued(scheduler)
    for _ in range(3):
        await asyncio.sleep(0)

    assert first == ["default/b0", "default/b1"]
    assert queued(scheduler) == ["default/b3", "default/b4"]


async def test_stop_ends_requeue_in_slices_and_drain_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    scheduler = with_small_slices(monkeypatch, [cluster("m1", labels={"tier": "gold"})],
                                  [body(f"b{index}") for index in range(6)])
    scheduler.on_cluster(cluster("m1", labels={"tier": "silver"}))

    report = await scheduler.drain(1.0)

    assert report.cut == 0
    assert events_counted(scheduler, "ClusterChanged") == 4  # the first slice, for the old labels and the new
    assert not any(task.get_name().startswith("requeue-") for task in asyncio.all_tasks())


# -- no binding ignored in silence --------------------------------------------------------------------------------

RUNTIME = "binding_scheduler.scheduling.lifecycle.runtime"


@pytest.mark.parametrize(("change", "reason"), [
    (lambda b: b["metadata"].pop("labels"),
     "it carries none of the labels propagationpolicy.karmada.io/permanent-id, "
     "clusterpropagationpolicy.karmada.io/permanent-id, binding.karmada.io/managed-by (Karmada's event filter: a "
     "binding made by Karmada's detector from a PropagationPolicy has one)"),
    (lambda b: b["spec"].update(schedulerName="karmada-scheduler"),
     "spec.schedulerName is karmada-scheduler, and this scheduler is default-scheduler"),
    (lambda b: b["spec"].update(suspension={"scheduling": True}), "spec.suspension.scheduling is true"),
])
def test_filtered_binding_event_said_once_with_why(
    change: Any, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = make_scheduler()
    refused = body("web")
    change(refused)
    with caplog.at_level(logging.INFO, logger=RUNTIME):
        scheduler.on_binding(refused)
        scheduler.on_binding({**refused, "metadata": {**refused["metadata"], "resourceVersion": "2"}})
    assert [r.getMessage() for r in caplog.records if r.name == RUNTIME] == [
        f"binding default/web is not scheduled here: {reason}"]
    assert queued(scheduler) == []


def test_binding_refused_again_after_it_passed_is_said_again(caplog: pytest.LogCaptureFixture) -> None:
    scheduler = make_scheduler()
    unlabelled = body("web")
    unlabelled["metadata"].pop("labels")
    with caplog.at_level(logging.INFO, logger=RUNTIME):
        scheduler.on_binding(unlabelled)
        scheduler.on_binding(body("web", version="2"))
        scheduler.on_binding({**unlabelled, "metadata": {**unlabelled["metadata"], "resourceVersion": "3"}})
    assert len([r for r in caplog.records if r.name == RUNTIME and "is not scheduled here" in r.getMessage()]) == 2
