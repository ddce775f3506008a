"""The endings of one pass (Karmada's pkg/scheduler/scheduler.go: doScheduleBinding and what it calls): what each ending
writes, logs, posts and counts: an invalid binding, a binding without placement, a decision over its CPU limit, a
lost condition decided again, reservations lost to other passes, a fit error, an unschedulable binding, warnings of
skipped affinity terms, and the reservation kept only when the placement landed."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.kube.errors import Forbidden, NotFound, ServerError
from binding_scheduler.kube.gate import WriteGateClosed
from binding_scheduler.model import Binding, TargetCluster, parse_binding, parse_cluster
from binding_scheduler.scheduling.observability.labels import PassOutcome, WriteKind, WriteResult
from binding_scheduler.scheduling.passes.context import PassSettings, PassTracker, Phase
from binding_scheduler.scheduling.passes.run import run_pass
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from binding_scheduler.scheduling.state.workload_groups import WorkloadGroupIndex
from tests.scheduling.test_pass_writes import CONFLICT, DIVIDED, Run, ScriptedClient, placed_body, written
from testsupport.builders import binding, cluster, names, placement, term
from testsupport.pass_plugins import During, plugins_with

PASSES = "binding_scheduler.scheduling.passes.run"
SCHEDULED_TRUE = {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
                  "lastTransitionTime": "2026-01-01T00:00:00Z"}


def status_of(client: ScriptedClient) -> dict[str, Any]:
    (body,) = [body for kind, _, body in client.sent if kind == "status"]
    return dict(body["status"])


def condition_of(client: ScriptedClient) -> tuple[str, str, str]:
    (condition,) = status_of(client)["conditions"]
    return condition["status"], condition["reason"], condition["message"]


def attempts(run: Run, result: str, schedule_type: str) -> float:
    value = run.metrics.registry.get_sample_value(
        "karmada_scheduler_schedule_attempts_total", {"result": result, "schedule_type": schedule_type})
    return value or 0.0


def decision_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [re.sub(r", \d+ ms,", ", N ms,", m) for m in caplog.messages if m.startswith("binding default/web (")]


# -- bindings that cannot be scheduled as they are ------------------------------------------------------------


async def test_an_invalid_binding_gets_a_scheduler_error_naming_the_field_and_one_warning_event() -> None:
    body = binding(replicas=-1, placement=placement())
    client = ScriptedClient()
    run = Run(body, client)
    tracker = PassTracker("default/web")

    outcome = await run_pass("default/web", run.ctx, run.settings, tracker)

    assert outcome is PassOutcome.ERROR
    assert tracker.phase is Phase.COMMITTING
    assert client.versions() == [("status", "7")]
    assert condition_of(client) == ("False", "SchedulerError", "invalid binding: spec.replicas: -1 is less than 0")
    assert [(i["kind"], t, r, m) for i, t, r, m in run.events.recorded] == [
        ("ResourceBinding", "Warning", "ScheduleBindingFailed", "invalid binding: spec.replicas: -1 is less than 0")]


async def test_a_cluster_resource_binding_without_placement_is_refused_naming_its_kind() -> None:
    body = binding("role", cluster_scoped=True)
    client = ScriptedClient()
    run = Run(body, client)

    outcome = await run.pass_("role")

    assert outcome is PassOutcome.ERROR
    message = "failed to get placement from clusterResourceBinding(role)"
    assert condition_of(client) == ("False", "SchedulerError", message)
    assert client.sent[0][1] == "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/role/status"


WIDE = [f"wide-{i:02d}" for i in range(26)]
EXPONENTIAL = placement(
    affinity=names(*WIDE),
    spread=[{"spreadByField": "region", "minGroups": 1, "maxGroups": 26},
            {"spreadByField": "cluster", "minGroups": 13, "maxGroups": 26}],
    scheduling={"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
)
"""Karmada's region search over 26 one-cluster regions, 13 to 26 of them: exponential, seconds of CPU."""


async def test_a_decision_over_its_cpu_limit_is_refused_as_unschedulable_with_the_limit_in_the_condition() -> None:
    client = ScriptedClient()
    run = Run(binding(replicas=26, placement=EXPONENTIAL), client)
    for i, name in enumerate(WIDE):
        run.ctx.clusters.upsert(parse_cluster(cluster(name, region=f"wide-region-{i:02d}")))
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(),
                                options=ScheduleOptions(cpu_limit=0.01))

    outcome = await run.pass_()

    assert outcome is PassOutcome.UNSCHEDULABLE
    message = "the decision needed more than 0.01s of CPU (decisionCPULimit 0.01s)"
    assert condition_of(client) == ("False", "SchedulerError", message)
    assert [(t, r, m) for _, t, r, m in run.events.recorded] == [("Warning", "ScheduleBindingFailed", message)]


# -- a lost condition decided again -----------------------------------------------------------------------------


def owing(on: str) -> dict[str, Any]:
    """Divided onto m1 by name, placed `on` a cluster, at generation 2, observed 1, with no Scheduled condition:
    no rule asks for a decision, but the condition of the last one is missing."""
    body = placed_body(placement(affinity=names("m1"), scheduling={"replicaSchedulingType": "Divided"}))
    body["spec"]["clusters"] = [{"name": on, "replicas": 1}]
    body["status"] = {"schedulerObservedGeneration": 1}
    return body


async def test_a_generation_without_its_condition_is_decided_again_and_gets_the_condition(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = ScriptedClient()
    run = Run(owing("m1"), client, "m1", "m2")

    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await run.pass_()

    assert outcome is PassOutcome.SCHEDULED
    assert client.versions() == [("status", "7")]
    assert condition_of(client)[:2] == ("True", "Success")
    assert status_of(client)["schedulerObservedGeneration"] == 2
    assert "binding default/web: generation 2 has no Scheduled condition yet: deciding again" in caplog.messages
    assert decision_lines(caplog) == [
        "binding default/web (ResourceBinding): scheduled to m1:1 (ReconcileSchedule, N ms, attempt 1)"]
    assert attempts(run, "scheduled", "ReconcileSchedule") == 1


async def test_a_generation_without_its_condition_whose_new_decision_would_move_it_is_only_recorded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = ScriptedClient()
    run = Run(owing("m2"), client, "m1", "m2")

    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await run.pass_()

    assert outcome is PassOutcome.SKIPPED
    assert [(kind, body) for kind, _, body in client.sent] == [
        ("status", {"metadata": {"resourceVersion": "7"}, "status": {"schedulerObservedGeneration": 2}})]
    assert ("binding default/web: deciding again would change its clusters, which no rule asks for: left as it is, "
            "generation 2 recorded without a condition (as Karmada does)") in caplog.messages


# -- reservations ---------------------------------------------------------------------------------------------


def protected(body: dict[str, Any], client: ScriptedClient, *clusters: str, during: During | None = None) -> Run:
    """A run with overcommit protection on: the passes reserve their decisions in an assumption cache."""
    run = Run(body, client, *clusters)
    run.ctx.assumptions = AssumptionCache()
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=plugins_with(during),
                                assumptions=run.ctx.assumptions)
    return run


def other(name: str) -> Binding:
    parsed = Run(binding(name, replicas=1, placement=DIVIDED), ScriptedClient()).store.parsed(f"default/{name}")
    assert isinstance(parsed, Binding)
    return parsed


async def test_a_placement_that_landed_stays_assumed_on_its_clusters() -> None:
    run = protected(binding(replicas=2, placement=DIVIDED), ScriptedClient(spec=[written(2, "8")]))

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert run.ctx.assumptions.holds("default/web")
    assert list(run.ctx.assumptions.assumed_on("m1")) == ["default/web"]


async def test_a_result_already_in_place_is_not_assumed() -> None:
    """Karmada assumes only after a patch that changed something (scheduler.go: the empty-patch return comes
    before updateAssumptionsCache): a new leader deciding again what already runs must not count it twice."""
    run = protected(owing("m1"), ScriptedClient())

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert not run.ctx.assumptions.holds("default/web")
    assert run.ctx.assumptions.assumed_on("m1") == {}


async def test_a_duplicated_binding_decided_again_where_it_runs_is_not_assumed() -> None:
    """What a new leader does at takeover: it decides every Duplicated binding again, and each already holds
    its result; assuming them would hide the capacity they use twice until the TTL (5 min)."""
    run = protected(placed_body(), ScriptedClient())

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert run.ctx.assumptions.assumed_on("m1") == {}


async def test_a_result_already_in_place_leaves_the_assumption_of_its_last_write_as_it_was() -> None:
    run = protected(owing("m1"), ScriptedClient())
    parsed = run.store.parsed("default/web")
    assert isinstance(parsed, Binding)
    run.ctx.assumptions.assume(parsed, list(parsed.clusters), multi_template=False)
    before = run.ctx.assumptions.assumed_on("m1")

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert run.ctx.assumptions.assumed_on("m1") == before != {}


async def test_a_placement_whose_spec_write_failed_is_assumed_nowhere() -> None:
    run = protected(binding(replicas=2, placement=DIVIDED),
                    ScriptedClient(spec=[ServerError(500, "InternalError", "etcd is unhappy")]))

    assert await run.pass_() is PassOutcome.ERROR
    assert not run.ctx.assumptions.holds("default/web")


class FullLedger:
    name = "FullLedger"

    def reserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        raise RuntimeError("the ledger is full")

    def unreserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        return None


async def test_a_reserve_plugins_failure_writes_no_placement_and_gives_a_condition_naming_the_plugin() -> None:
    client = ScriptedClient()
    run = protected(binding(replicas=2, placement=placement()), client)
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(extra=[FullLedger()]),
                                assumptions=run.ctx.assumptions)

    assert await run.pass_() is PassOutcome.ERROR
    message = 'failed to reserve the decision: plugin "FullLedger" failed with: the ledger is full'
    assert [kind for kind, _, _ in client.sent] == ["status"]
    assert condition_of(client) == ("False", "SchedulerError", message)
    assert not run.ctx.assumptions.holds("default/web")
    assert [(t, r, m) for _, t, r, m in run.events.recorded][-1] == ("Warning", "ScheduleBindingFailed", message)


async def test_a_reserve_plugins_failure_leaves_the_observed_affinity_term_as_it_was() -> None:
    client = ScriptedClient()
    run = Run(binding(replicas=2, placement=placement(affinities=[term("primary", "m1")])), client)
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(extra=[FullLedger()]))

    assert await run.pass_() is PassOutcome.ERROR
    assert "schedulerObservingAffinityName" not in status_of(client)


async def test_a_reserve_plugins_failure_keeps_the_warnings_of_the_terms_that_failed_before() -> None:
    client = ScriptedClient()
    terms = [term("gone", "nowhere"), term("primary", "m1")]
    run = Run(binding(replicas=2, placement=placement(affinities=terms)), client)
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(extra=[FullLedger()]))

    assert await run.pass_() is PassOutcome.ERROR
    warnings = [m for _, t, _, m in run.events.recorded if t == "Warning"]
    assert len(warnings) == 4  # the failed term's warning and the refusal, each on the binding and its resource
    assert warnings[0].startswith("failed to schedule ResourceBinding(default/web) with clusterAffiliates index(0)")


async def test_every_term_failing_on_a_binding_already_placed_nowhere_is_still_no_cluster_fit() -> None:
    """The decision (no clusters, and the error) equals what the binding holds: no spec write, and the outcome is
    the error's, not a success."""
    chosen = placement(affinities=[term("a", "gone-1"), term("b", "gone-2")])
    body = binding(replicas=1, placement=chosen, clusters=[])
    applied = parse_binding(body).placement
    assert applied is not None
    body["metadata"]["annotations"] = {
        "policy.karmada.io/applied-placement": json.dumps(applied.to_dict(), separators=(",", ":"))}
    client = ScriptedClient()
    run = Run(body, client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.NO_CLUSTER_FIT
    assert [kind for kind, _, _ in client.sent] == ["status"]
    assert condition_of(client)[:2] == ("False", "NoClusterFit")
    assert attempts(run, "scheduled", "ReconcileSchedule") + attempts(run, "error", "ReconcileSchedule") == 1


class ForgettingClient(ScriptedClient):
    """Its spec write answers, and meanwhile the binding's delete event empties the store."""

    def __init__(self, store: Any) -> None:
        super().__init__(spec=[written(2, "8")])
        self.store = store

    async def patch_merge(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        if not path.endswith("/status"):
            self.store.remove("default/web")
        return await super().patch_merge(path, body)


async def test_a_binding_deleted_while_its_spec_write_was_in_flight_still_gets_its_status_write() -> None:
    """The status write is fenced with the version the spec write returned; the API server answers for a
    binding that is gone. The pass does not stumble over the store having forgotten it."""
    run = Run(binding(replicas=1, placement=placement()), ScriptedClient())
    run.ctx.client = ForgettingClient(run.store)

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert [kind for kind, _, _ in run.ctx.client.sent] == ["spec", "status"]


async def test_a_decision_whose_clusters_other_passes_reserved_meanwhile_is_made_again_on_a_fresh_snapshot() -> None:
    decided: list[int] = []

    async def racing(ctx: AttemptContext) -> None:
        decided.append(len(ctx.snapshot.clusters))
        if len(decided) == 1:  # another pass reserves on m1 while this one awaits its estimates
            run.ctx.assumptions.assume(other("rival"), (TargetCluster("m1", 1),), False)

    run = protected(binding(replicas=2, placement=DIVIDED), ScriptedClient(spec=[written(2, "8")]), during=racing)

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert decided == [1, 1]


async def test_a_decision_beaten_to_its_clusters_three_times_in_a_row_is_requeued(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = ScriptedClient()
    decided: list[int] = []

    async def always_beaten(ctx: AttemptContext) -> None:
        decided.append(len(ctx.snapshot.clusters))
        run.ctx.assumptions.assume(other(f"rival-{len(decided)}"), (TargetCluster("m1", 1),), False)

    run = protected(binding(replicas=2, placement=DIVIDED), client, during=always_beaten)
    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await run.pass_()

    assert outcome is PassOutcome.CONFLICT
    assert decided == [1, 1, 1]
    assert client.sent == []
    assert ("binding default/web: other passes reserved capacity on its clusters while it decided, 3 times: "
            "requeued") in caplog.messages
    assert not run.ctx.assumptions.holds("default/web")


# -- decisions that end without a placement ----------------------------------------------------------------------


async def test_a_fit_error_clears_the_clusters_and_is_no_cluster_fit_with_warnings_and_no_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    run = Run(binding(replicas=1, placement=placement(affinity=names("m9")), clusters={"m1": 1}), client)

    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await run.pass_()

    message = "0/1 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint."
    assert outcome is PassOutcome.NO_CLUSTER_FIT
    assert client.sent[0][2]["spec"]["clusters"] is None  # merge patch: the field removed
    assert condition_of(client) == ("False", "NoClusterFit", message)
    assert {(t, r, m) for _, t, r, m in run.events.recorded} == {("Warning", "ScheduleBindingFailed", message)}
    assert len(run.events.recorded) == 2
    assert decision_lines(caplog) == [
        f"binding default/web (ResourceBinding): not scheduled: NoClusterFit: {message} (ReconcileSchedule, N ms, "
        "attempt 1)"]
    assert attempts(run, "scheduled", "ReconcileSchedule") == 1
    assert attempts(run, "error", "ReconcileSchedule") == 0


async def test_too_few_replicas_anywhere_writes_no_spec_and_is_unschedulable() -> None:
    client = ScriptedClient()
    aggregated = placement(scheduling={"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"})
    run = Run(binding(replicas=5, placement=aggregated, requests={"cpu": "2"}), client)
    run.ctx.clusters.upsert(parse_cluster(cluster("m1", allocatable={"cpu": "1", "pods": "10"})))

    outcome = await run.pass_()

    assert outcome is PassOutcome.UNSCHEDULABLE
    assert [kind for kind, _, _ in client.sent] == ["status"]
    status, reason, _ = condition_of(client)
    assert (status, reason) == ("False", "Unschedulable")
    assert {t for _, t, _, _ in run.events.recorded} == {"Warning"}
    assert attempts(run, "error", "ReconcileSchedule") == 1


async def test_a_skipped_affinity_term_is_a_warning_and_the_term_used_is_named_in_the_status(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    run = Run(binding(replicas=1, placement=placement(affinities=[term("first", "m9"), term("second", "m1")])),
              client)

    assert await run.pass_() is PassOutcome.SCHEDULED

    assert status_of(client)["schedulerObservingAffinityName"] == "second"
    types = [(i["kind"], t, r) for i, t, r, _ in run.events.recorded]
    assert types == [("ResourceBinding", "Warning", "ScheduleBindingFailed"),
                     ("Deployment", "Warning", "ScheduleBindingFailed"),
                     ("ResourceBinding", "Normal", "ScheduleBindingSucceed"),
                     ("Deployment", "Normal", "ScheduleBindingSucceed")]
    assert run.events.recorded[0][3] == run.events.recorded[1][3] != run.events.recorded[2][3]
    assert run.events.recorded[0][3].startswith(
        "failed to schedule ResourceBinding(default/web) with clusterAffiliates index(0): ")


# -- the spec write ---------------------------------------------------------------------------------------------


async def test_the_applied_placement_is_written_as_compact_json() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    await Run(binding(replicas=1, placement=placement(affinity=names("m1"))), client).pass_()
    assert client.sent[0][2]["metadata"]["annotations"] == {
        "policy.karmada.io/applied-placement": '{"clusterAffinity":{"clusterNames":["m1"]}}'}


async def test_a_decision_logs_its_clusters_trigger_and_attempt(caplog: pytest.LogCaptureFixture) -> None:
    run = Run(binding(replicas=3, placement=placement()), ScriptedClient(spec=[written(2, "8")]), "m1", "m2")
    with caplog.at_level(logging.INFO, logger=PASSES):
        await run_pass("default/web", run.ctx, run.settings, PassTracker("default/web", attempt=3))
    assert decision_lines(caplog) == [
        "binding default/web (ResourceBinding): scheduled to m1:3,m2:3 (ReconcileSchedule, N ms, attempt 3)"]
    seconds = run.metrics.registry.get_sample_value("karmada_scheduler_e2e_scheduling_duration_seconds_sum",
                                                    {"result": "scheduled", "schedule_type": "ReconcileSchedule"})
    assert seconds is not None and 0 < seconds < 60


@pytest.mark.parametrize(
    ("error", "result", "outcome", "line"),
    [
        (CONFLICT, WriteResult.CONFLICT, PassOutcome.CONFLICT,
         "binding default/web changed after our read (409): decision dropped, requeued"),
        (NotFound(404, "NotFound", 'resourcebindings "web" not found'), WriteResult.ERROR, PassOutcome.FORGOTTEN,
         "binding default/web was deleted after our read (404): forgotten"),
    ],
)
async def test_a_refused_spec_write_is_counted_logged_and_ends_the_pass(
    caplog: pytest.LogCaptureFixture, error: Exception, result: WriteResult, outcome: PassOutcome, line: str
) -> None:
    run = Run(binding(replicas=1, placement=placement()), ScriptedClient(spec=[error]))
    with caplog.at_level(logging.INFO, logger=PASSES):
        assert await run.pass_() is outcome
    assert line in caplog.messages
    assert run.writes(WriteKind.SPEC, result) == 1


async def test_a_spec_write_that_failed_is_counted_as_an_error() -> None:
    run = Run(binding(replicas=1, placement=placement()),
              ScriptedClient(spec=[ServerError(500, "InternalError", "etcd is unhappy")]))
    assert await run.pass_() is PassOutcome.ERROR
    assert run.writes(WriteKind.SPEC, WriteResult.ERROR) == 1
    assert run.writes(WriteKind.STATUS, WriteResult.OK) == 1


async def test_a_spec_write_refused_by_the_closed_gate_is_counted_and_raised() -> None:
    run = Run(binding(replicas=1, placement=placement()), ScriptedClient(spec=[WriteGateClosed("scheduler shut down")]))
    with pytest.raises(WriteGateClosed):
        await run.pass_()
    assert run.writes(WriteKind.SPEC, WriteResult.GATE_CLOSED) == 1


async def test_our_spec_write_is_indexed_for_workload_affinity_at_once() -> None:
    body = binding(replicas=1, placement=placement())
    body["spec"]["workloadAffinityGroups"] = {"affinityGroup": "team"}
    answer = {**body, "metadata": {**body["metadata"], "resourceVersion": "8", "generation": 2},
              "spec": {**body["spec"], "clusters": [{"name": "m1", "replicas": 1}]}}
    run = Run(body, ScriptedClient(spec=[answer]))
    run.ctx.workload_groups = WorkloadGroupIndex.of_store(run.store)

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert [m.clusters for m in run.ctx.workload_groups.affinity_members("team")] == [frozenset({"m1"})]


async def test_with_multiple_pod_templates_a_multi_component_binding_placed_nowhere_is_scaled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = placed_body(DIVIDED)
    body["spec"].pop("clusters")
    body["spec"]["replicas"] = 0
    body["spec"]["components"] = [{"name": "web", "replicas": 2}]
    body["status"] = {"schedulerObservedGeneration": 2, "conditions": [SCHEDULED_TRUE]}
    run = Run(body, ScriptedClient(spec=[written(3, "8")]))
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(),
                                options=ScheduleOptions(multiple_pod_templates=True))

    with caplog.at_level(logging.INFO, logger=PASSES):
        assert await run.pass_() is PassOutcome.SCHEDULED

    assert [line.rsplit("(", 1)[1].split(",")[0] for line in decision_lines(caplog)] == ["ScaleSchedule"]


# -- a pass whose only write is a status write ----------------------------------------------------------------

TERMINATING = Forbidden(403, "Forbidden", "namespace default is being terminated",
                        {"details": {"causes": [{"reason": "NamespaceTerminating", "message": "terminating"}]}})


def recording() -> dict[str, Any]:
    """Needs no decision, only its generation recorded (a status write alone)."""
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 1, "conditions": [SCHEDULED_TRUE]}
    return body


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_a_lone_status_write_refused_with_409_is_counted_and_requeued(body: dict[str, Any]) -> None:
    run = Run(body, ScriptedClient(status=[CONFLICT]))
    assert await run.pass_() is PassOutcome.CONFLICT
    assert run.writes(WriteKind.STATUS, WriteResult.CONFLICT) == 1
    assert run.events.recorded == []


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_a_lone_status_write_in_a_terminating_namespace_forgets_the_binding(body: dict[str, Any]) -> None:
    run = Run(body, ScriptedClient(status=[TERMINATING]))
    assert await run.pass_() is PassOutcome.FORGOTTEN
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1
    assert run.events.recorded == []


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_a_lone_status_write_that_fails_is_counted_and_raised(body: dict[str, Any]) -> None:
    failure = ServerError(500, "InternalError", "etcd is unhappy")
    run = Run(body, ScriptedClient(status=[failure]))
    with pytest.raises(ServerError):
        await run.pass_()
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_a_lone_status_write_refused_by_the_closed_gate_is_counted_and_raised(body: dict[str, Any]) -> None:
    run = Run(body, ScriptedClient(status=[WriteGateClosed("scheduler shut down")]))
    with pytest.raises(WriteGateClosed):
        await run.pass_()
    assert run.writes(WriteKind.STATUS, WriteResult.GATE_CLOSED) == 1


async def test_a_binding_without_a_name_is_ignored_with_one_error_line_and_no_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = binding(replicas=1, placement=placement())
    del body["metadata"]["name"]
    client = ScriptedClient()
    run = Run(body, client)

    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await run.pass_("default/")

    assert outcome is PassOutcome.ERROR
    assert client.sent == [] and run.events.recorded == []
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(
        logging.ERROR, "binding default/ (ResourceBinding): not scheduled: Unreadable: ignored: metadata.name: is "
        "required (attempt 1)")]


async def test_an_object_of_another_kind_is_ignored_with_one_error_line_and_no_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = binding(replicas=1, placement=placement())
    body["kind"] = "Deployment"
    client = ScriptedClient()
    run = Run(body, client)

    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await run.pass_()

    assert outcome is PassOutcome.ERROR
    assert client.sent == []
    assert caplog.messages == [
        "binding default/web (Deployment): not scheduled: Unreadable: ignored: kind: 'Deployment' is not one of "
        "ResourceBinding, ClusterResourceBinding (attempt 1)"]


async def test_a_spec_write_the_server_applied_as_a_no_op_is_not_assumed() -> None:
    """Karmada v1.18.2 stores a multi-component result without what our comparison saw, so the pass patches what
    the server already holds: the answer keeps the resourceVersion, nothing changed, nothing is assumed."""
    unchanged = {"metadata": {"resourceVersion": "7", "generation": 1}}
    run = protected(binding(replicas=2, placement=DIVIDED), ScriptedClient(spec=[unchanged]))

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert not run.ctx.assumptions.holds("default/web")
