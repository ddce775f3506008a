"""What a pass writes when its writes fail (Karmada's pkg/scheduler/helper.go: getConditionByError and
pkg/scheduler/scheduler.go: handleErr): the condition for aggregated errors, quota, a terminating namespace, and when
nothing is written at all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.kube.errors import Conflict, Forbidden, KubeError, NotFound, ServerError, TransportError
from binding_scheduler.model import parse_cluster
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, PassTracker
from binding_scheduler.scheduling.passes.run import PassOutcome, run_pass
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster, names, placement

NAMESPACE_TERMINATING = {"details": {"causes": [{"reason": "NamespaceTerminating", "message": "ns is terminating"}]}}


class FakeClient:
    """Answers spec and status patches from scripted errors; records what was sent."""

    def __init__(self, spec_error: KubeError | None = None, status_error: KubeError | None = None) -> None:
        self.spec_error, self.status_error = spec_error, status_error
        self.sent: list[tuple[str, Mapping[str, Any]]] = []

    async def patch_merge(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self.sent.append((path, body))
        error = self.status_error if path.endswith("/status") else self.spec_error
        if error is not None:
            raise error
        return {"metadata": {"resourceVersion": "8", "generation": 2}}


class Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[str, str, str, str]] = []

    async def record(self, involved: Mapping[str, str], type: str, reason: str, message: str) -> None:
        self.recorded.append((involved["kind"], type, reason, message))


async def run(body: dict[str, Any], client: FakeClient, *clusters: str) -> tuple[PassOutcome, Events]:
    bindings, fleet = BindingStore(), ClusterStore()
    bindings.upsert(body)
    for name in clusters:
        fleet.upsert(parse_cluster(cluster(name)))
    events = Events()
    ctx = PassContext(client=client, events=events, bindings=bindings, clusters=fleet, metrics=SchedulerMetrics())
    settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins())
    outcome = await run_pass("default/web", ctx, settings, PassTracker("default/web"))
    return outcome, events


def status_condition(client: FakeClient) -> Mapping[str, Any]:
    (body,) = [b for path, b in client.sent if path.endswith("/status")]
    (condition,) = body["status"]["conditions"]
    return condition


async def test_a_failed_spec_write_gives_a_scheduler_error_condition_and_a_retry() -> None:
    client = FakeClient(spec_error=ServerError(500, "InternalError", "etcd is unhappy"))
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.ERROR
    assert (status_condition(client)["reason"], status_condition(client)["message"]) == (
        "SchedulerError",
        "etcd is unhappy",
    )
    assert events.recorded[-1] == ("Deployment", "Warning", "ScheduleBindingFailed", "etcd is unhappy")


async def test_a_fit_error_whose_clearing_write_fails_is_no_cluster_fit_with_both_texts_and_retried() -> None:
    client = FakeClient(spec_error=ServerError(500, "InternalError", "etcd is unhappy"))
    outcome, _ = await run(binding(replicas=1, placement=placement(affinity=names("m9"))), client, "m1")
    assert outcome is PassOutcome.ERROR
    condition = status_condition(client)
    assert condition["reason"] == "NoClusterFit"
    assert condition["message"] == (
        "[0/1 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint., "
        "etcd is unhappy]"
    )


async def test_a_quota_refusal_is_quota_exceeded_with_that_errors_text() -> None:
    client = FakeClient(spec_error=Forbidden(403, "QuotaExceeded", "exceeded quota: frq, requested: cpu=2"))
    outcome, _ = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.ERROR
    condition = status_condition(client)
    assert (condition["reason"], condition["message"]) == ("QuotaExceeded", "exceeded quota: frq, requested: cpu=2")


@pytest.mark.parametrize("where", ["spec", "status"])
async def test_a_terminating_namespace_is_forgotten(where: str) -> None:
    error = Forbidden(403, "Forbidden", "namespace default is being terminated", NAMESPACE_TERMINATING)
    client = FakeClient(**{f"{where}_error": error})
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.FORGOTTEN
    assert events.recorded == []


async def test_a_conflict_on_the_spec_write_writes_nothing_else() -> None:
    client = FakeClient(spec_error=Conflict(409, "Conflict", "the object has been modified"))
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.CONFLICT
    assert [path.rsplit("/", 1)[-1] for path, _ in client.sent] == ["web"]
    assert events.recorded == []


async def test_a_binding_without_placement_gets_a_scheduler_error_condition_and_is_retried() -> None:
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


async def test_a_deleting_binding_gets_a_warning_on_itself_and_its_resource_and_no_write() -> None:
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


async def test_a_spec_write_that_got_no_answer_still_writes_a_scheduler_error_condition() -> None:
    client = FakeClient(spec_error=TransportError("cannot connect to host 127.0.0.1:6443"))
    outcome, _ = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.ERROR
    condition = status_condition(client)
    assert (condition["reason"], condition["message"]) == ("SchedulerError", "cannot connect to host 127.0.0.1:6443")


async def test_a_binding_deleted_after_our_read_is_forgotten_without_a_status_write() -> None:
    client = FakeClient(spec_error=NotFound(404, "NotFound", 'resourcebindings "web" not found'))
    outcome, events = await run(binding(replicas=1, placement=placement()), client, "m1")
    assert outcome is PassOutcome.FORGOTTEN
    assert [path.rsplit("/", 1)[-1] for path, _ in client.sent] == ["web"]
    assert events.recorded == []
