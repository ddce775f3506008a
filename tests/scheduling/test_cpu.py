"""A decision's computation never holds the event loop for long: short ones run inline, long ones move to a
thread where the loop keeps running beside them, over the CPU limit they fail, and cancelling abandons them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from binding_scheduler.scheduling.framework import cpu
from binding_scheduler.scheduling.framework.cpu import CHECK_EVERY, INLINE_SLICE, OverCpuLimit, compute


def spin(
    steps: int | None, ran_in: list[int], progress: list[int] | None = None
) -> Callable[[Callable[[], None]], int]:
    """A computation of `steps` checkpoints (None: endless) that notes the thread it ran in."""
    def work(checkpoint: Callable[[], None]) -> int:
        ran_in.append(threading.get_ident())
        done = 0
        while steps is None or done < steps:
            checkpoint()
            done += 1
            if progress is not None:
                progress[0] = done
        return done
    return work


async def test_short_computation_runs_on_event_loop() -> None:
    ran_in: list[int] = []
    assert await compute(spin(1000, ran_in), cpu_limit=5.0) == 1000
    assert ran_in == [threading.get_ident()]


async def test_computation_shorter_than_one_look_never_reads_cpu_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[float] = []

    def thread_time() -> float:
        reads.append(0.0)
        return 0.0

    monkeypatch.setattr(cpu.time, "thread_time", thread_time)
    assert await compute(spin(CHECK_EVERY - 1, []), cpu_limit=5.0) == CHECK_EVERY - 1
    assert reads == []
    assert await compute(spin(CHECK_EVERY, []), cpu_limit=5.0) == CHECK_EVERY
    assert len(reads) == 1


async def test_long_computation_moves_to_thread_and_loop_keeps_running() -> None:
    ran_in: list[int] = []
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)
    try:
        result = await compute(spin(3_000_000, ran_in), cpu_limit=60.0)
    finally:
        ticker.cancel()
    assert result == 3_000_000
    assert ran_in[0] == threading.get_ident() and ran_in[1] != threading.get_ident()  # started inline, moved
    assert ticks >= 5  # the loop ran while the thread computed


async def test_computation_over_cpu_limit_fails_naming_limit() -> None:
    with pytest.raises(OverCpuLimit, match=r"more than 0.2s of CPU \(decisionCPULimit 0.2s\)"):
        await compute(spin(None, []), cpu_limit=0.2)


async def test_limit_below_inline_slice_is_enforced_on_loop() -> None:
    ran_in: list[int] = []
    with pytest.raises(OverCpuLimit):
        await compute(spin(None, ran_in), cpu_limit=INLINE_SLICE / 2)
    assert ran_in == [threading.get_ident()]


async def test_cancelling_abandons_computation_in_thread() -> None:
    progress = [0]
    task = asyncio.create_task(compute(spin(None, [], progress), cpu_limit=60.0))
    while progress[0] < 100_000:  # noqa: ASYNC110 - the progress is a thread's, no event can carry it
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.2)
    stopped_at = progress[0]
    await asyncio.sleep(0.2)
    assert progress[0] == stopped_at  # the thread left at its next checkpoint
