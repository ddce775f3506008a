"""What a pass decides before it writes (Karmada's pkg/scheduler/scheduler.go: doScheduleBinding and what it calls):
the bindings it refuses or ignores (invalid, without placement, deleting, of another kind, unknown), a decision over
its CPU limit, a lost condition decided again, reservations lost to other passes and the reserve plugins' failures, a
fit error, an unschedulable binding, skipped affinity terms, and the framework and context a pass is built from."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import cast

import pytest

from binding_scheduler.algorithm.plugins import AttemptContext, CycleState
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.model import Cluster, TargetCluster, parse_binding, parse_cluster
from binding_scheduler.scheduling.framework.hooks import FrameworkHook
from binding_scheduler.scheduling.framework.ports import ReplicaEstimator
from binding_scheduler.scheduling.framework.runner import Framework
from binding_scheduler.scheduling.observability.labels import PassOutcome
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, PassTracker, Phase
from binding_scheduler.scheduling.passes.run import run_pass
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from binding_scheduler.scheduling.state.workload_groups import WorkloadGroupIndex
from testsupport.builders import binding, cluster, make_binding, names, placement, snapshot, term
from testsupport.passes import (
    DIVIDED,
    EXPONENTIAL,
    PASSES,
    SCHEDULED_TRUE,
    WIDE,
    FakeClient,
    FullLedger,
    Run,
    ScriptedClient,
    attempts,
    condition_of,
    decision_lines,
    other,
    owing,
    placed_body,
    protected,
    run,
    status_condition,
    status_of,
    written,
)


async def test_unknown_binding_key_is_forgotten_with_no_request() -> None:
    client = ScriptedClient()
    assert await Run(binding(replicas=1, placement=placement()), client).pass_("default/other") is (
        PassOutcome.FORGOTTEN)
    assert client.sent == []


async def test_binding_without_placement_errs_and_retries() -> None:
    client = FakeClient()
    outcome, events = await run(binding(replicas=1), client, "m1")
    assert outcome is PassOutcome.ERROR
    assert [path.rsplit("/", 1)[-1] for path, _ in client.sent] == ["status"]
    condition = status_condition(client)
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False", "SchedulerError", "failed to get placement from resourceBinding(default/web)"
    )
    message = "failed to get placement from resourceBinding(default/web)"
    assert events.recorded == [("ResourceBinding", "Warning", "ScheduleBindingFailed", message)]


async def test_deleting_binding_gets_warnings_no_write() -> None:
    body = binding(replicas=1, placement=placement())
    body["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"
    client = FakeClient()
    outcome, events = await run(body, client, "m1")
    assert outcome is PassOutcome.SKIPPED
    assert client.sent == []
    assert events.recorded == [
        ("ResourceBinding", "Warning", "ScheduleBindingFailed", "skip schedule deleting resourceBinding: default/web"),
        ("Deployment", "Warning", "ScheduleBindingFailed", "skip schedule deleting resourceBinding: default/web"),
    ]


# -- bindings that cannot be scheduled as they are ------------------------------------------------------------


async def test_invalid_binding_gets_error_naming_field() -> None:
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


async def test_crb_without_placement_refused() -> None:
    body = binding("role", cluster_scoped=True)
    client = ScriptedClient()
    run = Run(body, client)

    outcome = await run.pass_("role")

    assert outcome is PassOutcome.ERROR
    message = "failed to get placement from clusterResourceBinding(role)"
    assert condition_of(client) == ("False", "SchedulerError", message)
    assert client.sent[0][1] == "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/role/status"


async def test_decision_over_cpu_limit_is_unschedulable() -> None:
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


async def test_conditionless_generation_is_decided(
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


async def test_generation_whose_decision_would_move_is_recorded(
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


async def test_reserve_failure_writes_no_placement_names_plugin() -> None:
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


async def test_reserve_failure_keeps_observed_term() -> None:
    client = ScriptedClient()
    run = Run(binding(replicas=2, placement=placement(affinities=[term("primary", "m1")])), client)
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(extra=[FullLedger()]))

    assert await run.pass_() is PassOutcome.ERROR
    assert "schedulerObservingAffinityName" not in status_of(client)


async def test_reserve_failure_keeps_earlier_term_warnings() -> None:
    client = ScriptedClient()
    terms = [term("gone", "nowhere"), term("primary", "m1")]
    run = Run(binding(replicas=2, placement=placement(affinities=terms)), client)
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(extra=[FullLedger()]))

    assert await run.pass_() is PassOutcome.ERROR
    warnings = [m for _, t, _, m in run.events.recorded if t == "Warning"]
    assert len(warnings) == 4  # the failed term's warning and the refusal, each on the binding and its resource
    assert warnings[0].startswith("failed to schedule ResourceBinding(default/web) with clusterAffiliates index(0)")


async def test_all_terms_failing_on_unplaced_is_no_cluster_fit() -> None:
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


async def test_decision_beaten_to_clusters_is_made_again() -> None:
    decided: list[int] = []

    async def racing(ctx: AttemptContext) -> None:
        decided.append(len(ctx.snapshot.clusters))
        if len(decided) == 1:  # another pass reserves on m1 while this one awaits its estimates
            run.ctx.assumptions.assume(other("rival"), (TargetCluster("m1", 1),), False)

    run = protected(binding(replicas=2, placement=DIVIDED), ScriptedClient(spec=[written(2, "8")]), during=racing)

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert decided == [1, 1]


async def test_thrice_beaten_decision_is_requeued(
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


async def test_fit_error_clears_clusters_without_retry(
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


async def test_too_few_replicas_is_unschedulable() -> None:
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


async def test_skipped_term_warns_used_term_named(
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


async def test_multi_component_binding_placed_nowhere_is_scaled(
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


async def test_nameless_binding_ignored_one_error(
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


async def test_other_kind_ignored_with_one_error_line(
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


async def test_plugins_share_cycle_state() -> None:
    seen: list[object] = []

    class Counting:
        name = "Counting"

        def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
            ctx.state.data["Counting"] = ctx.state.data.get("Counting", 0) + 1
            return None

        def score(self, ctx: AttemptContext, cluster: Cluster) -> int:
            seen.append(ctx.state.data["Counting"])
            return 0

        async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
            seen.append(ctx.state)
            return {}

    framework = Framework(build_plugins(extra=[Counting()]), assumptions=AssumptionCache())
    state = CycleState()

    decision = await framework.decide(make_binding(replicas=1, placement=placement()), snapshot("m1", "m2"), state)

    assert decision.clusters == (TargetCluster("m1", 1), TargetCluster("m2", 1))
    assert seen == [2, 2, state]
    assert state.versions == {"m1": 0, "m2": 0}


async def test_framework_of_pass_is_built_from_settings() -> None:
    estimator = cast(ReplicaEstimator, object())
    options = ScheduleOptions(cpu_limit=3.0)
    hook = FrameworkHook()
    assumptions = AssumptionCache()
    groups = WorkloadGroupIndex()
    plugins = build_plugins()

    framework = PassSettings(scheduler_name="default-scheduler", plugins=plugins, options=options,
                             estimator=estimator, hooks=(hook,), assumptions=assumptions,
                             workload_groups=groups).framework

    assert framework.plugins is plugins
    assert framework.estimator is estimator
    assert framework.options is options
    assert framework.hooks == (hook,)
    assert framework.assumptions is assumptions
    assert framework.workload_groups is groups


async def test_context_keeps_assumptions_and_groups_given() -> None:
    assumptions = AssumptionCache()
    groups = WorkloadGroupIndex()
    run = Run(binding(replicas=1, placement=placement()), ScriptedClient())

    ctx = PassContext(client=run.ctx.client, events=run.events, bindings=run.store, clusters=run.ctx.clusters,
                      metrics=run.metrics, assumptions=assumptions, workload_groups=groups)

    assert ctx.assumptions is assumptions
    assert ctx.workload_groups is groups
