"""What a pass reports and writes about itself (Karmada's pkg/scheduler/scheduler.go:
patchScheduleResultForResourceBinding, patchBindingStatusCondition, recordScheduleResultEventForResourceBinding): the
one decision line it logs, the refusal of a binding that cannot be scheduled, the status write and its counts, the
condition for a failed write, the outcome for the queue, the events' involved objects, the reference of a cluster-
scoped binding, and the framework and context a pass is built from."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from binding_scheduler.algorithm.errors import ConditionVerdict, FitError, SchedulingError, condition_for
from binding_scheduler.algorithm.plugins import AttemptContext, CycleState
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.algorithm.triggers import ScheduleType
from binding_scheduler.algorithm.walk import Decision
from binding_scheduler.kube.bindings import BindingRef
from binding_scheduler.kube.errors import Forbidden, ServerError, TransportError
from binding_scheduler.kube.gate import WriteGateClosed
from binding_scheduler.model import Binding, Cluster, ObjectMeta, StoredBinding, TargetCluster, parse_binding
from binding_scheduler.scheduling.framework.hooks import FrameworkHook
from binding_scheduler.scheduling.framework.ports import ReplicaEstimator
from binding_scheduler.scheduling.framework.runner import Framework
from binding_scheduler.scheduling.observability.labels import PassOutcome, WriteKind, WriteResult
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, PassTracker
from binding_scheduler.scheduling.passes.run import (
    GROUP_VERSION,
    Attempt,
    _log_decision,
    _outcome_of,
    _refuse,
    _with_write_error,
    _write_status,
    binding_ref,
    involved_binding,
    run_pass,
)
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from binding_scheduler.scheduling.state.workload_groups import WorkloadGroupIndex
from tests.scheduling.test_pass_writes import CONFLICT, DIVIDED, Run, ScriptedClient, placed_body, written
from testsupport.builders import binding, make_binding, placement, snapshot

PASSES = "binding_scheduler.scheduling.passes.run"
NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
PATH = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web"
NO_PLACEMENT = "failed to get placement from resourceBinding(default/web)"
FIT_ERROR_TEXT = "0/1 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint."
OTHER_CONDITION = {"type": "Ready", "status": "True", "reason": "Fine", "message": "all good",
                   "lastTransitionTime": "2026-01-01T00:00:00Z"}


def fit_error() -> FitError:
    return FitError(1, {"m1": "cluster(s) did not match the placement cluster affinity constraint"})


def scheduled(status: str, reason: str, message: str) -> dict[str, str]:
    """The Scheduled condition as a pass writes it at NOW."""
    return {"type": "Scheduled", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-03-01T12:00:00Z"}


def at_now(run: Run) -> Run:
    run.ctx.now = lambda: NOW
    return run


def parsed(body: Mapping[str, Any]) -> Binding:
    result = parse_binding(body)
    assert isinstance(result, Binding)
    return result


class GateClosedClient(ScriptedClient):
    """Every patch is refused by the closed write gate."""

    async def patch_merge(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self.sent.append(("status" if path.endswith("/status") else "spec", path, body))
        raise WriteGateClosed("leadership lost")


class Settling:
    """A Reserve and Bind plugin: records what it was told, with the clusters of each decision."""

    name = "Settling"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, tuple[str, ...]]] = []

    def reserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.calls.append(("reserve", binding.key, tuple(t.name for t in result)))

    def unreserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.calls.append(("unreserve", binding.key, tuple(t.name for t in result)))

    def bound(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.calls.append(("bound", binding.key, tuple(t.name for t in result)))


def settling(client: ScriptedClient) -> tuple[Run, Settling]:
    plugin = Settling()
    run = Run(binding(replicas=1, placement=placement()), client)
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(extra=[plugin]))
    return run, plugin


async def write_status(
    run: Run, verdict: ConditionVerdict, *, affinity_name: str | None = None, after_spec_write: bool = False
) -> PassOutcome | None:
    """The status write of the stored default/web, fenced with version 8 (as after a spec write) at generation 2."""
    body = run.store.body("default/web")
    assert body is not None
    target = parsed(body)
    return await _write_status(target, binding_ref(target), verdict, run.ctx, version="8", generation=2,
                               affinity_name=affinity_name, after_spec_write=after_spec_write)


SUCCESS = condition_for(None)
SCHEDULER_ERROR = ConditionVerdict("False", "SchedulerError", "etcd is unhappy", retry=True)


# -- the decision line ---------------------------------------------------------------------------------------


async def test_the_decision_line_names_the_binding_its_scope_its_clusters_the_trigger_the_time_and_the_try(
    caplog: pytest.LogCaptureFixture,
) -> None:
    decision = Decision((TargetCluster("m1", 2), TargetCluster("m2", 0)), None, None)

    with caplog.at_level(logging.INFO, logger=PASSES):
        _log_decision(make_binding(replicas=2, placement=placement()), SUCCESS, decision,
                      Attempt(ScheduleType.SCALE, 0.0, 3), 2.0)

    assert caplog.messages == [
        "binding default/web (ResourceBinding): scheduled to m1:2,m2 (ScaleSchedule, 2000 ms, attempt 3)"]


async def test_a_scheduled_decision_carries_no_message_in_its_fields(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=PASSES):
        _log_decision(make_binding(replicas=1, placement=placement()), SUCCESS,
                      Decision((TargetCluster("m1", 1),), None, None), Attempt(ScheduleType.RECONCILE, 0.0, 1), 0.01)

    (record,) = caplog.records
    fields = record.__dict__["fields"]
    assert (fields["reason"], fields["message"], fields["clusters"]) == (
        "Success", "", [{"name": "m1", "replicas": 1}])


async def test_a_refusal_names_the_attempt_it_was_in(caplog: pytest.LogCaptureFixture) -> None:
    run = at_now(Run(binding(replicas=1), ScriptedClient()))
    tracker = PassTracker("default/web")
    tracker.attempt = 3

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run_pass("default/web", run.ctx, run.settings, tracker)

    assert [r.getMessage() for r in caplog.records] == [
        f"binding default/web (ResourceBinding): not scheduled: SchedulerError: {NO_PLACEMENT} (attempt 3)"]


async def test_an_unreadable_object_names_the_attempt_it_was_in(caplog: pytest.LogCaptureFixture) -> None:
    body = binding(replicas=1, placement=placement())
    body["kind"] = "Deployment"
    run = Run(body, ScriptedClient())
    tracker = PassTracker("default/web")
    tracker.attempt = 2

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run_pass("default/web", run.ctx, run.settings, tracker)

    assert [r.getMessage()[-11:] for r in caplog.records] == ["(attempt 2)"]


async def test_an_object_without_kind_or_name_is_named_by_question_marks(caplog: pytest.LogCaptureFixture) -> None:
    body = binding(replicas=1, placement=placement())
    del body["kind"], body["metadata"]["name"], body["metadata"]["namespace"]
    run = Run(body, ScriptedClient())

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run.pass_("")

    assert [r.getMessage().split(": not scheduled: ")[0] for r in caplog.records] == ["binding ? (?)"]


async def test_a_decision_placing_on_no_cluster_is_logged_as_scheduled_to_a_dash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger=PASSES):
        _log_decision(make_binding(placement=placement()), SUCCESS, Decision((), None, None),
                      Attempt(ScheduleType.RECONCILE, 0.0, 1), 0.015)

    assert caplog.messages == [
        "binding default/web (ResourceBinding): scheduled to - (ReconcileSchedule, 15 ms, attempt 1)"]


async def test_a_failed_decision_is_logged_with_the_reason_and_message_of_its_condition(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = fit_error()
    decision = Decision(None, None, error)

    with caplog.at_level(logging.INFO, logger=PASSES):
        _log_decision(make_binding("role", cluster_scoped=True, placement=placement()), condition_for(error),
                      decision, Attempt(ScheduleType.RECONCILE, 0.0, 2), 0.015)

    assert caplog.messages == [
        f"binding role (ClusterResourceBinding): not scheduled: NoClusterFit: {FIT_ERROR_TEXT} "
        "(ReconcileSchedule, 15 ms, attempt 2)"]


# -- the condition for a failed spec write ---------------------------------------------------------------------


async def test_a_write_error_after_a_fit_error_is_a_retried_false_no_cluster_fit_naming_both() -> None:
    write_error = ServerError(500, "InternalError", "etcd is unhappy")

    assert _with_write_error(fit_error(), write_error) == (
        write_error, ConditionVerdict("False", "NoClusterFit", f"[{FIT_ERROR_TEXT}, etcd is unhappy]", retry=True))


async def test_a_quota_refusal_of_the_spec_write_is_a_retried_false_quota_exceeded_with_its_own_text() -> None:
    write_error = Forbidden(403, "QuotaExceeded", "exceeded quota: frq, requested: cpu=2")

    assert _with_write_error(SchedulingError("decision failed"), write_error) == (
        write_error, ConditionVerdict("False", "QuotaExceeded", "exceeded quota: frq, requested: cpu=2", retry=True))


async def test_any_other_spec_write_error_is_a_retried_false_scheduler_error_with_its_text() -> None:
    write_error = TransportError("cannot connect to host 127.0.0.1:6443")

    assert _with_write_error(None, write_error) == (
        write_error, ConditionVerdict("False", "SchedulerError", "cannot connect to host 127.0.0.1:6443", retry=True))


# -- the outcome for the queue ---------------------------------------------------------------------------------


async def test_a_fit_error_that_is_not_retried_ends_the_pass_as_no_cluster_fit() -> None:
    error = fit_error()

    assert _outcome_of(error, condition_for(error)) is PassOutcome.NO_CLUSTER_FIT


async def test_an_error_that_is_not_a_fit_error_is_never_no_cluster_fit_even_when_not_retried() -> None:
    verdict = ConditionVerdict("False", "SchedulerError", "boom", retry=False)

    assert _outcome_of(SchedulingError("boom"), verdict) is PassOutcome.ERROR


# -- the status write ------------------------------------------------------------------------------------------


async def test_the_status_write_records_the_affinity_term_the_decision_chose() -> None:
    client = ScriptedClient()
    run = at_now(Run(binding(replicas=1, placement=placement()), client))

    assert await write_status(run, SUCCESS, affinity_name="primary") is None

    assert client.sent == [("status", PATH + "/status", {
        "metadata": {"resourceVersion": "8"},
        "status": {"conditions": [scheduled("True", "Success", "Binding has been scheduled successfully.")],
                   "schedulerObservedGeneration": 2, "lastScheduledTime": "2026-03-01T12:00:00Z",
                   "schedulerObservingAffinityName": "primary"}})]


async def test_a_status_write_the_stored_status_already_holds_is_not_sent() -> None:
    body = binding(replicas=1, placement=placement())
    body["status"] = {"conditions": [
        {"type": "Scheduled", "status": "False", "reason": "SchedulerError", "message": "etcd is unhappy",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    client = ScriptedClient()
    run = at_now(Run(body, client))

    assert await write_status(run, SCHEDULER_ERROR) is None

    assert client.sent == []
    assert run.writes(WriteKind.STATUS, WriteResult.OK) == 0


async def test_a_status_write_sent_again_after_a_409_rereads_the_binding_and_keeps_its_fresh_conditions() -> None:
    fresh = {"metadata": {"resourceVersion": "9", "generation": 2}, "status": {"conditions": [OTHER_CONDITION]}}
    client = ScriptedClient(status=[CONFLICT, {}], fresh=fresh)
    run = at_now(Run(binding(replicas=1, placement=placement()), client))

    assert await write_status(run, SCHEDULER_ERROR, after_spec_write=True) is None

    condition = scheduled("False", "SchedulerError", "etcd is unhappy")
    assert client.sent == [
        ("status", PATH + "/status", {"metadata": {"resourceVersion": "8"}, "status": {"conditions": [condition]}}),
        ("get", PATH, {}),
        ("status", PATH + "/status",
         {"metadata": {"resourceVersion": "9"}, "status": {"conditions": [OTHER_CONDITION, condition]}}),
    ]


async def test_a_fresh_read_without_a_resource_version_is_never_answered_with_an_unfenced_status_write() -> None:
    fresh = {"metadata": {"generation": 2}, "status": {}}
    client = ScriptedClient(status=[CONFLICT, {}], fresh=fresh)
    run = at_now(Run(binding(replicas=1, placement=placement()), client))

    with pytest.raises(ValueError, match="a fenced write needs the resourceVersion"):
        await write_status(run, SCHEDULER_ERROR, after_spec_write=True)

    assert [kind for kind, _, _ in client.sent] == ["status", "get"]


async def test_a_409_on_the_status_write_is_logged_and_requeues(caplog: pytest.LogCaptureFixture) -> None:
    client = ScriptedClient(status=[CONFLICT])
    run = at_now(Run(binding(replicas=1, placement=placement()), client))

    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await write_status(run, SCHEDULER_ERROR)

    assert outcome is PassOutcome.CONFLICT
    assert caplog.messages == ["binding default/web changed before its status write (409): requeued"]
    assert run.writes(WriteKind.STATUS, WriteResult.CONFLICT) == 1


async def test_a_forbidden_status_write_is_counted_as_an_error_and_raised() -> None:
    refused = Forbidden(403, "Forbidden", "resourcebindings/status is forbidden")
    run = at_now(Run(binding(replicas=1, placement=placement()), ScriptedClient(status=[refused])))

    with pytest.raises(Forbidden) as raised:
        await write_status(run, SCHEDULER_ERROR)

    assert raised.value is refused
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1


async def test_a_status_write_refused_by_the_closed_write_gate_is_counted_as_gate_closed_and_raised() -> None:
    run = at_now(Run(binding(replicas=1, placement=placement()), GateClosedClient()))

    with pytest.raises(WriteGateClosed):
        await write_status(run, SCHEDULER_ERROR)

    assert run.writes(WriteKind.STATUS, WriteResult.GATE_CLOSED) == 1


async def test_a_status_write_the_api_server_fails_is_counted_as_an_error_and_raised() -> None:
    failure = ServerError(500, "InternalError", "etcd is unhappy")
    run = at_now(Run(binding(replicas=1, placement=placement()), ScriptedClient(status=[failure])))

    with pytest.raises(ServerError) as raised:
        await write_status(run, SCHEDULER_ERROR)

    assert raised.value is failure
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1


async def test_recording_the_generation_counts_one_successful_status_write() -> None:
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 1, "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    run = Run(body, ScriptedClient())

    assert await run.pass_() is PassOutcome.SKIPPED

    assert run.writes(WriteKind.STATUS, WriteResult.OK) == 1


# -- a binding refused as it is ----------------------------------------------------------------------------------


async def test_a_refused_binding_is_logged_as_a_warning_naming_it_and_why(caplog: pytest.LogCaptureFixture) -> None:
    run = at_now(Run(binding(replicas=1), ScriptedClient()))

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run.pass_()

    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(
        logging.WARNING,
        f"binding default/web (ResourceBinding): not scheduled: SchedulerError: {NO_PLACEMENT} (attempt 1)")]


async def test_a_refused_binding_gets_its_condition_fenced_with_the_read_version_and_counts_its_writes() -> None:
    client = ScriptedClient()
    run = at_now(Run(binding(replicas=1), client))

    assert await run.pass_() is PassOutcome.ERROR

    assert client.sent == [("status", PATH + "/status", {
        "metadata": {"resourceVersion": "7"},
        "status": {"conditions": [scheduled("False", "SchedulerError", NO_PLACEMENT)]}})]
    assert (run.writes(WriteKind.STATUS, WriteResult.OK), run.writes(WriteKind.EVENT, WriteResult.OK)) == (1, 1)


async def test_a_refusal_the_condition_already_states_writes_nothing_and_posts_no_event() -> None:
    body = binding(replicas=1)
    body["status"] = {"conditions": [
        {"type": "Scheduled", "status": "False", "reason": "SchedulerError", "message": NO_PLACEMENT,
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    client = ScriptedClient()
    run = at_now(Run(body, client))

    assert await run.pass_() is PassOutcome.ERROR

    assert client.sent == []
    assert run.events.recorded == []


async def test_a_refusal_of_a_binding_read_without_a_resource_version_is_never_sent_unfenced() -> None:
    body = binding(replicas=1)
    client = ScriptedClient()
    run = at_now(Run(body, client))
    del body["metadata"]["resourceVersion"]

    with pytest.raises(ValueError, match="a fenced write needs the resourceVersion"):
        await _refuse(StoredBinding(body, ObjectMeta.of(body)), NO_PLACEMENT, run.ctx, PassTracker("default/web"))

    assert client.sent == []


# -- events ----------------------------------------------------------------------------------------------------


async def test_each_event_pair_counts_one_event_write() -> None:
    body = binding(replicas=1, placement=placement())
    body["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"
    run = Run(body, ScriptedClient())

    assert await run.pass_() is PassOutcome.SKIPPED

    assert len(run.events.recorded) == 2
    assert run.writes(WriteKind.EVENT, WriteResult.OK) == 1


async def test_an_event_on_a_cluster_resource_binding_names_no_namespace() -> None:
    body = binding("role", cluster_scoped=True, uid="")

    assert involved_binding(ObjectMeta.of(body)) == {
        "apiVersion": GROUP_VERSION, "kind": "ClusterResourceBinding", "namespace": "", "name": "role", "uid": ""}


async def test_an_event_on_a_binding_body_missing_its_kind_and_metadata_names_them_empty() -> None:
    empty = {"apiVersion": GROUP_VERSION, "kind": "", "namespace": "", "name": "", "uid": ""}
    assert involved_binding(ObjectMeta.of({})) == empty


# -- references, settlement, the framework and the context -------------------------------------------------------


async def test_a_cluster_resource_binding_is_referenced_by_its_kind_and_name_only() -> None:
    ref = binding_ref(make_binding("role", cluster_scoped=True, placement=placement()))

    assert ref == BindingRef(kind="ClusterResourceBinding", name="role")
    assert ref.path() == "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/role"


async def test_a_decision_whose_placement_landed_is_told_to_the_bind_plugins_after_its_reserve() -> None:
    run, plugin = settling(ScriptedClient(spec=[written(2, "8")]))

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert plugin.calls == [("reserve", "default/web", ("m1",)), ("bound", "default/web", ("m1",))]


async def test_a_decision_whose_spec_write_failed_is_unreserved_and_never_told_bound() -> None:
    run, plugin = settling(ScriptedClient(spec=[ServerError(500, "InternalError", "etcd is unhappy")]))

    assert await run.pass_() is PassOutcome.ERROR
    assert plugin.calls == [("reserve", "default/web", ("m1",)), ("unreserve", "default/web", ("m1",))]


async def test_a_decision_refused_with_a_409_on_its_spec_write_is_unreserved() -> None:
    run, plugin = settling(ScriptedClient(spec=[CONFLICT]))

    assert await run.pass_() is PassOutcome.CONFLICT
    assert [call for call, _, _ in plugin.calls] == ["reserve", "unreserve"]


async def test_a_decision_whose_spec_write_raised_is_unreserved_before_the_error_goes_on() -> None:
    run, plugin = settling(ScriptedClient(spec=[WriteGateClosed("the write gate is closed")]))

    with pytest.raises(WriteGateClosed):
        await run.pass_()
    assert [call for call, _, _ in plugin.calls] == ["reserve", "unreserve"]


async def test_every_plugin_of_a_pass_sees_its_cycle_state_and_may_keep_data_there() -> None:
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


async def test_the_framework_of_a_pass_is_built_from_its_settings() -> None:
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


async def test_a_pass_context_keeps_the_assumption_cache_and_the_workload_groups_it_is_given() -> None:
    assumptions = AssumptionCache()
    groups = WorkloadGroupIndex()
    run = Run(binding(replicas=1, placement=placement()), ScriptedClient())

    ctx = PassContext(client=run.ctx.client, events=run.events, bindings=run.store, clusters=run.ctx.clusters,
                      metrics=run.metrics, assumptions=assumptions, workload_groups=groups)

    assert ctx.assumptions is assumptions
    assert ctx.workload_groups is groups
