"""The API client: verbs, pagination, cancellation and the shared rate limiter."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, TokenBucket, WriteGate, load_connection, resource_path
from binding_scheduler.kube.connection import Connection
from binding_scheduler.kube.errors import ServerError, TooManyRequests, TransportError
from binding_scheduler.kube.gate import WriteGateClosed
from tests.kube.helpers import FakeTime, rb_body, rb_path


def test_resource_path_builds_every_shape() -> None:
    assert resource_path("", "v1", "events", "default") == "/api/v1/namespaces/default/events"
    assert resource_path("coordination.k8s.io", "v1", "leases", "karmada-system", "karmada-scheduler") == (
        "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/karmada-scheduler")
    assert resource_path("work.karmada.io", "v1alpha2", "clusterresourcebindings", None, "crb", "status") == (
        "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/crb/status")


async def test_create_get_put_patch_and_delete_round_trip(api: DevCluster, client: ApiClient) -> None:
    created = await client.create(rb_path(), rb_body("rb1"))
    assert (await client.get(rb_path("rb1")))["metadata"]["uid"] == created["metadata"]["uid"]
    replaced = await client.put(rb_path("rb1"), {**created, "spec": {**created["spec"], "replicas": 2}})
    patched = await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 5}})
    assert (replaced["spec"]["replicas"], patched["spec"]["replicas"]) == (2, 5)
    await client.delete(rb_path("rb1"))
    assert [(e.method, e.status) for e in api.journal] == [
        ("POST", 201), ("GET", 200), ("PUT", 200), ("PATCH", 200), ("DELETE", 200)]


async def test_write_without_answer_returns_empty_and_still_applies(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    assert await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 5}}, answer=False) == {}
    assert (await client.get(rb_path("rb1")))["spec"]["replicas"] == 5


async def test_write_without_answer_still_reads_the_error(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=500, message="etcd is unhappy", times=1)
    with pytest.raises(ServerError, match="etcd is unhappy") as raised:
        await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 5}}, answer=False)
    assert raised.value.status == 500


async def test_list_with_limit_follows_every_page(api: DevCluster, client: ApiClient) -> None:
    for index in range(5):
        await client.create(rb_path(), rb_body(f"rb{index}"))
    listed = await client.list(rb_path(), {"limit": 2})
    assert [item["metadata"]["name"] for item in listed["items"]] == [f"rb{i}" for i in range(5)]
    assert "continue" not in listed["metadata"]
    assert len(api.journal.filter("GET")) == 3


async def test_query_parameters_are_sent(api: DevCluster, client: ApiClient) -> None:
    await client.list(rb_path(), {"labelSelector": "a=b", "allowWatchBookmarks": True})
    assert api.journal[-1].query == {"labelSelector": "a=b", "allowWatchBookmarks": "true"}


async def test_cancelling_caller_aborts_request_in_flight(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    fault = api.faults.add(method="PATCH", hang=True)
    write = asyncio.create_task(client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}}))
    entry = await api.journal.wait_for(lambda e: e.method == "PATCH")
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    await client.get(rb_path("rb1"))  # a round trip: the server has seen the closed connection by now
    fault.release()
    await client.get(rb_path("rb1"))
    assert (entry.status, entry.finished) == (0, None)  # the server's handler was cancelled, not answered
    assert api.store.get("rb", "rb1", "default") == rb1


async def test_wait_for_rate_limit_token_is_cancellable(api: DevCluster) -> None:
    async with ApiClient(load_connection(str(api.kubeconfig_path)), WriteGate(), qps=0.001, burst=1) as kube:
        await kube.list(rb_path())
        waiting = asyncio.create_task(kube.list(rb_path()))
        await asyncio.sleep(0)
        assert kube.limiter.tokens < 0
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert len(api.journal) == 1
        assert kube.limiter.tokens == pytest.approx(0.0, abs=0.01)


async def test_bucket_lets_burst_then_spaces_by_qps() -> None:
    time = FakeTime(0.0)
    bucket = TokenBucket(10.0, 3, clock=time, sleep=time.sleep)
    for _ in range(5):
        await bucket.acquire()
    assert time.sleeps == [pytest.approx(0.1), pytest.approx(0.1)]


async def test_bucket_refills_at_qps_up_to_burst() -> None:
    time = FakeTime(0.0)
    bucket = TokenBucket(10.0, 3, clock=time, sleep=time.sleep)
    for _ in range(3):
        await bucket.acquire()
    time.advance(100.0)
    assert bucket.tokens == 3.0


async def test_waiters_queue_up_behind_each_other() -> None:
    slept: list[float] = []

    async def record(seconds: float) -> None:
        slept.append(seconds)

    bucket = TokenBucket(2.0, 1, clock=lambda: 0.0, sleep=record)
    for _ in range(3):
        await bucket.acquire()
    assert slept == [0.5, 1.0]


async def test_client_cannot_be_used_after_close(api: DevCluster) -> None:
    kube = ApiClient(load_connection(str(api.kubeconfig_path)), WriteGate())
    await kube.list(rb_path())
    await kube.close()
    with pytest.raises(RuntimeError, match="closed"):
        await kube.list(rb_path())


async def test_429_with_retry_after_is_sent_again_after_that_delay(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=429, retry_after=1, times=2)
    started = time.monotonic()
    answer = await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    assert answer["spec"]["replicas"] == 7
    assert [e.status for e in api.journal.filter("PATCH")] == [429, 429, 200]
    assert time.monotonic() - started >= 2.0


async def test_503_resent_only_with_retry_after(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="GET", status=503, retry_after=0, times=1)
    assert (await client.get(rb_path("rb1")))["metadata"]["name"] == "rb1"
    api.faults.add(method="GET", status=503, times=1)
    with pytest.raises(ServerError):
        await client.get(rb_path("rb1"))
    assert [e.status for e in api.journal.filter("GET")] == [503, 200, 503]


async def test_retry_after_is_honoured_at_most_ten_times(api: DevCluster, client: ApiClient) -> None:
    api.faults.add(method="GET", status=429, retry_after=0)
    with pytest.raises(TooManyRequests):
        await client.get(rb_path("rb1"))
    assert len(api.journal.filter("GET")) == 10


async def test_write_waiting_out_retry_after_stops_at_closed_gate(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=429, retry_after=1)
    write = asyncio.create_task(client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}}))
    await api.journal.wait_for(lambda e: e.method == "PATCH" and e.status == 429)
    gate.close("shutdown")
    with pytest.raises(WriteGateClosed):
        await write
    assert len(api.journal.filter("PATCH")) == 1


# -- writes in doubt: sent, and no answer says whether they were applied -------------------------------------


async def test_write_cut_while_in_flight_is_counted_in_doubt(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    fault = api.faults.add(method="PATCH", hang=True)
    write = asyncio.create_task(client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}}))
    await api.journal.wait_for(lambda e: e.method == "PATCH")
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    fault.release()
    assert gate.in_doubt == 1


async def test_write_answered_504_is_counted_in_doubt(api: DevCluster, client: ApiClient, gate: WriteGate,
                                                          rb1: dict[str, Any]) -> None:
    api.faults.add(method="PATCH", status=504, message="Timeout: request did not complete within 60s", times=1)
    with pytest.raises(ServerError):
        await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    assert gate.in_doubt == 1


async def test_write_with_no_answer_in_time_is_counted_in_doubt(api: DevCluster, gate: WriteGate,
                                                                   rb1: dict[str, Any]) -> None:
    api.faults.add(method="PATCH", hang=True)
    async with ApiClient(load_connection(str(api.kubeconfig_path)), gate, request_timeout=0.2) as client:
        with pytest.raises(TransportError, match=r"no answer within 0\.2s"):
            await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    assert gate.in_doubt == 1


async def test_answered_or_unsent_requests_not_in_doubt(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=500, message="etcd is unhappy", times=1)
    with pytest.raises(ServerError):
        await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    api.faults.add(method="GET", hang=True, times=1)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await client.get(rb_path("rb1"))
    refused = ApiClient(Connection(server="http://127.0.0.1:9"), gate)
    with pytest.raises(TransportError) as error:
        await refused.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    await refused.close()
    assert error.value.maybe_sent is False
    assert gate.in_doubt == 0


async def test_retried_504_write_not_in_doubt(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=504, retry_after=0, message="Timeout: request did not complete", times=1)
    await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    assert gate.in_doubt == 0


async def test_write_answered_504_twice_is_one_write_in_doubt(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=504, retry_after=0, message="Timeout: request did not complete", times=1)
    api.faults.add(method="PATCH", status=504, message="Timeout: request did not complete", times=1)
    with pytest.raises(ServerError):
        await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}})
    assert gate.in_doubt == 1


async def test_write_cancelled_before_it_was_sent_is_not_in_doubt(api: DevCluster, gate: WriteGate,
                                                                     rb1: dict[str, Any]) -> None:
    async with ApiClient(load_connection(str(api.kubeconfig_path)), gate, qps=0.001, burst=1) as slow:
        await slow.get(rb_path("rb1"))  # the one token
        write = asyncio.create_task(slow.patch_merge(rb_path("rb1"), {"spec": {"replicas": 7}}))
        await asyncio.sleep(0.05)  # waiting for a token, not sent
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write
    assert gate.in_doubt == 0
    assert api.journal.filter(method="PATCH") == []


def test_server_timeout_leaves_outcome_unknown() -> None:
    from binding_scheduler.kube.errors import Conflict, outcome_unknown

    assert outcome_unknown(ServerError(500, "ServerTimeout", "the server cannot complete the requested operation "
                                                            "at this time, try again later"))
    assert outcome_unknown(ServerError(504, "Timeout", "request did not complete within 60s"))
    assert not outcome_unknown(ServerError(500, "InternalError", "etcd is unhappy"))
    assert not outcome_unknown(Conflict(409, "Conflict", "the object has been modified"))
