"""A pass's spec write (Karmada's pkg/scheduler/scheduler.go: patchScheduleResultForResourceBinding): the fenced
write of the applied placement and the clusters, the writes skipped when nothing changed, the condition and counts of a
failed or refused write (pkg/scheduler/helper.go: getConditionByError; scheduler.go: handleErr), and the reservation
kept, assumed and told to the bind plugins only when the placement landed."""

from __future__ import annotations

import logging

import pytest

from binding_scheduler.algorithm.errors import ConditionVerdict, SchedulingError
from binding_scheduler.kube.errors import Conflict, Forbidden, NotFound, ServerError, TransportError
from binding_scheduler.kube.gate import WriteGateClosed
from binding_scheduler.model import Binding
from binding_scheduler.scheduling.observability.labels import PassOutcome, WriteKind, WriteResult
from binding_scheduler.scheduling.passes.run import _with_write_error
from binding_scheduler.scheduling.state.workload_groups import WorkloadGroupIndex
from testsupport.builders import binding, names, placement
from testsupport.passes import (
    CONFLICT,
    DIVIDED,
    FIT_ERROR_TEXT,
    NAMESPACE_TERMINATING,
    PASSES,
    FakeClient,
    Run,
    ScriptedClient,
    fit_error,
    owing,
    placed_body,
    protected,
    run,
    settling,
    status_condition,
    written,
)


async def test_spec_write_sends_applied_placement_and_clusters() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    run = Run(binding(replicas=3, placement=placement()), client, "m1", "m2")

    await run.pass_()

    kind, path, body = client.sent[0]
    assert (kind, path) == ("spec", "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web")
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}]
    assert body["metadata"]["annotations"] == {"policy.karmada.io/applied-placement": "{}"}


async def test_explicit_zero_replicas_not_rewritten() -> None:
    """Karmada compares the decoded objects, where `{"name": "m1", "replicas": 0}` and `{"name": "m1"}` are one
    target (Go's `omitempty`): no spec write for a result the binding holds in either spelling."""
    body = placed_body()
    body["spec"].pop("replicas", None)
    body["spec"]["clusters"] = [{"name": "m1", "replicas": 0}]
    client = ScriptedClient()
    run = Run(body, client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.SCHEDULED
    assert client.versions() == [("status", "7")]


async def test_failed_spec_write_errs_and_retries() -> None:
    client = FakeClient(spec_error=ServerError(500, "InternalError", "etcd is unhappy"))
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.ERROR
    assert (status_condition(client)["reason"], status_condition(client)["message"]) == (
        "SchedulerError",
        "etcd is unhappy",
    )
    assert events.recorded[-1] == ("Deployment", "Warning", "ScheduleBindingFailed", "etcd is unhappy")


async def test_failed_clearing_write_is_no_cluster_fit_retried() -> None:
    client = FakeClient(spec_error=ServerError(500, "InternalError", "etcd is unhappy"))
    outcome, _ = await run(binding(replicas=1, placement=placement(affinity=names("m9"))), client, "m1")
    assert outcome is PassOutcome.ERROR
    condition = status_condition(client)
    assert condition["reason"] == "NoClusterFit"
    assert condition["message"] == (
        "[0/1 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint., "
        "etcd is unhappy]"
    )


async def test_quota_refusal_is_quota_exceeded_with_that_errors_text() -> None:
    client = FakeClient(spec_error=Forbidden(403, "QuotaExceeded", "exceeded quota: frq, requested: cpu=2"))
    outcome, _ = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.ERROR
    condition = status_condition(client)
    assert (condition["reason"], condition["message"]) == ("QuotaExceeded", "exceeded quota: frq, requested: cpu=2")


@pytest.mark.parametrize("where", ["spec", "status"])
async def test_terminating_namespace_is_forgotten(where: str) -> None:
    error = Forbidden(403, "Forbidden", "namespace default is being terminated", NAMESPACE_TERMINATING)
    client = FakeClient(**{f"{where}_error": error})
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.FORGOTTEN
    assert events.recorded == []


async def test_conflict_on_spec_write_writes_nothing_else() -> None:
    client = FakeClient(spec_error=Conflict(409, "Conflict", "the object has been modified"))
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.CONFLICT
    assert [path.rsplit("/", 1)[-1] for path, _ in client.sent] == ["web"]
    assert events.recorded == []


async def test_unanswered_spec_write_writes_error_condition() -> None:
    client = FakeClient(spec_error=TransportError("cannot connect to host 127.0.0.1:6443"))
    outcome, _ = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.ERROR
    condition = status_condition(client)
    assert (condition["reason"], condition["message"]) == ("SchedulerError", "cannot connect to host 127.0.0.1:6443")


async def test_deleted_after_read_is_forgotten() -> None:
    client = FakeClient(spec_error=NotFound(404, "NotFound", 'resourcebindings "web" not found'))
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.FORGOTTEN
    assert [path.rsplit("/", 1)[-1] for path, _ in client.sent] == ["web"]
    assert events.recorded == []


async def test_placement_that_landed_stays_assumed_on_clusters() -> None:
    run = protected(binding(replicas=2, placement=DIVIDED), ScriptedClient(spec=[written(2, "8")]))

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert run.ctx.assumptions.holds("default/web")
    assert list(run.ctx.assumptions.assumed_on("m1")) == ["default/web"]


async def test_result_already_in_place_is_not_assumed() -> None:
    """Karmada assumes only after a patch that changed something (scheduler.go: the empty-patch return comes
    before updateAssumptionsCache): a new leader deciding again what already runs must not count it twice."""
    run = protected(owing("m1"), ScriptedClient())

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert not run.ctx.assumptions.holds("default/web")
    assert run.ctx.assumptions.assumed_on("m1") == {}


async def test_redecided_duplicated_is_not_assumed() -> None:
    """What a new leader does at takeover: it decides every Duplicated binding again, and each already holds
    its result; assuming them would hide the capacity they use twice until the TTL (5 min)."""
    run = protected(placed_body(), ScriptedClient())

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert run.ctx.assumptions.assumed_on("m1") == {}


async def test_result_in_place_leaves_last_assumption() -> None:
    run = protected(owing("m1"), ScriptedClient())
    parsed = run.store.parsed("default/web")
    assert isinstance(parsed, Binding)
    run.ctx.assumptions.assume(parsed, list(parsed.clusters), multi_template=False)
    before = run.ctx.assumptions.assumed_on("m1")

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert run.ctx.assumptions.assumed_on("m1") == before != {}


async def test_placement_whose_spec_write_failed_is_assumed_nowhere() -> None:
    run = protected(binding(replicas=2, placement=DIVIDED),
                    ScriptedClient(spec=[ServerError(500, "InternalError", "etcd is unhappy")]))

    assert await run.pass_() is PassOutcome.ERROR
    assert not run.ctx.assumptions.holds("default/web")


# -- the spec write ---------------------------------------------------------------------------------------------


async def test_applied_placement_is_written_as_compact_json() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    await Run(binding(replicas=1, placement=placement(affinity=names("m1"))), client).pass_()
    assert client.sent[0][2]["metadata"]["annotations"] == {
        "policy.karmada.io/applied-placement": '{"clusterAffinity":{"clusterNames":["m1"]}}'}


@pytest.mark.parametrize(
    ("error", "result", "outcome", "line"),
    [
        (CONFLICT, WriteResult.CONFLICT, PassOutcome.CONFLICT,
         "binding default/web changed after our read (409): decision dropped, requeued"),
        (NotFound(404, "NotFound", 'resourcebindings "web" not found'), WriteResult.ERROR, PassOutcome.FORGOTTEN,
         "binding default/web was deleted after our read (404): forgotten"),
    ],
)
async def test_refused_spec_write_is_counted_logged_and_ends_pass(
    caplog: pytest.LogCaptureFixture, error: Exception, result: WriteResult, outcome: PassOutcome, line: str
) -> None:
    run = Run(binding(replicas=1, placement=placement()), ScriptedClient(spec=[error]))
    with caplog.at_level(logging.INFO, logger=PASSES):
        assert await run.pass_() is outcome
    assert line in caplog.messages
    assert run.writes(WriteKind.SPEC, result) == 1


async def test_spec_write_that_failed_is_counted_as_error() -> None:
    run = Run(binding(replicas=1, placement=placement()),
              ScriptedClient(spec=[ServerError(500, "InternalError", "etcd is unhappy")]))
    assert await run.pass_() is PassOutcome.ERROR
    assert run.writes(WriteKind.SPEC, WriteResult.ERROR) == 1
    assert run.writes(WriteKind.STATUS, WriteResult.OK) == 1


async def test_spec_write_refused_by_closed_gate_is_counted_and_raised() -> None:
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


async def test_spec_write_server_applied_as_no_op_is_not_assumed() -> None:
    """Karmada v1.18.2 stores a multi-component result without what our comparison saw, so the pass patches what
    the server already holds: the answer keeps the resourceVersion, nothing changed, nothing is assumed."""
    unchanged = {"metadata": {"resourceVersion": "7", "generation": 1}}
    run = protected(binding(replicas=2, placement=DIVIDED), ScriptedClient(spec=[unchanged]))

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert not run.ctx.assumptions.holds("default/web")


# -- the condition for a failed spec write ---------------------------------------------------------------------


async def test_write_error_after_fit_error_names_both() -> None:
    write_error = ServerError(500, "InternalError", "etcd is unhappy")

    assert _with_write_error(fit_error(), write_error) == (
        write_error, ConditionVerdict("False", "NoClusterFit", f"[{FIT_ERROR_TEXT}, etcd is unhappy]", retry=True))


async def test_quota_refusal_is_retried_quota_exceeded() -> None:
    write_error = Forbidden(403, "QuotaExceeded", "exceeded quota: frq, requested: cpu=2")

    assert _with_write_error(SchedulingError("decision failed"), write_error) == (
        write_error, ConditionVerdict("False", "QuotaExceeded", "exceeded quota: frq, requested: cpu=2", retry=True))


async def test_other_spec_write_error_is_scheduler_error() -> None:
    write_error = TransportError("cannot connect to host 127.0.0.1:6443")

    assert _with_write_error(None, write_error) == (
        write_error, ConditionVerdict("False", "SchedulerError", "cannot connect to host 127.0.0.1:6443", retry=True))


async def test_landed_decision_told_to_bind_plugins() -> None:
    run, plugin = settling(ScriptedClient(spec=[written(2, "8")]))

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert plugin.calls == [("reserve", "default/web", ("m1",)), ("bound", "default/web", ("m1",))]


async def test_failed_spec_write_unreserves_never_binds() -> None:
    run, plugin = settling(ScriptedClient(spec=[ServerError(500, "InternalError", "etcd is unhappy")]))

    assert await run.pass_() is PassOutcome.ERROR
    assert plugin.calls == [("reserve", "default/web", ("m1",)), ("unreserve", "default/web", ("m1",))]


async def test_decision_refused_with_409_on_spec_write_is_unreserved() -> None:
    run, plugin = settling(ScriptedClient(spec=[CONFLICT]))

    assert await run.pass_() is PassOutcome.CONFLICT
    assert [call for call, _, _ in plugin.calls] == ["reserve", "unreserve"]


async def test_raising_spec_write_unreserves_first() -> None:
    run, plugin = settling(ScriptedClient(spec=[WriteGateClosed("the write gate is closed")]))

    with pytest.raises(WriteGateClosed):
        await run.pass_()
    assert [call for call, _, _ in plugin.calls] == ["reserve", "unreserve"]
