"""A pass's writes, request by request (Karmada's pkg/scheduler/scheduler.go: patchScheduleResultForResourceBinding,
patchBindingStatusCondition): the fenced spec write, the status write fenced with the version the spec write returned,
the status write sent again after a 409 when only the status moved, the writes skipped when nothing changed, and the
generation recorded when no decision is needed."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.kube.errors import Conflict, ServerError
from binding_scheduler.model import parse_binding, parse_cluster
from binding_scheduler.scheduling.observability.labels import PassOutcome, WriteKind, WriteResult
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, PassTracker
from binding_scheduler.scheduling.passes.run import run_pass
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster, placement
from testsupport.fencing import fence

CONFLICT = Conflict(409, "Conflict", "the object has been modified")


class ScriptedClient:
    """Answers each patch with the next scripted answer for its kind (an error, or a body); records requests."""

    def __init__(self, *, spec: list[Any] | None = None, status: list[Any] | None = None,
                 fresh: Mapping[str, Any] | None = None) -> None:
        self.answers = {"spec": list(spec or []), "status": list(status or [])}
        self.fresh = fresh
        self.sent: list[tuple[str, str, Mapping[str, Any]]] = []

    async def patch_merge(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        kind = "status" if path.endswith("/status") else "spec"
        self.sent.append((kind, path, body))
        answer = self.answers[kind].pop(0) if self.answers[kind] else {}
        if isinstance(answer, Exception):
            raise answer
        return dict(answer)

    async def get(self, path: str) -> Mapping[str, Any]:
        self.sent.append(("get", path, {}))
        assert self.fresh is not None
        return self.fresh

    def versions(self) -> list[tuple[str, str]]:
        """(kind, resourceVersion precondition) of every write sent."""
        return [(kind, fence(body, f"the {kind} write to {path}")) for kind, path, body in self.sent if kind != "get"]


class Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[dict[str, str], str, str, str]] = []

    async def record(self, involved: Mapping[str, str], type: str, reason: str, message: str) -> None:
        self.recorded.append((dict(involved), type, reason, message))


class Run:
    def __init__(self, body: dict[str, Any], client: ScriptedClient, *clusters: str) -> None:
        self.store, fleet = BindingStore(), ClusterStore()
        self.store.upsert(body)
        for name in clusters or ("m1",):
            fleet.upsert(parse_cluster(cluster(name)))
        self.events = Events()
        self.metrics = SchedulerMetrics()
        self.ctx = PassContext(client=client, events=self.events, bindings=self.store, clusters=fleet,  # type: ignore[arg-type]
                               metrics=self.metrics)
        self.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins())

    async def pass_(self, key: str = "default/web") -> PassOutcome:
        return await run_pass(key, self.ctx, self.settings, PassTracker(key))

    def writes(self, kind: WriteKind, result: WriteResult) -> float:
        value = self.metrics.registry.get_sample_value(
            "binding_scheduler_writes_total", {"kind": kind.value, "result": result.value})
        return value or 0.0


def written(generation: int, version: str) -> dict[str, Any]:
    return {"metadata": {"resourceVersion": version, "generation": generation}}


def placed_body(chosen: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A binding at generation 2 whose applied placement and clusters already are what a pass decides (m1:1;
    Duplicated unless `chosen` says otherwise)."""
    body = binding(replicas=1, placement=chosen or placement(), clusters={"m1": 1}, generation=2)
    applied = parse_binding(body).placement
    assert applied is not None
    body["metadata"]["annotations"] = {
        "policy.karmada.io/applied-placement": json.dumps(applied.to_dict(), separators=(",", ":"))}
    return body


DIVIDED = placement(scheduling={"replicaSchedulingType": "Divided"})
"""Divided and placed on a cluster that exists: no decision is needed (Duplicated always reconciles)."""


async def test_the_status_write_is_fenced_with_the_version_and_generation_the_spec_write_returned() -> None:
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


async def test_the_spec_write_sends_the_applied_placement_and_the_clusters() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    run = Run(binding(replicas=3, placement=placement()), client, "m1", "m2")

    await run.pass_()

    kind, path, body = client.sent[0]
    assert (kind, path) == ("spec", "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web")
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}]
    assert body["metadata"]["annotations"] == {"policy.karmada.io/applied-placement": "{}"}


async def test_a_decision_the_binding_already_holds_writes_only_its_status_fenced_with_the_read_version() -> None:
    client = ScriptedClient()
    run = Run(placed_body(), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.SCHEDULED
    assert client.versions() == [("status", "7")]
    assert client.sent[0][2]["status"]["schedulerObservedGeneration"] == 2


async def test_a_result_held_with_its_zero_replicas_spelled_out_is_not_written_again() -> None:
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


async def test_a_409_on_the_status_write_after_our_spec_write_is_sent_again_against_a_fresh_read_of_that_generation(
) -> None:
    fresh = {"metadata": {"resourceVersion": "9", "generation": 2}, "status": {}}
    client = ScriptedClient(spec=[written(2, "8")], status=[CONFLICT, {}], fresh=fresh)
    run = Run(binding(replicas=1, placement=placement()), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.SCHEDULED
    assert client.versions() == [("spec", "7"), ("status", "8"), ("status", "9")]
    assert client.sent[2][0] == "get"
    assert (run.writes(WriteKind.STATUS, WriteResult.CONFLICT), run.writes(WriteKind.STATUS, WriteResult.OK)) == (1, 1)


async def test_a_409_on_the_status_write_after_our_spec_write_when_the_spec_moved_on_requeues_without_writing() -> None:
    fresh = {"metadata": {"resourceVersion": "9", "generation": 3}, "status": {}}
    client = ScriptedClient(spec=[written(2, "8")], status=[CONFLICT], fresh=fresh)
    run = Run(binding(replicas=1, placement=placement()), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.CONFLICT
    assert client.versions() == [("spec", "7"), ("status", "8")]
    assert run.events.recorded == []


async def test_a_second_409_on_the_status_write_requeues() -> None:
    fresh = {"metadata": {"resourceVersion": "9", "generation": 2}, "status": {}}
    client = ScriptedClient(spec=[written(2, "8")], status=[CONFLICT, CONFLICT], fresh=fresh)
    run = Run(binding(replicas=1, placement=placement()), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.CONFLICT
    assert client.versions() == [("spec", "7"), ("status", "8"), ("status", "9")]


async def test_a_409_on_the_status_write_without_a_spec_write_of_ours_is_not_sent_again() -> None:
    client = ScriptedClient(status=[CONFLICT])
    run = Run(placed_body(), client)

    outcome = await run.pass_()

    assert outcome is PassOutcome.CONFLICT
    assert client.versions() == [("status", "7")]


async def test_a_binding_needing_no_decision_records_its_generation_fenced() -> None:
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


async def test_a_binding_needing_no_decision_at_its_observed_generation_writes_nothing() -> None:
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 2, "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    client = ScriptedClient()

    outcome = await Run(body, client).pass_()

    assert outcome is PassOutcome.SKIPPED
    assert client.sent == []


async def test_a_409_on_recording_the_generation_requeues() -> None:
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 1, "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    run = Run(body, ScriptedClient(status=[CONFLICT]))

    assert await run.pass_() is PassOutcome.CONFLICT
    assert run.writes(WriteKind.STATUS, WriteResult.CONFLICT) == 1


async def test_a_successful_pass_posts_one_normal_event_on_the_binding_and_one_on_its_resource() -> None:
    client = ScriptedClient(spec=[written(2, "8")])
    run = Run(binding(replicas=1, placement=placement()), client)

    await run.pass_()

    involved = [(i["apiVersion"], i["kind"], i["namespace"], i["name"], i["uid"]) for i, *_ in run.events.recorded]
    assert involved == [("work.karmada.io/v1alpha2", "ResourceBinding", "default", "web", "uid-1"),
                        ("apps/v1", "Deployment", "default", "web", "res-uid-1")]
    assert {(type_, reason, message) for _, type_, reason, message in run.events.recorded} == {
        ("Normal", "ScheduleBindingSucceed", "Binding has been scheduled successfully. Result: {m1:1}")}


async def test_an_unknown_binding_key_is_forgotten_with_no_request() -> None:
    client = ScriptedClient()
    assert await Run(binding(replicas=1, placement=placement()), client).pass_("default/other") is (
        PassOutcome.FORGOTTEN)
    assert client.sent == []


# -- who must act on a failure: the log level and the error metric ------------------------------------------------

PASSES_LOGGER = "binding_scheduler.scheduling.passes.run"


def errors_by_fault(run: Run) -> dict[str, float | None]:
    return {fault: run.metrics.registry.get_sample_value("binding_scheduler_schedule_errors_total", {"fault": fault})
            for fault in ("owner", "operator")}


async def test_a_placement_the_owner_must_fix_is_a_warning_and_not_the_operators_error(
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


async def test_a_failure_of_the_schedulers_own_is_an_error_counted_for_the_operator(
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
