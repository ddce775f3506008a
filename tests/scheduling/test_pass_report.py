"""What a pass reports about itself (Karmada's pkg/scheduler/scheduler.go:
recordScheduleResultEventForResourceBinding): the one decision line it logs, the warning of a refused binding, the
Events and their involved objects, the outcome for the queue and the errors counted for the operator."""

from __future__ import annotations

import logging

import pytest

from binding_scheduler.algorithm.errors import ConditionVerdict, SchedulingError, condition_for
from binding_scheduler.algorithm.triggers import ScheduleType
from binding_scheduler.algorithm.walk import Decision
from binding_scheduler.kube.bindings import BindingRef
from binding_scheduler.kube.errors import ServerError
from binding_scheduler.model import ObjectMeta, TargetCluster
from binding_scheduler.scheduling.observability.labels import PassOutcome, WriteKind, WriteResult
from binding_scheduler.scheduling.passes.context import PassTracker
from binding_scheduler.scheduling.passes.run import (
    GROUP_VERSION,
    Attempt,
    _log_decision,
    _outcome_of,
    binding_ref,
    involved_binding,
    run_pass,
)
from testsupport.builders import binding, make_binding, placement
from testsupport.passes import (
    FIT_ERROR_TEXT,
    NO_PLACEMENT,
    PASSES,
    PASSES_LOGGER,
    SUCCESS,
    Run,
    ScriptedClient,
    at_now,
    decision_lines,
    errors_by_fault,
    fit_error,
    written,
)


async def test_success_posts_event_on_binding_and_resource() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    run = Run(binding(replicas=1, placement=placement()), client)

    await run.pass_()

    involved = [(i["apiVersion"], i["kind"], i["namespace"], i["name"], i["uid"]) for i, *_ in run.events.recorded]
    assert involved == [("work.karmada.io/v1alpha2", "ResourceBinding", "default", "web", "uid-1"),
                        ("apps/v1", "Deployment", "default", "web", "res-uid-1")]
    assert {(type_, reason, message) for _, type_, reason, message in run.events.recorded} == {
        ("Normal", "ScheduleBindingSucceed", "Binding has been scheduled successfully. Result: {m1:1}")}


async def test_owners_placement_error_is_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Karmada's reason stays SchedulerError; but a tenant's spreadByLabel is not the scheduler's fault, so it must
    not log ERROR on every retry nor fire the operator's alert."""
    unsupported = placement(spread=[{"spreadByLabel": "team", "minGroups": 1, "maxGroups": 1}])
    run = Run(binding(replicas=1, placement=unsupported), ScriptedClient())
    with caplog.at_level(logging.INFO, logger=PASSES_LOGGER):
        outcome = await run.pass_()

    assert outcome is PassOutcome.ERROR
    (record,) = [r for r in caplog.records if r.name == PASSES_LOGGER and "not scheduled" in r.getMessage()]
    assert record.levelname == "WARNING"
    assert "SchedulerError: failed to select clusters: just support cluster and region spread constraint" in (
        record.getMessage())
    assert errors_by_fault(run) == {"owner": 1.0, "operator": 0.0}


async def test_failure_of_schedulers_own_is_error_counted_for_operator(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failing = ScriptedClient(spec=[ServerError(500, "InternalError", "etcd is unhappy")])
    run = Run(binding(replicas=1, placement=placement()), failing)
    with caplog.at_level(logging.INFO, logger=PASSES_LOGGER):
        outcome = await run.pass_()

    assert outcome is PassOutcome.ERROR
    (record,) = [r for r in caplog.records if r.name == PASSES_LOGGER and "not scheduled" in r.getMessage()]
    assert record.levelname == "ERROR"
    assert errors_by_fault(run) == {"owner": 0.0, "operator": 1.0}


async def test_decision_logs_clusters_trigger_and_attempt(caplog: pytest.LogCaptureFixture) -> None:
    run = Run(binding(replicas=3, placement=placement()), ScriptedClient(spec=[written(2, "8")]), "m1", "m2")
    with caplog.at_level(logging.INFO, logger=PASSES):
        await run_pass("default/web", run.ctx, run.settings, PassTracker("default/web", attempt=3))
    assert decision_lines(caplog) == [
        "binding default/web (ResourceBinding): scheduled to m1:3,m2:3 (ReconcileSchedule, N ms, attempt 3)"]
    seconds = run.metrics.registry.get_sample_value("karmada_scheduler_e2e_scheduling_duration_seconds_sum",
                                                    {"result": "scheduled", "schedule_type": "ReconcileSchedule"})
    assert seconds is not None and 0 < seconds < 60


# -- the decision line ---------------------------------------------------------------------------------------


async def test_decision_line_names_everything(
    caplog: pytest.LogCaptureFixture,
) -> None:
    decision = Decision((TargetCluster("m1", 2), TargetCluster("m2", 0)), None, None)

    with caplog.at_level(logging.INFO, logger=PASSES):
        _log_decision(make_binding(replicas=2, placement=placement()), SUCCESS, decision,
                      Attempt(ScheduleType.SCALE, 0.0, 3), 2.0)

    assert caplog.messages == [
        "binding default/web (ResourceBinding): scheduled to m1:2,m2 (ScaleSchedule, 2000 ms, attempt 3)"]


async def test_scheduled_decision_carries_no_message_in_fields(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=PASSES):
        _log_decision(make_binding(replicas=1, placement=placement()), SUCCESS,
                      Decision((TargetCluster("m1", 1),), None, None), Attempt(ScheduleType.RECONCILE, 0.0, 1), 0.01)

    (record,) = caplog.records
    fields = record.__dict__["fields"]()  # called by the JSON log format only
    assert (fields["reason"], fields["message"], fields["clusters"]) == (
        "Success", "", [{"name": "m1", "replicas": 1}])


async def test_refusal_names_attempt_it_was_in(caplog: pytest.LogCaptureFixture) -> None:
    run = at_now(Run(binding(replicas=1), ScriptedClient()))
    tracker = PassTracker("default/web")
    tracker.attempt = 3

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run_pass("default/web", run.ctx, run.settings, tracker)

    assert [r.getMessage() for r in caplog.records] == [
        f"binding default/web (ResourceBinding): not scheduled: SchedulerError: {NO_PLACEMENT} (attempt 3)"]


async def test_unreadable_object_names_attempt_it_was_in(caplog: pytest.LogCaptureFixture) -> None:
    body = binding(replicas=1, placement=placement())
    body["kind"] = "Deployment"
    run = Run(body, ScriptedClient())
    tracker = PassTracker("default/web")
    tracker.attempt = 2

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run_pass("default/web", run.ctx, run.settings, tracker)

    assert [r.getMessage()[-11:] for r in caplog.records] == ["(attempt 2)"]


async def test_object_without_kind_or_name_is_named_by_question_marks(caplog: pytest.LogCaptureFixture) -> None:
    body = binding(replicas=1, placement=placement())
    del body["kind"], body["metadata"]["name"], body["metadata"]["namespace"]
    run = Run(body, ScriptedClient())

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run.pass_("")

    assert [r.getMessage().split(": not scheduled: ")[0] for r in caplog.records] == ["binding ? (?)"]


async def test_no_cluster_decision_logged_as_dash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger=PASSES):
        _log_decision(make_binding(placement=placement()), SUCCESS, Decision((), None, None),
                      Attempt(ScheduleType.RECONCILE, 0.0, 1), 0.015)

    assert caplog.messages == [
        "binding default/web (ResourceBinding): scheduled to - (ReconcileSchedule, 15 ms, attempt 1)"]


async def test_failed_decision_logs_condition_reason(
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


# -- the outcome for the queue ---------------------------------------------------------------------------------


async def test_unretried_fit_error_is_no_cluster_fit() -> None:
    error = fit_error()

    assert _outcome_of(error, condition_for(error)) is PassOutcome.NO_CLUSTER_FIT


async def test_other_error_is_never_no_cluster_fit() -> None:
    verdict = ConditionVerdict("False", "SchedulerError", "boom", retry=False)

    assert _outcome_of(SchedulingError("boom"), verdict) is PassOutcome.ERROR


# -- a binding refused as it is ----------------------------------------------------------------------------------


async def test_refused_binding_is_logged_as_warning_naming_it_and_why(caplog: pytest.LogCaptureFixture) -> None:
    run = at_now(Run(binding(replicas=1), ScriptedClient()))

    with caplog.at_level(logging.INFO, logger=PASSES):
        await run.pass_()

    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(
        logging.WARNING,
        f"binding default/web (ResourceBinding): not scheduled: SchedulerError: {NO_PLACEMENT} (attempt 1)")]


# -- events ----------------------------------------------------------------------------------------------------


async def test_each_event_pair_counts_one_event_write() -> None:
    body = binding(replicas=1, placement=placement())
    body["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"
    run = Run(body, ScriptedClient())

    assert await run.pass_() is PassOutcome.SKIPPED

    assert len(run.events.recorded) == 2
    assert run.writes(WriteKind.EVENT, WriteResult.OK) == 1


async def test_event_on_cluster_resource_binding_names_no_namespace() -> None:
    body = binding("role", cluster_scoped=True, uid="")

    assert involved_binding(ObjectMeta.of(body)) == {
        "apiVersion": GROUP_VERSION, "kind": "ClusterResourceBinding", "namespace": "", "name": "role", "uid": ""}


async def test_event_on_bare_body_names_them_empty() -> None:
    empty = {"apiVersion": GROUP_VERSION, "kind": "", "namespace": "", "name": "", "uid": ""}
    assert involved_binding(ObjectMeta.of({})) == empty


# -- references, settlement, the framework and the context -------------------------------------------------------


async def test_crb_referenced_by_kind_and_name() -> None:
    ref = binding_ref(make_binding("role", cluster_scoped=True, placement=placement()))

    assert ref == BindingRef(kind="ClusterResourceBinding", name="role")
    assert ref.path() == "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/role"
