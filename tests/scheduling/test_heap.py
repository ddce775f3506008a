"""The scheduler gives the C heap's free pages back to the OS once a minute (`scheduling/heap.py`)."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from binding_scheduler.scheduling import heap


async def test_the_heap_is_trimmed_every_period_in_a_worker_thread_until_cancelled() -> None:
    calls: list[tuple[int, bool]] = []
    trimmed_twice = asyncio.Event()
    loop = asyncio.get_running_loop()

    def trim(pad: int) -> int:
        calls.append((pad, threading.current_thread() is threading.main_thread()))
        if len(calls) == 2:
            loop.call_soon_threadsafe(trimmed_twice.set)
        return 1

    task = asyncio.create_task(heap.trim_heap(every=0.01, trim=trim))
    await asyncio.wait_for(trimmed_twice.wait(), 5)
    task.cancel()
    await asyncio.wait({task})
    count = len(calls)
    await asyncio.sleep(0.05)

    assert task.cancelled()
    assert calls[:2] == [(0, False), (0, False)]
    assert len(calls) == count


async def test_without_malloc_trim_the_trimmer_ends_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "malloc_trim", lambda: None)
    await asyncio.wait_for(heap.trim_heap(every=0.01), 1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim is Linux's")
def test_glibc_malloc_trim_is_found_and_callable() -> None:
    trim = heap.malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)


def test_no_malloc_trim_is_looked_for_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert heap.malloc_trim() is None
