"""The write gate: closed means no write leaves the process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, TokenBucket, WriteGate, WriteGateClosed
from binding_scheduler.kube.gate import LeadershipInDoubt
from tests.kube.helpers import rb_body, rb_path


def test_new_gate_is_open() -> None:
    gate = WriteGate()
    assert (gate.is_open, gate.reason) == (True, None)
    gate.check()


def test_close_is_idempotent_never_reopens() -> None:
    gate = WriteGate()
    gate.close("shutdown")
    gate.close("lease lost")
    assert (gate.is_open, gate.reason) == (False, "shutdown")
    with pytest.raises(WriteGateClosed) as caught:
        gate.check()
    assert caught.value.reason == "shutdown"


@pytest.mark.parametrize("verb", ["create", "put", "patch_merge", "delete"])
async def test_closed_gate_refuses_every_write(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any], verb: str
) -> None:
    gate.close("shutdown")
    calls = {
        "create": lambda: client.create(rb_path(), rb_body("rb2")),
        "put": lambda: client.put(rb_path("rb1"), rb1),
        "patch_merge": lambda: client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 1}}),
        "delete": lambda: client.delete(rb_path("rb1")),
    }
    with pytest.raises(WriteGateClosed, match=r"write gate is closed \(shutdown\)"):
        await calls[verb]()
    assert list(api.journal) == []
    assert api.store.get("rb", "rb1", "default") == rb1


def test_closed_gate_says_why_it_refuses() -> None:
    refused = WriteGateClosed("lease lost: held by b")
    assert (str(refused), refused.reason) == ("write refused: the write gate is closed (lease lost: held by b)",
                                              "lease lost: held by b")


def test_doubted_leadership_refuses_write_gate_open() -> None:
    doubt = LeadershipInDoubt("the Lease was last renewed 14.0s ago")
    assert isinstance(doubt, WriteGateClosed)
    assert (str(doubt), doubt.reason, doubt.args) == (
        "write refused: the Lease was last renewed 14.0s ago", "the Lease was last renewed 14.0s ago",
        ("write refused: the Lease was last renewed 14.0s ago",))


async def test_reads_still_work_with_gate_closed(client: ApiClient, gate: WriteGate, rb1: dict[str, Any]) -> None:
    gate.close("shutdown")
    assert (await client.get(rb_path("rb1")))["metadata"]["name"] == "rb1"


async def test_closing_gate_does_not_cut_write_already_sent(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    fault = api.faults.add(method="PATCH", hang=True)
    write = asyncio.create_task(client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 1}}))
    await api.journal.wait_for(lambda entry: entry.method == "PATCH")
    gate.close("shutdown")
    fault.release()
    assert (await write)["spec"]["replicas"] == 1


async def test_gate_closing_stops_write_awaiting_token(
    api: DevCluster, client: ApiClient, gate: WriteGate, rb1: dict[str, Any]
) -> None:
    token_ready = asyncio.Event()
    waiting = asyncio.Event()

    async def held_sleep(_: float) -> None:
        waiting.set()
        await token_ready.wait()

    client.limiter = TokenBucket(1.0, 1, clock=lambda: 0.0, sleep=held_sleep)
    await client.limiter.acquire()  # the only token
    write = asyncio.create_task(client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 1}}))
    await waiting.wait()
    gate.close("lease lost")
    token_ready.set()
    with pytest.raises(WriteGateClosed):
        await write
    assert list(api.journal) == []
