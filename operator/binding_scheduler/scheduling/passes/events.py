"""Events posted beside the passes, not inside them (as client-go's event broadcaster does for Karmada).

A pass used to await its two Events (on the binding and on its resource template) after its status write: two
more round trips on the pass's path, while the Events change nothing the pass or the next one depends on
(they are best effort: a failed one is logged and dropped). Here `record()` queues the Event and returns; a
few sender tasks post them. The Events of one pass keep their order (one lane per pass task); the queue is
bounded (`limit`): past it an Event is dropped and counted, as client-go drops them when its channel is full.

A stop first lets the queue empty for at most `flush_timeout` (so the Events of the passes drained at the
stop are posted), then cancels the senders, before the write gate closes; a closed gate drops what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import weakref
from collections import deque
from collections.abc import Mapping
from typing import Any

from ...kube.gate import WriteGateClosed
from .context import EventSink, EventType

logger = logging.getLogger(__name__)

LANES = 16  # at most this many Events on the wire at once (one sender task per busy lane)
LIMIT = 10_000

_Item = tuple[Mapping[str, str], EventType, str, str]


class BackgroundEvents:
    """An `EventSink` that queues and returns at once; `sink` posts, in `lanes` concurrent senders."""

    def __init__(self, sink: EventSink, *, lanes: int = LANES, limit: int = LIMIT) -> None:
        self.sink = sink
        self.limit = limit
        self.dropped = 0
        self._lanes: list[deque[_Item]] = [deque() for _ in range(max(1, lanes))]
        self._senders: list[asyncio.Task[None] | None] = [None] * len(self._lanes)
        self._lane_of: weakref.WeakKeyDictionary[asyncio.Task[Any], int] = weakref.WeakKeyDictionary()
        self._turn = itertools.count()
        self._queued = 0
        self._closed = False
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def pending(self) -> int:
        """Events queued or being posted."""
        return self._queued

    async def record(self, involved: Mapping[str, str], type: EventType, reason: str, message: str) -> None:
        if self._closed:
            return
        if self._queued >= self.limit:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                logger.warning("event queue full (%d): dropped %d events so far", self.limit, self.dropped)
            return
        task = asyncio.current_task()
        index = self._lane_of.get(task, -1) if task is not None else 0
        if index < 0 and task is not None:  # one pass's Events in one lane, in order; passes take turns
            index = self._lane_of[task] = next(self._turn) % len(self._lanes)
        self._lanes[index].append((involved, type, reason, message))
        self._queued += 1
        self._idle.clear()
        sender = self._senders[index]
        if sender is None or sender.done():
            self._senders[index] = asyncio.create_task(self._send(index), name=f"event-sender-{index}")

    async def _send(self, index: int) -> None:
        lane = self._lanes[index]
        while lane:
            item = lane.popleft()
            try:
                await self.sink.record(*item)
            except WriteGateClosed:  # stopping, or the Lease is lost: nothing more is posted
                self._drop_all()
            except Exception:
                logger.exception("posting an event failed")
            finally:
                self._done(1)

    def _done(self, count: int) -> None:
        self._queued -= count
        if self._queued <= 0:
            self._queued = 0
            self._idle.set()

    def _drop_all(self) -> None:
        """Forget the queued Events (the ones being posted are counted when their post ends)."""
        for lane in self._lanes:
            self._done(len(lane))
            lane.clear()

    async def close(self, flush_timeout: float) -> int:
        """Stop taking Events, post what is queued for at most `flush_timeout` seconds, cancel the rest.
        Returns how many were left unposted. When it returns, no sender runs."""
        self._closed = True
        if self._queued:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(flush_timeout, 0.0)):
                    await self._idle.wait()
        left = self._queued
        senders = [task for task in self._senders if task is not None and not task.done()]
        for task in senders:
            task.cancel()
        if senders:
            await asyncio.wait(senders)
        self._drop_all()
        self._queued = 0
        if left:
            logger.info("%d events not posted at the stop", left)
        return left
