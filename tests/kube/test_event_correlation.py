"""Events correlated as client-go's EventCorrelator does: repeats counted on one Event by a patch, a 404 on the
patch creates it again, the tenth distinct message of a reason combined, 25 Events per object then one every
5 minutes, every cache bounded. A fake clock: nothing sleeps."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, EventRecorder, WriteGate, WriteGateClosed
from binding_scheduler.kube.event_correlator import MAX_LRU_CACHE_ENTRIES, EventCorrelator
from binding_scheduler.kube.events import event_body
from tests.kube.helpers import FakeTime

BINDING = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "namespace": "default",
           "name": "web-deployment", "uid": "u-rb"}
TEMPLATE = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web", "uid": "u-1"}
FAILED = "ScheduleBindingFailed"
NO_FIT = "0/3 clusters are available: 3 cluster(s) did not have the API resource."
EVENTS = "/api/v1/namespaces/default/events"
T0 = "2023-11-14T22:13:20Z"  # EPOCH


@pytest.fixture
def clock() -> FakeTime:
    return FakeTime()


@pytest.fixture
def recorder(client: ApiClient, clock: FakeTime) -> EventRecorder:
    return EventRecorder(client, "default-scheduler", clock=clock, wall_clock=clock)


def writes(api: DevCluster) -> list[tuple[str, str, int]]:
    return [(entry.method, entry.path, entry.status) for entry in api.journal if entry.is_write]


def events_about(api: DevCluster, name: str) -> list[dict[str, Any]]:
    return [event for event in api.store.list("events", namespace="default")
            if event["involvedObject"]["name"] == name]


async def test_repeated_event_patches_its_count(
    api: DevCluster, recorder: EventRecorder, clock: FakeTime
) -> None:
    for _ in range(4):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
        clock.advance(10)
    (event,) = events_about(api, "web-deployment")
    name = event["metadata"]["name"]
    assert writes(api) == [("POST", EVENTS, 201)] + [("PATCH", f"{EVENTS}/{name}", 200)] * 3
    assert [entry.body for entry in api.journal if entry.method == "PATCH"] == [
        {"count": count, "lastTimestamp": f"2023-11-14T22:13:{20 + 10 * (count - 1)}Z", "message": NO_FIT}
        for count in (2, 3, 4)
    ]
    assert (event["count"], event["firstTimestamp"], event["lastTimestamp"], event["message"]) == (
        4, T0, "2023-11-14T22:13:50Z", NO_FIT)
    assert (recorder.created, recorder.patched, recorder.dropped, recorder.failures) == (1, 3, 0, 0)


async def test_event_gone_404_is_created_again(
    api: DevCluster, recorder: EventRecorder
) -> None:
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    (first,) = events_about(api, "web-deployment")
    name = first["metadata"]["name"]
    api.store.delete("events", name, "default")  # expired (--event-ttl) or deleted
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert writes(api) == [("POST", EVENTS, 201), ("PATCH", f"{EVENTS}/{name}", 404), ("POST", EVENTS, 201)]
    assert api.journal[-1].body["metadata"] == {"name": name, "namespace": "default"}
    (again,) = events_about(api, "web-deployment")
    assert (again["metadata"]["name"], again["count"], again["firstTimestamp"]) == (name, 2, T0)
    assert (recorder.created, recorder.patched, recorder.failures) == (2, 0, 0)


async def test_repeat_after_404_patches_new_event(
    api: DevCluster, recorder: EventRecorder
) -> None:
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    (first,) = events_about(api, "web-deployment")
    api.store.delete("events", first["metadata"]["name"], "default")
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert [method for method, _, _ in writes(api)] == ["POST", "PATCH", "POST", "PATCH"]
    (event,) = events_about(api, "web-deployment")
    assert event["count"] == 3


async def test_failed_first_post_made_by_next_repeat(
    api: DevCluster, recorder: EventRecorder
) -> None:
    api.faults.add(method="POST", path="/events$", status=500, times=1)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert writes(api) == [("POST", EVENTS, 500), ("POST", EVENTS, 201)]
    (event,) = events_about(api, "web-deployment")
    assert (event["count"], event["firstTimestamp"], recorder.failures) == (2, T0, 1)


async def test_failed_patch_logged_next_repeat_patches(
    api: DevCluster, recorder: EventRecorder
) -> None:
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    api.faults.add(method="PATCH", path="/events/", status=500, times=1)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert [(method, status) for method, _, status in writes(api)] == [("POST", 201), ("PATCH", 500),
                                                                       ("PATCH", 200)]
    (event,) = events_about(api, "web-deployment")
    assert (event["count"], recorder.failures) == (3, 1)


async def test_concurrent_repeats_are_counted_on_one_event(api: DevCluster, recorder: EventRecorder) -> None:
    await asyncio.gather(*(recorder.record(BINDING, "Warning", FAILED, NO_FIT) for _ in range(5)))
    assert [method for method, _, _ in writes(api)] == ["POST", "PATCH", "PATCH", "PATCH", "PATCH"]
    (event,) = events_about(api, "web-deployment")
    assert event["count"] == 5
    assert recorder._turns == {}  # a turn is forgotten once nobody waits for it


async def test_same_event_on_binding_and_on_template_is_two_events(
    api: DevCluster, recorder: EventRecorder
) -> None:
    for _ in range(2):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
        await recorder.record(TEMPLATE, "Warning", FAILED, NO_FIT)
    assert [method for method, _, _ in writes(api)] == ["POST", "POST", "PATCH", "PATCH"]
    assert [event["count"] for event in events_about(api, "web-deployment") + events_about(api, "web")] == [2, 2]


async def test_tenth_distinct_message_of_reason_is_combined(api: DevCluster, recorder: EventRecorder) -> None:
    for i in range(10):
        await recorder.record(BINDING, "Warning", FAILED, f"no fit {i}")
    assert [method for method, _, _ in writes(api)] == ["POST"] * 10
    messages = sorted(event["message"] for event in events_about(api, "web-deployment"))
    assert messages == ["(combined from similar events): no fit 9"] + [f"no fit {i}" for i in range(9)]


async def test_further_distinct_messages_are_counted_on_combined_event(
    api: DevCluster, recorder: EventRecorder
) -> None:
    for i in range(13):
        await recorder.record(BINDING, "Warning", FAILED, f"no fit {i}")
    (combined,) = [event for event in events_about(api, "web-deployment") if event["message"].startswith("(")]
    name = combined["metadata"]["name"]
    assert writes(api)[9:] == [("POST", EVENTS, 201)] + [("PATCH", f"{EVENTS}/{name}", 200)] * 3
    assert (combined["count"], combined["message"]) == (4, "(combined from similar events): no fit 12")
    assert len(events_about(api, "web-deployment")) == 10


async def test_first_nine_messages_keep_own_events(
    api: DevCluster, recorder: EventRecorder
) -> None:
    for i in range(11):
        await recorder.record(BINDING, "Warning", FAILED, f"no fit {i}")
    await recorder.record(BINDING, "Warning", FAILED, "no fit 0")
    (first,) = [event for event in events_about(api, "web-deployment") if event["message"] == "no fit 0"]
    assert api.journal[-1].path == f"{EVENTS}/{first['metadata']['name']}"
    assert first["count"] == 2


async def test_messages_not_combined_after_600_quiet_seconds(
    api: DevCluster, recorder: EventRecorder, clock: FakeTime
) -> None:
    for i in range(9):
        await recorder.record(BINDING, "Warning", FAILED, f"no fit {i}")
    clock.advance(600.5)
    await recorder.record(BINDING, "Warning", FAILED, "no fit 9")
    assert api.journal[-1].body["message"] == "no fit 9"


async def test_messages_at_exactly_600_seconds_still_combined(
    api: DevCluster, recorder: EventRecorder, clock: FakeTime
) -> None:
    for i in range(9):
        await recorder.record(BINDING, "Warning", FAILED, f"no fit {i}")
        clock.advance(600)  # the window slides: each Event of the group renews it
    await recorder.record(BINDING, "Warning", FAILED, "no fit 9")
    assert api.journal[-1].body["message"] == "(combined from similar events): no fit 9"


async def test_messages_of_different_reasons_are_not_combined(api: DevCluster, recorder: EventRecorder) -> None:
    for i in range(10):
        await recorder.record(BINDING, "Warning", f"Reason{i}", "no fit")
    assert {event["message"] for event in events_about(api, "web-deployment")} == {"no fit"}


async def test_burst_drops_26th_event_and_refills_after_300s(
    api: DevCluster, recorder: EventRecorder, clock: FakeTime
) -> None:
    for _ in range(25):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert [method for method, _, _ in writes(api)] == ["POST"] + ["PATCH"] * 24  # a patch takes a token too
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    clock.advance(299.9)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert (len(writes(api)), recorder.dropped) == (25, 2)
    clock.advance(0.1)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert (len(writes(api)), recorder.dropped) == (26, 3)
    (event,) = events_about(api, "web-deployment")
    assert event["count"] == 28  # the dropped ones are counted, as in client-go (counting runs before the filter)


async def test_one_bucket_per_object_and_type(
    api: DevCluster, recorder: EventRecorder
) -> None:
    for i in range(26):
        await recorder.record(BINDING, "Warning", f"Reason{i}", NO_FIT)
    assert (len(writes(api)), recorder.dropped) == (25, 1)


async def test_each_event_type_has_own_bucket(api: DevCluster, recorder: EventRecorder) -> None:
    for _ in range(26):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    await recorder.record(BINDING, "Normal", "ScheduleBindingSucceed", "ok")
    assert api.journal[-1].body["type"] == "Normal"
    assert (len(writes(api)), recorder.dropped) == (26, 1)


async def test_different_objects_have_independent_buckets(api: DevCluster, recorder: EventRecorder) -> None:
    for _ in range(26):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    await recorder.record(TEMPLATE, "Warning", FAILED, NO_FIT)
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert writes(api)[-1] == ("POST", EVENTS, 201)
    assert api.journal[-1].body["involvedObject"] == TEMPLATE
    assert recorder.dropped == 2


async def test_closed_gate_raises_for_repeat_and_writes_nothing(
    api: DevCluster, recorder: EventRecorder, gate: WriteGate
) -> None:
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    gate.close("shutdown")
    with pytest.raises(WriteGateClosed):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert [method for method, _, _ in writes(api)] == ["POST"]


async def test_closed_gate_raises_for_event_spam_filter_would_drop(
    api: DevCluster, recorder: EventRecorder, gate: WriteGate
) -> None:
    for _ in range(25):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    gate.close("shutdown")
    with pytest.raises(WriteGateClosed):
        await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert len(writes(api)) == 25


async def test_cancelled_patch_propagates(
    api: DevCluster, recorder: EventRecorder
) -> None:
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    api.faults.add(method="PATCH", hang=True, times=1)  # stays hung: released, it could land after the next
    patching = asyncio.create_task(recorder.record(BINDING, "Warning", FAILED, NO_FIT))
    await api.journal.wait_for(lambda entry: entry.method == "PATCH")
    patching.cancel()
    with pytest.raises(asyncio.CancelledError):
        await patching
    await recorder.record(BINDING, "Warning", FAILED, NO_FIT)
    assert api.journal[-1].body["count"] == 3
    (event,) = events_about(api, "web-deployment")
    assert event["count"] == 3


async def test_object_evicted_from_cache_gets_new_event(api: DevCluster, client: ApiClient) -> None:
    recorder = EventRecorder(client, "s", correlator=EventCorrelator(clock=FakeTime(), cache_size=2))
    for name in ("a", "b", "c", "a"):
        await recorder.record({**TEMPLATE, "name": name}, "Warning", FAILED, NO_FIT)
    assert [method for method, _, _ in writes(api)] == ["POST"] * 4
    assert [event["count"] for event in events_about(api, "a")] == [1, 1]


def test_caches_hold_4096_keys_lru() -> None:
    correlator = EventCorrelator(clock=FakeTime())

    def body(i: int) -> dict[str, Any]:
        return event_body({**TEMPLATE, "name": f"web-{i}"}, "Warning", FAILED, NO_FIT, "s", "h", T0)

    for i in range(MAX_LRU_CACHE_ENTRIES + 1):
        first = correlator.correlate(body(i))
        assert first is not None
        correlator.update_state(first.key, {"metadata": {"name": f"web-{i}.x"}, "count": 1})
    assert (len(correlator.log), len(correlator.groups), len(correlator.spam)) == (4096, 4096, 4096)
    evicted, kept = correlator.correlate(body(0)), correlator.correlate(body(MAX_LRU_CACHE_ENTRIES))
    assert evicted is not None and (evicted.name, evicted.body["count"]) == (None, 1)
    assert kept is not None and (kept.name, kept.body["count"]) == (f"web-{MAX_LRU_CACHE_ENTRIES}.x", 2)


def test_limits_are_client_gos_defaults() -> None:
    correlator = EventCorrelator()
    assert (correlator.burst, correlator.qps * 300, correlator.max_events, correlator.max_interval,
            correlator.log.size) == (25, 1.0, 10, 600.0, 4096)

