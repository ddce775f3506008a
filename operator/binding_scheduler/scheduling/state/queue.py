"""The binding queue with the semantics of Karmada's priority queue (gate `PriorityBasedScheduling`):
`pkg/scheduler/internal/queue/scheduling_queue.go: prioritySchedulingQueue`, over
`pkg/scheduler/internal/queue/active_queue.go: activequeue`.

Three sub-queues: *active* (a heap by `spec.schedulePriority.priority`, higher first, then age:
`pkg/scheduler/internal/queue/types.go: Less`), *backoff* (until `timestamp + backoff(attempts)`: 1 s doubling to
10 s, `calculateBackoffDuration`), and *unschedulable* (flushed back after 5 min by
`flushUnschedulableBindingsLeftover`, or at once by any event for the key, `moveToActiveQ`). Keys are
deduplicated; a key is handed to one pass at a time, and a key pushed while its pass runs is handed out again
when that pass is done.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

BACKOFF_FLUSH_PERIOD = 1.0
CONFLICT_FALLBACK = 1.0  # a key refused with 409 runs again at the latest this long after, event or not
UNSCHEDULABLE_FLUSH_PERIOD = 30.0


@dataclass(slots=True)
class QueuedBinding:
    """Karmada's `QueuedBindingInfo`: the key, its priority, when it last entered the active queue, and how
    often it was handed out."""

    key: str
    priority: int = 0
    timestamp: float = 0.0
    initial_attempt: float | None = None
    attempts: int = 0


@dataclass(slots=True)
class QueueDepth:
    active: int
    backoff: int
    unschedulable: int


class SchedulingQueue:
    def __init__(
        self,
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        unschedulable_timeout: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.unschedulable_timeout = unschedulable_timeout
        self._clock = clock
        self._active: list[tuple[int, float, int, str]] = []
        self._sequence = itertools.count()
        self._dirty: dict[str, QueuedBinding] = {}
        self._in_heap: set[str] = set()
        self._processing: dict[str, QueuedBinding] = {}
        self._backoff: dict[str, QueuedBinding] = {}
        self._unschedulable: dict[str, QueuedBinding] = {}
        self._conflicted: dict[str, tuple[QueuedBinding, str]] = {}
        self._ready = asyncio.Event()
        self._closed = False

    # -- intake ---------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def push(self, key: str, priority: int = 0) -> bool:
        """An event for `key`: into the active queue (out of backoff/unschedulable). A key already waiting
        in the active queue keeps its place and priority. False when the queue is closed."""
        if self._closed:
            return False
        if key in self._dirty:
            return True
        conflicted = self._conflicted.pop(key, None)
        info = (
            self._backoff.pop(key, None) or self._unschedulable.pop(key, None)
            or (conflicted[0] if conflicted else None) or QueuedBinding(key)
        )
        info.priority = priority
        self._activate(info)
        return True

    def _activate(self, info: QueuedBinding) -> None:
        now = self._clock()
        info.timestamp = now
        if info.initial_attempt is None:
            info.initial_attempt = now
        self._dirty[info.key] = info
        if info.key not in self._processing:
            self._heap_push(info)

    def _heap_push(self, info: QueuedBinding) -> None:
        heapq.heappush(self._active, (-info.priority, info.timestamp, next(self._sequence), info.key))
        self._in_heap.add(info.key)
        self._ready.set()

    # -- hand-out -------------------------------------------------------------------------------------

    def pop_nowait(self) -> QueuedBinding | None:
        while self._active:
            _, _, _, key = heapq.heappop(self._active)
            self._in_heap.discard(key)
            info = self._dirty.pop(key, None)
            if info is None:
                continue
            info.attempts += 1
            self._processing[key] = info
            return info
        return None

    async def pop(self) -> QueuedBinding | None:
        """The next key to schedule; waits for one. None once the queue is closed."""
        while True:
            if self._closed:
                return None
            info = self.pop_nowait()
            if info is not None:
                return info
            self._ready.clear()
            await self._ready.wait()

    def done(self, info: QueuedBinding) -> None:
        """The pass for `info` ended. If the key was pushed meanwhile, it is handed out again (with its
        attempts) as a fresh active entry."""
        self._processing.pop(info.key, None)
        pending = self._dirty.get(info.key)
        if pending is not None and info.key not in self._in_heap and not self._closed:
            info.priority = pending.priority
            info.timestamp = self._clock()
            self._dirty[info.key] = info
            self._heap_push(info)

    # -- outcomes -------------------------------------------------------------------------------------

    def forget(self, key: str) -> None:
        """Success (or nothing to retry): drop any backoff for the key."""
        self._backoff.pop(key, None)

    def backoff_for(self, attempts: int) -> float:
        if attempts <= 0:
            return 0.0
        return float(min(self.initial_backoff * 2.0 ** (attempts - 1), self.max_backoff))

    def push_backoff(self, info: QueuedBinding) -> None:
        """Retry later (Karmada's PushBackoffIfNotPresent): ignored when the key waits elsewhere already."""
        if self._closed or info.key in self._dirty or info.key in self._unschedulable:
            return
        self._backoff[info.key] = info

    def push_unschedulable(self, info: QueuedBinding) -> None:
        """Park until an event or the flush (PushUnschedulableIfNotPresent)."""
        if self._closed or info.key in self._dirty or info.key in self._backoff:
            return
        info.timestamp = self._clock()
        self._unschedulable[info.key] = info

    def requeue(self, info: QueuedBinding) -> None:
        """Hand the key out again at once."""
        if self._closed or info.key in self._dirty:
            return
        self._backoff.pop(info.key, None)
        self._activate(info)

    def requeue_when_newer(self, info: QueuedBinding, refused_version: str, cached_version: str) -> None:
        """After a 409 (someone wrote after our read): run again as soon as the cache holds a newer version
        than the one the server refused, at once if it already does. A pass from the refused version would
        only be refused again, so until the watch delivers the write that beat ours the key waits, at most
        `CONFLICT_FALLBACK` seconds."""
        if self._closed or info.key in self._dirty:
            return
        if cached_version != refused_version:
            self.requeue(info)
            return
        info.timestamp = self._clock()
        self._conflicted[info.key] = (info, refused_version)

    def cache_updated(self, key: str, version: str) -> None:
        """The cache holds `version` of `key` now: a key waiting after a 409 on another version runs again."""
        waiting = self._conflicted.get(key)
        if waiting is not None and waiting[1] != version:
            del self._conflicted[key]
            self.requeue(waiting[0])

    def discard(self, key: str) -> None:
        """`key` is gone (deleted): drop it from every waiting place (a pass running now still ends)."""
        self._backoff.pop(key, None)
        self._unschedulable.pop(key, None)
        self._conflicted.pop(key, None)

    # -- flushing -------------------------------------------------------------------------------------

    def flush_backoff(self) -> int:
        """Move entries whose backoff expired (`timestamp + backoff(attempts)`) to the active queue."""
        now = self._clock()
        expired = [i for i in self._backoff.values() if i.timestamp + self.backoff_for(i.attempts) <= now]
        for info in expired:
            del self._backoff[info.key]
            self._activate(info)
        return len(expired)

    def flush_conflicted(self) -> int:
        """Keys refused with 409 whose newer version never showed up within `CONFLICT_FALLBACK`: run again."""
        now = self._clock()
        late = [info for info, _ in self._conflicted.values() if now - info.timestamp >= CONFLICT_FALLBACK]
        for info in late:
            del self._conflicted[info.key]
            self.requeue(info)
        return len(late)

    def flush_unschedulable(self) -> int:
        now = self._clock()
        stale = [i for i in self._unschedulable.values() if now - i.timestamp > self.unschedulable_timeout]
        for info in stale:
            del self._unschedulable[info.key]
            self._activate(info)
        return len(stale)

    async def run_flushers(self) -> None:
        """Backoff flush every second, unschedulable flush every 30 s, until cancelled or closed."""
        ticks = 0
        while not self._closed:
            await asyncio.sleep(BACKOFF_FLUSH_PERIOD)
            ticks += 1
            self.flush_backoff()
            self.flush_conflicted()
            if ticks % int(UNSCHEDULABLE_FLUSH_PERIOD / BACKOFF_FLUSH_PERIOD) == 0:
                self.flush_unschedulable()

    # -- lifecycle and introspection ------------------------------------------------------------------

    def close(self) -> None:
        """Stop intake: pushes are ignored and `pop` returns None from now on."""
        self._closed = True
        self._ready.set()

    def depth(self) -> QueueDepth:
        return QueueDepth(active=len(self._dirty), backoff=len(self._backoff), unschedulable=len(self._unschedulable))

    def where(self, key: str) -> str | None:
        """Which sub-queue holds `key` (active, backoff, unschedulable, processing), or None."""
        if key in self._dirty:
            return "active"
        if key in self._backoff:
            return "backoff"
        if key in self._unschedulable:
            return "unschedulable"
        if key in self._processing:
            return "processing"
        return None
