"""Events: posted with generateName by our own client; failures swallowed; a closed gate and cancellation not."""

from __future__ import annotations

import asyncio
import logging

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, EventRecorder, WriteGate, WriteGateClosed

TEMPLATE = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web", "uid": "u-1"}
CLUSTER_SCOPED = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ClusterResourceBinding", "name": "crb",
                  "uid": "u-2"}
MESSAGE = "Binding has been scheduled successfully. Result: {m1:2, m2:1}"


async def test_event_posted_with_generate_name(
    api: DevCluster, client: ApiClient
) -> None:
    await EventRecorder(client, "default-scheduler").record(TEMPLATE, "Normal", "ScheduleBindingSucceed", MESSAGE)
    (entry,) = api.journal
    assert (entry.method, entry.path, entry.status) == ("POST", "/api/v1/namespaces/default/events", 201)
    body = entry.body
    assert body["metadata"] == {"generateName": "web.", "namespace": "default"}
    assert body["involvedObject"] == TEMPLATE
    assert (body["type"], body["reason"], body["message"], body["count"]) == (
        "Normal", "ScheduleBindingSucceed", MESSAGE, 1)
    assert body["source"]["component"] == "default-scheduler"
    assert body["firstTimestamp"] == body["lastTimestamp"]
    (stored,) = api.store.list("events", namespace="default")
    assert stored["metadata"]["name"].startswith("web.")
    assert len(stored["metadata"]["name"]) == len("web.") + 5


async def test_cluster_scoped_events_go_to_default(
    api: DevCluster, client: ApiClient
) -> None:
    await EventRecorder(client, "s").record(CLUSTER_SCOPED, "Warning", "ScheduleBindingFailed", "no fit")
    entry = api.journal[-1]
    assert entry.path == "/api/v1/namespaces/default/events"
    assert entry.body["involvedObject"] == CLUSTER_SCOPED


async def test_api_errors_are_swallowed_and_logged_once_per_reason(
    api: DevCluster, client: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    api.faults.add(method="POST", path="/events$", status=500)
    recorder = EventRecorder(client, "s")
    with caplog.at_level(logging.DEBUG, logger="binding_scheduler.kube.events"):
        for _ in range(3):
            await recorder.record(TEMPLATE, "Warning", "ScheduleBindingFailed", "boom")
        await recorder.record(TEMPLATE, "Normal", "ScheduleBindingSucceed", "ok")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "could not record event ScheduleBindingFailed (Warning) on Deployment default/web: "
        "500 InternalError: Internal error occurred: injected fault",
        "could not record event ScheduleBindingSucceed (Normal) on Deployment default/web: "
        "500 InternalError: Internal error occurred: injected fault",
    ]
    assert recorder.failures == 4


async def test_event_into_missing_namespace_is_swallowed(api: DevCluster, client: ApiClient) -> None:
    await EventRecorder(client, "s").record({**TEMPLATE, "namespace": "gone"}, "Normal", "R", "m")
    assert api.journal[-1].status == 404


async def test_closed_gate_propagates(api: DevCluster, client: ApiClient, gate: WriteGate) -> None:
    gate.close("shutdown")
    with pytest.raises(WriteGateClosed):
        await EventRecorder(client, "s").record(TEMPLATE, "Normal", "R", "m")
    assert list(api.journal) == []


async def test_cancellation_propagates(api: DevCluster, client: ApiClient) -> None:
    api.faults.add(method="POST", hang=True)
    posting = asyncio.create_task(EventRecorder(client, "s").record(TEMPLATE, "Normal", "R", "m"))
    await api.journal.wait_for(lambda entry: entry.method == "POST")
    posting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await posting
