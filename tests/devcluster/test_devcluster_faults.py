"""Fault injection and the request journal."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from binding_scheduler.devcluster import DevClient, DevCluster
from tests.devcluster.helpers import rb_body, rb_path, status_of


async def test_journal_records_method_path_query_status_and_body(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.journal.clear()
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}}, dryRun="All")
    await api.client.get(rb_path("nope"))
    first, second = api.journal
    assert (first.method, first.path, first.query, first.status, first.body) == (
        "PATCH", rb_path("rb1"), {"dryRun": "All"}, 200, {"spec": {"replicas": 2}})
    assert (second.method, second.path, second.status, second.body) == ("GET", rb_path("nope"), 404, None)
    assert first.time <= second.time
    assert api.journal.writes() == [first]


async def test_fault_fails_matching_requests_with_status(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.faults.add(method="PATCH", path=r"/resourcebindings/rb1$", status=503)
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    assert (status, body) == (503, status_of(503, "ServiceUnavailable", "The service is unavailable (injected fault)"))
    assert (await api.client.get(rb_path("rb1")))[0] == 200
    assert api.store.get("rb", "rb1", "default") == rb1


async def test_500_fault(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.faults.add(method="GET", path=r"rb1", status=500)
    status, body = await api.client.get(rb_path("rb1"))
    assert (status, body) == (500, status_of(500, "InternalError", "Internal error occurred: injected fault"))


async def test_409_fault_looks_like_conflict(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.faults.add(method="PATCH", status=409)
    status, body = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    assert (status, body["reason"], body["code"]) == (409, "Conflict", 409)


async def test_429_fault_carries_retry_after(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.faults.add(method="PATCH", status=429, retry_after=3)
    reply = await api.client.request("PATCH", rb_path("rb1"), {"spec": {"replicas": 2}},
                                     content_type="application/merge-patch+json")
    assert reply.status == 429
    assert reply.headers["Retry-After"] == "3"
    assert reply.body == status_of(429, "TooManyRequests",
                                   "Too many requests, please try again later (injected fault)",
                                   {"retryAfterSeconds": 3})


async def test_fault_with_times_applies_that_many_times(api: DevCluster, rb1: dict[str, Any]) -> None:
    fault = api.faults.add(method="GET", path="rb1", status=500, times=2)
    statuses = [(await api.client.get(rb_path("rb1")))[0] for _ in range(3)]
    assert statuses == [500, 500, 200]
    assert (fault.hits, fault.active) == (2, False)


async def test_removed_fault_stops_applying(api: DevCluster, rb1: dict[str, Any]) -> None:
    fault = api.faults.add(method="GET", status=500)
    fault.remove()
    assert (await api.client.get(rb_path("rb1")))[0] == 200


async def test_fault_matches_by_method(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.faults.add(method="DELETE", status=500)
    assert (await api.client.get(rb_path("rb1")))[0] == 200


async def test_delay_fault_holds_request_then_serves_it(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.faults.add(method="PATCH", delay=0.3)
    call = asyncio.create_task(api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}}))
    held = await api.journal.wait_for(lambda e: e.method == "PATCH")
    assert (held.status, call.done(), api.store.get("rb", "rb1", "default")["spec"]["replicas"]) == (0, False, 1)
    assert (await api.client.get(rb_path("rb1")))[0] == 200  # others are served meanwhile
    status, body = await call
    assert (status, body["spec"]["replicas"], held.status) == (200, 2, 200)
    (read,) = api.journal.filter("GET", r"/rb1$")
    assert held.finished is not None and read.finished is not None
    assert read.finished < held.finished  # the read was answered while the write was held
    assert held.finished - held.time >= 0.3  # held for its delay (a lower bound: a busy machine only adds)


async def test_hanging_request_is_served_when_released(api: DevCluster, rb1: dict[str, Any]) -> None:
    fault = api.faults.add(method="PATCH", hang=True)
    call = asyncio.create_task(api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}}))
    entry = await api.journal.wait_for(lambda e: e.method == "PATCH")
    await asyncio.sleep(0.01)
    assert (entry.status, call.done(), api.store.get("rb", "rb1", "default")["spec"]["replicas"]) == (0, False, 1)
    fault.release()
    status, body = await call
    assert (status, body["spec"]["replicas"], entry.status) == (200, 2, 200)


async def test_drop_fault_closes_connection_without_answer(api: DevCluster, rb1: dict[str, Any]) -> None:
    api.faults.add(method="PATCH", drop=True)
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ServerDisconnectedError):
            await session.patch(api.url + rb_path("rb1"), json={"spec": {"replicas": 2}},
                                headers={"Content-Type": "application/merge-patch+json"})
    assert api.journal.filter("PATCH")[0].status == 0
    assert api.store.get("rb", "rb1", "default") == rb1


async def test_end_watch_fault_ends_open_streams(api: DevCluster, rb1: dict[str, Any]) -> None:
    since = rb1["metadata"]["resourceVersion"]
    async with api.client.watch(rb_path(), resourceVersion=since) as stream:
        await api.journal.wait_for(lambda e: e.is_watch)
        api.faults.add(method="GET", path="resourcebindings", end_watch=True, times=1)
        assert await stream.next() is None
    assert len(api.faults) == 0


async def test_end_watch_fault_ends_new_stream_after_initial_events(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="GET", path="resourcebindings", end_watch=True, times=1)
    async with api.client.watch(rb_path()) as stream:
        assert await stream.collect() == [{"type": "ADDED", "object": rb1}]


async def test_end_watch_fault_leaves_plain_requests_alone(api: DevCluster, rb1: dict[str, Any]) -> None:
    fault = api.faults.add(method="GET", end_watch=True)
    assert (await api.client.list(rb_path()))[0] == 200
    assert fault.hits == 0


async def test_drop_fault_cuts_open_watch(api: DevCluster, rb1: dict[str, Any]) -> None:
    own = DevClient(api.url)
    try:
        async with own.watch(rb_path(), resourceVersion=rb1["metadata"]["resourceVersion"]) as stream:
            await api.journal.wait_for(lambda e: e.is_watch)
            api.faults.add(method="GET", path="resourcebindings", drop=True, times=1)
            assert await stream.next() is None
    finally:
        await own.close()


async def test_stop_releases_hanging_requests() -> None:
    api = await DevCluster().start()
    await api.client.create(rb_path(), rb_body("rb1"))
    api.faults.add(method="GET", hang=True)
    own = DevClient(api.url)
    try:
        call = asyncio.create_task(own.get(rb_path("rb1")))
        await api.journal.wait_for(lambda e: e.method == "GET")
        await api.stop()
        status, _ = await call
        assert status == 200
    finally:
        await own.close()


async def test_watch_error_fault_sends_error_event_then_ends_stream(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    since = rb1["metadata"]["resourceVersion"]
    async with api.client.watch(rb_path(), resourceVersion=since) as stream:
        await api.journal.wait_for(lambda e: e.is_watch)
        api.faults.add(method="GET", path="resourcebindings", watch_error=500, times=1)
        event = await stream.next()
        assert event is not None and event["type"] == "ERROR"
        assert (event["object"]["code"], event["object"]["reason"]) == (500, "InternalError")
        assert await stream.next() is None


async def test_cut_event_fault_sends_half_line_then_cuts_connection(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="GET", path="resourcebindings", cut_event=True, times=1)
    async with aiohttp.ClientSession() as session, session.get(
        api.url + rb_path(), params={"watch": "true"}
    ) as response:
        received = b""
        with pytest.raises(aiohttp.ClientPayloadError):
            async for chunk in response.content.iter_any():
                received += chunk
    assert received.endswith(b'{"type":"MODIFIED","object":{"kind":"Resou')
    assert received.count(b"\n") == 1  # the initial ADDED event, then the cut line


async def test_lost_answer_fault_applies_write_and_cuts_connection(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", path=r"/resourcebindings/rb1$", lose_answer=True, times=1)
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientError):
            async with session.patch(api.url + rb_path("rb1"), json={"spec": {"replicas": 9}},
                                     headers={"Content-Type": "application/merge-patch+json"}) as response:
                await response.read()
    assert api.store.get("rb", "rb1", "default")["spec"]["replicas"] == 9
