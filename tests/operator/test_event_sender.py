"""Events posted beside the passes (scheduling/passes/events.py): queued at once, posted in order per pass,
bounded, flushed at a stop, nothing posted after the stop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from binding_scheduler.kube.gate import WriteGateClosed
from binding_scheduler.scheduling.passes.events import BackgroundEvents

INVOLVED = {"kind": "ResourceBinding", "namespace": "default", "name": "web"}


class SlowSink:
    def __init__(self, delay: float = 0.01, closed_after: int | None = None) -> None:
        self.delay = delay
        self.closed_after = closed_after
        self.posted: list[str] = []

    async def record(self, involved: Mapping[str, str], type: str, reason: str, message: str) -> None:
        if self.closed_after is not None and len(self.posted) >= self.closed_after:
            raise WriteGateClosed("test")
        await asyncio.sleep(self.delay)
        self.posted.append(message)


async def test_record_returns_before_event_posted() -> None:
    sink = SlowSink()
    events = BackgroundEvents(sink, lanes=4)

    async def a_pass(name: str) -> None:
        await events.record(INVOLVED, "Normal", "R", f"{name}-binding")
        await events.record(INVOLVED, "Normal", "R", f"{name}-template")

    await asyncio.gather(*(a_pass(f"p{i}") for i in range(8)))
    assert sink.posted == [] and events.pending == 16
    assert await events.close(flush_timeout=5.0) == 0
    assert len(sink.posted) == 16
    for i in range(8):
        assert sink.posted.index(f"p{i}-binding") < sink.posted.index(f"p{i}-template")


async def test_full_queue_drops_and_counts() -> None:
    events = BackgroundEvents(SlowSink(), limit=3)
    for i in range(5):
        await events.record(INVOLVED, "Normal", "R", str(i))
    assert events.dropped == 2 and events.pending == 3
    await events.close(flush_timeout=5.0)


async def test_stop_is_bounded_and_nothing_is_posted_after_it() -> None:
    sink = SlowSink(delay=10.0)
    events = BackgroundEvents(sink, lanes=1)
    for i in range(3):
        await events.record(INVOLVED, "Normal", "R", str(i))
    await asyncio.sleep(0)
    async with asyncio.timeout(2.0):
        assert await events.close(flush_timeout=0.05) == 3
    await events.record(INVOLVED, "Normal", "R", "late")
    await asyncio.sleep(0.05)
    assert sink.posted == [] and events.pending == 0


async def test_closed_gate_drops_what_is_queued() -> None:
    sink = SlowSink(delay=0.0, closed_after=1)
    events = BackgroundEvents(sink, lanes=1)
    for i in range(4):
        await events.record(INVOLVED, "Normal", "R", str(i))
    assert await events.close(flush_timeout=1.0) == 0
    assert sink.posted == ["0"] and events.pending == 0


async def test_passes_spread_over_lanes() -> None:
    in_flight = peak = 0

    class Counting:
        async def record(self, involved: Mapping[str, str], type: str, reason: str, message: str) -> None:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1

    events = BackgroundEvents(Counting(), lanes=4)

    async def a_pass() -> None:
        await events.record(INVOLVED, "Normal", "R", "binding")
        await events.record(INVOLVED, "Normal", "R", "template")

    await asyncio.gather(*(a_pass() for _ in range(8)))
    await events.close(flush_timeout=5.0)
    assert peak == 4
