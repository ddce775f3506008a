"""A pass that preempts (gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling; Karmada's open PR #7832,
pkg/scheduler/scheduler.go: handlePreemptionResult, preemptVictimBinding): the claim, the victims' fenced
evictions with their events, the preemptor's Preempting condition, and every way it does not happen."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from binding_scheduler.algorithm.preemption import Claim
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.kube.errors import Conflict
from binding_scheduler.model import parse_cluster
from binding_scheduler.scheduling.framework.preemptor import Preemption
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.observability.labels import PassOutcome
from binding_scheduler.scheduling.passes.context import PassSettings
from binding_scheduler.scheduling.state.claims import PreemptionClaims
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from testsupport.builders import AGGREGATED, binding, cluster, names, placement
from testsupport.passes import Run, ScriptedClient, written

HIGH, LOW = 1000, 100
RB = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings"


def prioritized(name: str, priority: int, *, policy: str = "PreemptLowerPriority", replicas: int = 3,
                placed: bool = False) -> dict[str, Any]:
    body = binding(name, replicas=replicas, requests={"cpu": "10m"},
                   placement=placement(affinity=names("m1"), scheduling=AGGREGATED),
                   clusters={"m1": replicas} if placed else None, uid=f"uid-{name}")
    body["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    body["spec"]["schedulePriority"] = {"priority": priority, "preemptionPolicy": policy}
    return body


def fleet_run(client: ScriptedClient, *others: dict[str, Any], preemption: bool = True, free: str = "0m",
              preemptor: dict[str, Any] | None = None) -> Run:
    """`high` (3 x 10m, only m1) and `others` stored; m1 has 30m of CPU, `free` of it unallocated."""
    run = Run(preemptor or prioritized("high", HIGH), client)
    for body in others:
        run.store.upsert(body)
    used = 30 - int(free.removesuffix("m"))
    run.ctx.clusters.upsert(parse_cluster(cluster("m1", allocatable={"cpu": "30m", "pods": "110"},
                                                  allocated={"cpu": f"{used}m", "pods": "3"})))
    planner = Preemption(run.store.parsed_bindings, run.ctx.claims, max_victims=100) if preemption else None
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(), preemptor=planner)
    return run


def sent(client: ScriptedClient) -> list[tuple[str, str]]:
    return [(kind, path.removeprefix(RB)) for kind, path, _ in client.sent]


def condition(client: ScriptedClient) -> tuple[str, str, str]:
    (body,) = [body for kind, _, body in client.sent if kind == "status"]
    (found,) = body["status"]["conditions"]
    return found["status"], found["reason"], found["message"]


def value(run: Run, name: str, **labels: str) -> float:
    return run.metrics.registry.get_sample_value(name, labels) or 0.0


async def test_unfit_binding_evicts_lower_one_and_waits() -> None:
    client = ScriptedClient()
    run = fleet_run(client, prioritized("low", LOW, policy="Never", placed=True))

    outcome = await run.pass_("default/high")

    assert outcome is PassOutcome.PREEMPTING
    assert sent(client) == [("spec", "/high"), ("spec", "/low"), ("status", "/high/status")]
    written_claim = client.sent[0][2]
    assert written_claim["metadata"]["resourceVersion"] == "7"
    claim_text = written_claim["metadata"]["annotations"]["binding-scheduler.io/preemption-claim"]
    assert {k: v for k, v in json.loads(claim_text).items() if k != "until"} == {
        "cluster": "m1", "priority": HIGH, "replicas": 3, "request": {"cpu": 10}}
    eviction = client.sent[1][2]
    assert eviction == {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": None, "gracefulEvictionTasks": [
        {"fromCluster": "m1", "purgeMode": "Gracefully", "reason": "BindingPreempted", "producer": "Scheduler",
         "gracePeriodSeconds": 30, "replicas": 3}]}}
    assert condition(client) == ("False", "Preempting", 'preemption initiated on cluster "m1" for 1 victim(s)')
    assert [(i["name"], t, r, m) for i, t, r, m in run.events.recorded] == [
        ("high", "Normal", "PreemptionInitiated",
         'ResourceBinding default/high initiated preemption on cluster "m1" for 1 victim(s)'),
        ("low", "Warning", "Preempted",
         'ResourceBinding default/low was preempted by higher-priority ResourceBinding default/high on cluster "m1"'),
    ]
    claim = run.ctx.claims.of("default/high")
    assert claim is not None and (claim.cluster, claim.priority, claim.replicas) == ("m1", HIGH, 3)
    assert value(run, "karmada_scheduler_preemption_attempts_total", result="success") == 1
    assert value(run, "karmada_scheduler_preemption_victims_total") == 1


@pytest.mark.parametrize(("preemption", "others", "preemptor"), [
    (False, [prioritized("low", LOW, policy="Never", placed=True)], None),
    (True, [prioritized("low", LOW, policy="Never", placed=True)], prioritized("high", HIGH, policy="Never")),
    (True, [prioritized("equal", HIGH, policy="Never", placed=True)], None),
    (True, [prioritized("higher", HIGH + 1, policy="Never", placed=True)], None),
    (True, [prioritized("small", LOW, policy="Never", placed=True, replicas=1)], None),
], ids=["gates-off", "policy-never", "equal-priority", "higher-priority", "too-little-to-free"])
async def test_nothing_is_preempted_and_binding_is_unschedulable_when(
    preemption: bool, others: list[dict[str, Any]], preemptor: dict[str, Any] | None,
) -> None:
    client = ScriptedClient()
    run = fleet_run(client, *others, preemption=preemption, preemptor=preemptor)

    assert await run.pass_("default/high") is PassOutcome.UNSCHEDULABLE
    assert sent(client) == [("status", "/high/status")]
    assert condition(client)[:2] == ("False", "Unschedulable")
    assert run.ctx.claims.of("default/high") is None
    assert [r for _, _, r, _ in run.events.recorded] == ["ScheduleBindingFailed", "ScheduleBindingFailed"]


CONFLICT = Conflict(409, "Conflict", "the object has been modified; please apply your changes to the latest")
CLAIM = "binding-scheduler.io/preemption-claim"


async def test_changed_victim_is_not_evicted_and_preemption_errs() -> None:
    client = ScriptedClient(spec=[written(1, "8"), CONFLICT, written(1, "9")])
    run = fleet_run(client, prioritized("low", LOW, policy="Never", placed=True))

    assert await run.pass_("default/high") is PassOutcome.ERROR
    status, reason, message = condition(client)
    assert (status, reason) == ("False", "SchedulerError")
    assert message.startswith("failed to preempt: ")
    assert run.ctx.claims.of("default/high") is None
    assert value(run, "karmada_scheduler_preemption_attempts_total", result="error") == 1


async def test_failed_preemption_removes_claim_first() -> None:
    client = ScriptedClient(spec=[written(1, "8"), CONFLICT, written(1, "9")])
    run = fleet_run(client, prioritized("low", LOW, policy="Never", placed=True))

    await run.pass_("default/high")

    assert sent(client) == [("spec", "/high"), ("spec", "/low"), ("spec", "/high"), ("status", "/high/status")]
    removal = client.sent[2][2]
    assert removal == {"metadata": {"resourceVersion": "8", "annotations": {CLAIM: None}}}
    assert client.versions()[3] == ("status", "9")


async def test_failed_preemption_claim_is_not_reused_on_preemptor(
) -> None:
    client = ScriptedClient(spec=[written(1, "8"), CONFLICT, CONFLICT])  # the removal is refused too
    run = fleet_run(client, prioritized("low", LOW, policy="Never", placed=True))
    await run.pass_("default/high")
    claimed = dict(prioritized("high", HIGH))
    claimed["metadata"] = {**claimed["metadata"], "resourceVersion": "8",
                           "annotations": {CLAIM: client.sent[0][2]["metadata"]["annotations"][CLAIM]}}
    run.ctx.claims.take_up("default/high", claimed["metadata"]["annotations"])  # its watch event comes back
    client.sent.clear()

    assert run.ctx.claims.of("default/high") is None
    assert await run.pass_("default/high") is PassOutcome.PREEMPTING
    assert sent(client)[:2] == [("spec", "/high"), ("spec", "/low")]


async def test_living_claim_keeps_preemptor_waiting() -> None:
    client = ScriptedClient()
    run = fleet_run(client, prioritized("low", LOW, policy="Never", placed=True),
                    prioritized("other", LOW, policy="Never", placed=True))
    await run.pass_("default/high")
    evicted = [path for kind, path in sent(client) if kind == "spec" and path != "/high"]
    client.sent.clear()

    assert await run.pass_("default/high") is PassOutcome.PREEMPTING
    assert sent(client) == [("status", "/high/status")]
    assert condition(client) == ("False", "Preempting", 'waiting for the capacity preempted on cluster "m1"')
    assert len(evicted) == 1


async def test_claim_keeps_freed_capacity_for_preemptor() -> None:
    """m1's 30m are free now (the victim left), but the claim holds them for `high`."""
    client = ScriptedClient(spec=[written(2, "8")])
    newcomer = prioritized("newcomer", LOW, policy="Never")
    run = fleet_run(client, newcomer, free="30m")
    run.ctx.claims.set(Claim("default/high", "m1", HIGH, 3, {"cpu": 10}))

    assert await run.pass_("default/newcomer") is PassOutcome.UNSCHEDULABLE
    assert condition(client)[:2] == ("False", "Unschedulable")
    client.sent.clear()

    assert await run.pass_("default/high") is PassOutcome.SCHEDULED
    assert client.sent[0][2]["spec"]["clusters"] == [{"name": "m1", "replicas": 3}]
    assert run.ctx.claims.of("default/high") is None


def bounded_run(client: ScriptedClient, *others: dict[str, Any], max_victims: int = 100, max_per_minute: int = 30,
                clock: list[float] | None = None) -> tuple[Run, list[str]]:
    run = fleet_run(client, *others)
    limited: list[str] = []
    now = clock if clock is not None else [0.0]
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(), preemptor=Preemption(
        run.store.parsed_bindings, run.ctx.claims, max_victims=max_victims, max_per_minute=max_per_minute,
        on_limited=limited.append, clock=lambda: now[0]))
    return run, limited


async def test_too_many_victims_no_preemption() -> None:
    client = ScriptedClient()
    run, limited = bounded_run(client, *(prioritized(f"low-{i}", LOW, policy="Never", placed=True, replicas=1)
                                         for i in range(3)), max_victims=2)

    assert await run.pass_("default/high") is PassOutcome.UNSCHEDULABLE
    assert sent(client) == [("status", "/high/status")]
    assert condition(client)[:2] == ("False", "Unschedulable")
    assert limited == ["victims"]


async def test_preemptions_past_rate_wait_until_minute_has_passed() -> None:
    clock = [100.0]
    client = ScriptedClient()
    others = [prioritized("low", LOW, policy="Never", placed=True)]
    run, limited = bounded_run(client, *others, max_per_minute=1, clock=clock)
    first = prioritized("first", HIGH)
    run.store.upsert(first)

    assert await run.pass_("default/first") is PassOutcome.PREEMPTING
    assert condition(client)[1] == "Preempting"
    run.ctx.claims.clear("default/first")
    run.store.upsert(prioritized("low", LOW, policy="Never", placed=True))
    client.sent.clear()

    assert await run.pass_("default/high") is PassOutcome.UNSCHEDULABLE
    assert (condition(client)[1], limited) == ("Unschedulable", ["rate"])
    clock[0] += 61.0
    client.sent.clear()
    assert await run.pass_("default/high") is PassOutcome.PREEMPTING
    assert condition(client)[1] == "Preempting"


# -- a stop while a preemption writes ------------------------------------------------------------------------


class HeldEvictions:
    """The API client: every write reaches the server (`sent`) and waits there until `released`."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.cancelled: list[str] = []
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        self.sent.append(path.removeprefix(RB))
        self.arrived.set()
        try:
            await self.released.wait()
        except asyncio.CancelledError:
            self.cancelled.append(path.removeprefix(RB))
            raise
        return {"metadata": {"resourceVersion": "9", "generation": 2}}


def preempting_scheduler(client: HeldEvictions) -> Scheduler:
    run = fleet_run(ScriptedClient(), prioritized("low", LOW, policy="Never", placed=True))
    run.ctx.client = client  # type: ignore[assignment]
    scheduler = Scheduler(run.ctx, run.settings, queue=SchedulingQueue(), metrics=run.metrics)
    body = prioritized("high", HIGH)
    body["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": "p"}
    scheduler.on_binding(body)
    return scheduler


async def test_preemptor_waiting_for_victims_backs_off() -> None:
    client = HeldEvictions()
    client.released.set()
    scheduler = preempting_scheduler(client)
    info = scheduler.queue.pop_nowait()
    assert info is not None

    await scheduler._run_one(info)
    scheduler.queue.done(info)

    assert client.sent == ["/high", "/low", "/high/status"]
    assert scheduler.queue.where("default/high") == "backoff"


async def test_stop_during_eviction_lets_preemption_finish() -> None:
    client = HeldEvictions()
    scheduler = preempting_scheduler(client)
    scheduler.start()
    await asyncio.wait_for(client.arrived.wait(), 10)
    drain = asyncio.create_task(scheduler.drain(60.0))
    await asyncio.sleep(0)  # the stop is asked: the pass is past its commit point and goes on
    client.released.set()

    report = await drain

    assert (report.cancelled, report.drained, report.cut) == (0, 1, 0)
    assert client.sent == ["/high", "/low", "/high/status"]


async def test_cut_preemption_writes_nothing_after_stop() -> None:
    """The write in flight (the claim on the preemptor) is cancelled and nothing more is sent: no victim was
    evicted. Cut later, the claim written before the evictions is what the next leader takes up."""
    client = HeldEvictions()
    scheduler = preempting_scheduler(client)
    scheduler.start()
    await asyncio.wait_for(client.arrived.wait(), 10)

    report = await scheduler.drain(0.0)
    client.released.set()
    await asyncio.sleep(0)

    assert (report.cancelled, report.drained, report.cut) == (0, 0, 1)
    assert (client.sent, client.cancelled) == (["/high"], ["/high"])


async def test_conflicting_claim_preempts_no_one() -> None:
    conflict = Conflict(409, "Conflict", "the object has been modified; please apply your changes to the latest")
    client = ScriptedClient(spec=[conflict])
    run = fleet_run(client, prioritized("low", LOW, policy="Never", placed=True))

    assert await run.pass_("default/high") is PassOutcome.CONFLICT
    assert sent(client) == [("spec", "/high")]
    assert run.ctx.claims.of("default/high") is None
    assert value(run, "binding_scheduler_writes_total", kind="spec", result="conflict") == 1


async def test_spec_write_that_places_preemptor_drops_claim_annotation() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    body = prioritized("high", HIGH)
    body["metadata"]["annotations"] = {"binding-scheduler.io/preemption-claim": "{}"}
    run = fleet_run(client, preemptor=body, free="30m")

    assert await run.pass_("default/high") is PassOutcome.SCHEDULED
    assert client.sent[0][2]["metadata"]["annotations"]["binding-scheduler.io/preemption-claim"] is None


def test_later_scheduler_takes_up_written_claim() -> None:
    from binding_scheduler.scheduling.state.claims import CLAIM_ANNOTATION, claim_annotation

    claims = PreemptionClaims(clock=lambda: 1000.0)
    live = claim_annotation(Claim("default/high", "m1", HIGH, 3, {"cpu": 10}), until=1300.0)
    claims.take_up("default/high", {CLAIM_ANNOTATION: live})
    claims.take_up("default/old", {CLAIM_ANNOTATION: live.replace("1300.0", "900.0")})
    claims.take_up("default/bad", {CLAIM_ANNOTATION: "not json"})

    claim = claims.of("default/high")
    assert claim is not None and (claim.cluster, claim.replicas, dict(claim.request)) == ("m1", 3, {"cpu": 10})
    assert (claims.of("default/old"), claims.of("default/bad")) == (None, None)


async def test_preempting_pass_logs_and_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging
    import re

    run = fleet_run(ScriptedClient(), prioritized("low", LOW, policy="Never", placed=True))
    with caplog.at_level(logging.INFO, logger="binding_scheduler.scheduling.passes.run"):
        await run.pass_("default/high")

    lines = [re.sub(r"\d+ ms", "N ms", m) for m in caplog.messages if m.startswith("binding default/high (")]
    assert lines == ['binding default/high (ResourceBinding): not scheduled: Preempting: preemption initiated on '
                     'cluster "m1" for 1 victim(s) (ReconcileSchedule, N ms, attempt 1)']
    assert value(run, "karmada_scheduler_schedule_attempts_total", result="error",
                 schedule_type="ReconcileSchedule") == 1
