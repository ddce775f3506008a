"""The scheduler gives the C heap's free pages back to the OS once a burst of passes is over
(`scheduling/heap.py`)."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from binding_scheduler.scheduling import heap
from binding_scheduler.scheduling.heap import TrimPolicy


def test_the_heap_is_trimmed_once_the_passes_pause_after_a_burst() -> None:
    policy = TrimPolicy(busy_every=600)
    assert [policy.due(started, now) for started, now in [(5, 5), (9, 10), (9, 15), (9, 20), (9, 25)]] == [
        False, False, True, False, False]


def test_nothing_is_trimmed_while_no_pass_has_run() -> None:
    policy = TrimPolicy(started=3, last_seen=3, busy_every=600)
    assert [policy.due(3, now) for now in (5, 10, 700)] == [False, False, False]


def test_passes_that_never_pause_have_the_heap_trimmed_every_busy_period() -> None:
    policy = TrimPolicy(busy_every=30)
    trims = [now for now in range(5, 100, 5) if policy.due(now, now)]
    assert trims == [30, 60, 90]


def test_a_new_burst_after_a_trim_is_trimmed_again_when_it_pauses() -> None:
    policy = TrimPolicy(busy_every=600)
    assert [policy.due(started, now) for started, now in [(4, 5), (4, 10), (8, 15), (8, 20)]] == [
        False, True, False, True]


async def test_the_trimmer_trims_in_a_worker_thread_after_a_burst_until_cancelled() -> None:
    calls: list[tuple[int, bool]] = []
    trimmed = asyncio.Event()
    loop = asyncio.get_running_loop()
    started = 0

    def trim(pad: int) -> int:
        calls.append((pad, threading.current_thread() is threading.main_thread()))
        loop.call_soon_threadsafe(trimmed.set)
        return 1

    task = asyncio.create_task(heap.trim_heap(lambda: started, quiet=0.01, trim=trim))
    await asyncio.sleep(0.05)
    assert calls == []  # no pass has run
    started = 7
    await asyncio.wait_for(trimmed.wait(), 5)
    task.cancel()
    await asyncio.wait({task})

    assert task.cancelled()
    assert calls == [(0, False)]


async def test_without_malloc_trim_the_trimmer_ends_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "malloc_trim", lambda: None)
    await asyncio.wait_for(heap.trim_heap(lambda: 0, quiet=0.01), 1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim is Linux's")
def test_glibc_malloc_trim_is_found_and_callable() -> None:
    trim = heap.malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)


def test_no_malloc_trim_is_looked_for_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert heap.malloc_trim() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="read from Linux's /proc")
def test_the_resident_memory_is_read_in_mib() -> None:
    ballast = bytearray(64 << 20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touched: resident
    resident = heap.resident_mib()
    assert resident is not None and resident >= 64
