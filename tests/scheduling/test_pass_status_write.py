"""A pass's status write (Karmada's pkg/scheduler/scheduler.go: patchBindingStatusCondition): fenced with the
version the spec write returned or the one read, sent again after a 409 when only the status moved, skipped when the
stored status already holds it, the generation recorded when no decision is needed, a refusal's condition, and the
lone status write's 409, terminating namespace, failure and closed gate."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from binding_scheduler.kube.errors import Forbidden, ServerError
from binding_scheduler.kube.gate import WriteGateClosed
from binding_scheduler.model import ObjectMeta, StoredBinding
from binding_scheduler.scheduling.observability.labels import PassOutcome, WriteKind, WriteResult
from binding_scheduler.scheduling.passes.context import PassTracker
from binding_scheduler.scheduling.passes.run import _refuse
from testsupport.builders import binding, placement
from testsupport.passes import (
    CONFLICT,
    DIVIDED,
    NO_PLACEMENT,
    OTHER_CONDITION,
    PASSES,
    PATH,
    SCHEDULER_ERROR,
    SUCCESS,
    TERMINATING,
    ForgettingClient,
    GateClosedClient,
    Run,
    ScriptedClient,
    at_now,
    placed_body,
    recording,
    scheduled,
    write_status,
    written,
)


async def test_status_write_fenced_with_spec_writes_version() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    run = Run(binding(replicas=1, placement=placement()), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.SCHEDULED
    assert client.versions() == [("spec", "7"), ("status", "8")]
    status = client.sent[1][2]["status"]
    assert status["schedulerObservedGeneration"] == 2
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [("Scheduled", "True", "Success")]
    assert run.store.is_own_write({"metadata": {"name": "web", "namespace": "default", "generation": 2}})
    assert (run.writes(WriteKind.SPEC, WriteResult.OK), run.writes(WriteKind.STATUS, WriteResult.OK)) == (1, 1)


async def test_held_decision_writes_only_fenced_status() -> None:
    client = ScriptedClient()
    run = Run(placed_body(), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.SCHEDULED
    assert client.versions() == [("status", "7")]
    assert client.sent[0][2]["status"]["schedulerObservedGeneration"] == 2


async def test_status_409_after_our_spec_write_resent_on_fresh_read(
) -> None:
    fresh = {"metadata": {"resourceVersion": "9", "generation": 2}, "status": {}}
    client = ScriptedClient(spec=[written(2, "8")], status=[CONFLICT, {}], fresh=fresh)
    run = Run(binding(replicas=1, placement=placement()), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.SCHEDULED
    assert client.versions() == [("spec", "7"), ("status", "8"), ("status", "9")]
    assert client.sent[2][0] == "get"
    assert (run.writes(WriteKind.STATUS, WriteResult.CONFLICT), run.writes(WriteKind.STATUS, WriteResult.OK)) == (1, 1)


async def test_status_409_after_spec_moved_on_requeues_unwritten() -> None:
    fresh = {"metadata": {"resourceVersion": "9", "generation": 3}, "status": {}}
    client = ScriptedClient(spec=[written(2, "8")], status=[CONFLICT], fresh=fresh)
    run = Run(binding(replicas=1, placement=placement()), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.CONFLICT
    assert client.versions() == [("spec", "7"), ("status", "8")]
    assert run.events.recorded == []


async def test_second_409_on_status_write_requeues() -> None:
    fresh = {"metadata": {"resourceVersion": "9", "generation": 2}, "status": {}}
    client = ScriptedClient(spec=[written(2, "8")], status=[CONFLICT, CONFLICT], fresh=fresh)
    run = Run(binding(replicas=1, placement=placement()), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.CONFLICT
    assert client.versions() == [("spec", "7"), ("status", "8"), ("status", "9")]


async def test_status_409_without_spec_write_not_resent() -> None:
    client = ScriptedClient(status=[CONFLICT])
    run = Run(placed_body(), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.CONFLICT
    assert client.versions() == [("status", "7")]


async def test_binding_needing_no_decision_records_generation_fenced() -> None:
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 1, "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    client = ScriptedClient()
    run = Run(body, client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.SKIPPED
    assert client.sent == [("status", "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web/status",
                            {"metadata": {"resourceVersion": "7"}, "status": {"schedulerObservedGeneration": 2}})]
    assert run.events.recorded == []


async def test_observed_generation_writes_nothing() -> None:
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 2, "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    client = ScriptedClient()

    outcome = await Run(body, client).pass_()

    assert outcome is PassOutcome.SKIPPED
    assert client.sent == []


async def test_409_on_recording_generation_requeues() -> None:
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 1, "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    run = Run(body, ScriptedClient(status=[CONFLICT]))

    assert await run.pass_() is PassOutcome.CONFLICT
    assert run.writes(WriteKind.STATUS, WriteResult.CONFLICT) == 1


async def test_deleted_during_spec_write_gets_status_write() -> None:
    """The status write is fenced with the version the spec write returned; the API server answers for a
    binding that is gone. The pass does not stumble over the store having forgotten it."""
    run = Run(binding(replicas=1, placement=placement()), ScriptedClient())
    run.ctx.client = ForgettingClient(run.store)

    assert await run.pass_() is PassOutcome.SCHEDULED
    assert [kind for kind, _, _ in run.ctx.client.sent] == ["spec", "status"]


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_lone_status_409_counted_and_requeued(body: dict[str, Any]) -> None:
    run = Run(body, ScriptedClient(status=[CONFLICT]))
    assert await run.pass_() is PassOutcome.CONFLICT
    assert run.writes(WriteKind.STATUS, WriteResult.CONFLICT) == 1
    assert run.events.recorded == []


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_lone_status_write_terminating_forgets(body: dict[str, Any]) -> None:
    run = Run(body, ScriptedClient(status=[TERMINATING]))
    assert await run.pass_() is PassOutcome.FORGOTTEN
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1
    assert run.events.recorded == []


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_lone_status_write_that_fails_is_counted_and_raised(body: dict[str, Any]) -> None:
    failure = ServerError(500, "InternalError", "etcd is unhappy")
    run = Run(body, ScriptedClient(status=[failure]))
    with pytest.raises(ServerError):
        await run.pass_()
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1


@pytest.mark.parametrize("body", [recording(), binding(replicas=1)], ids=["recording-the-generation", "refusal"])
async def test_closed_gate_lone_status_write_raised(body: dict[str, Any]) -> None:
    run = Run(body, ScriptedClient(status=[WriteGateClosed("scheduler shut down")]))
    with pytest.raises(WriteGateClosed):
        await run.pass_()
    assert run.writes(WriteKind.STATUS, WriteResult.GATE_CLOSED) == 1


# -- the status write ------------------------------------------------------------------------------------------


async def test_status_write_records_affinity_term_decision_chose() -> None:
    client = ScriptedClient()
    run = at_now(Run(binding(replicas=1, placement=placement()), client))

    assert await write_status(run, SUCCESS, affinity_name="primary") is None

    assert client.sent == [("status", PATH + "/status", {
        "metadata": {"resourceVersion": "8"},
        "status": {"conditions": [scheduled("True", "Success", "Binding has been scheduled successfully.")],
                   "schedulerObservedGeneration": 2, "lastScheduledTime": "2026-03-01T12:00:00Z",
                   "schedulerObservingAffinityName": "primary"}})]


async def test_status_write_stored_status_already_holds_is_not_sent() -> None:
    body = binding(replicas=1, placement=placement())
    body["status"] = {"conditions": [
        {"type": "Scheduled", "status": "False", "reason": "SchedulerError", "message": "etcd is unhappy",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    client = ScriptedClient()
    run = at_now(Run(body, client))

    assert await write_status(run, SCHEDULER_ERROR) is None

    assert client.sent == []
    assert run.writes(WriteKind.STATUS, WriteResult.OK) == 0


async def test_status_resent_after_409_keeps_fresh_conditions() -> None:
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


async def test_fresh_read_without_version_never_unfenced() -> None:
    fresh = {"metadata": {"generation": 2}, "status": {}}
    client = ScriptedClient(status=[CONFLICT, {}], fresh=fresh)
    run = at_now(Run(binding(replicas=1, placement=placement()), client))

    with pytest.raises(ValueError, match="a fenced write needs the resourceVersion"):
        await write_status(run, SCHEDULER_ERROR, after_spec_write=True)

    assert [kind for kind, _, _ in client.sent] == ["status", "get"]


async def test_409_on_status_write_is_logged_and_requeues(caplog: pytest.LogCaptureFixture) -> None:
    client = ScriptedClient(status=[CONFLICT])
    run = at_now(Run(binding(replicas=1, placement=placement()), client))

    with caplog.at_level(logging.INFO, logger=PASSES):
        outcome = await write_status(run, SCHEDULER_ERROR)

    assert outcome is PassOutcome.CONFLICT
    assert caplog.messages == ["binding default/web changed before its status write (409): requeued"]
    assert run.writes(WriteKind.STATUS, WriteResult.CONFLICT) == 1


async def test_forbidden_status_write_is_counted_as_error_and_raised() -> None:
    refused = Forbidden(403, "Forbidden", "resourcebindings/status is forbidden")
    run = at_now(Run(binding(replicas=1, placement=placement()), ScriptedClient(status=[refused])))

    with pytest.raises(Forbidden) as raised:
        await write_status(run, SCHEDULER_ERROR)

    assert raised.value is refused
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1


async def test_closed_gate_status_write_counted_and_raised() -> None:
    run = at_now(Run(binding(replicas=1, placement=placement()), GateClosedClient()))

    with pytest.raises(WriteGateClosed):
        await write_status(run, SCHEDULER_ERROR)

    assert run.writes(WriteKind.STATUS, WriteResult.GATE_CLOSED) == 1


async def test_failed_status_write_counted_and_raised() -> None:
    failure = ServerError(500, "InternalError", "etcd is unhappy")
    run = at_now(Run(binding(replicas=1, placement=placement()), ScriptedClient(status=[failure])))

    with pytest.raises(ServerError) as raised:
        await write_status(run, SCHEDULER_ERROR)

    assert raised.value is failure
    assert run.writes(WriteKind.STATUS, WriteResult.ERROR) == 1


async def test_recording_generation_counts_one_successful_status_write() -> None:
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 1, "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    run = Run(body, ScriptedClient())

    assert await run.pass_() is PassOutcome.SKIPPED

    assert run.writes(WriteKind.STATUS, WriteResult.OK) == 1


async def test_refused_binding_gets_fenced_condition() -> None:
    client = ScriptedClient()
    run = at_now(Run(binding(replicas=1), client))

    assert await run.pass_() is PassOutcome.ERROR

    assert client.sent == [("status", PATH + "/status", {
        "metadata": {"resourceVersion": "7"},
        "status": {"conditions": [scheduled("False", "SchedulerError", NO_PLACEMENT)]}})]
    assert (run.writes(WriteKind.STATUS, WriteResult.OK), run.writes(WriteKind.EVENT, WriteResult.OK)) == (1, 1)


async def test_stated_refusal_writes_and_posts_nothing() -> None:
    body = binding(replicas=1)
    body["status"] = {"conditions": [
        {"type": "Scheduled", "status": "False", "reason": "SchedulerError", "message": NO_PLACEMENT,
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    client = ScriptedClient()
    run = at_now(Run(body, client))

    assert await run.pass_() is PassOutcome.ERROR

    assert client.sent == []
    assert run.events.recorded == []


async def test_refusal_read_without_version_never_unfenced() -> None:
    body = binding(replicas=1)
    client = ScriptedClient()
    run = at_now(Run(body, client))
    del body["metadata"]["resourceVersion"]

    with pytest.raises(ValueError, match="a fenced write needs the resourceVersion"):
        await _refuse(StoredBinding(body, ObjectMeta.of(body)), NO_PLACEMENT, run.ctx, PassTracker("default/web"))

    assert client.sent == []
