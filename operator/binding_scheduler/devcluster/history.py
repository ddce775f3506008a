"""The events of the store's writes: the retained history a watch resumes from (410 `Expired` when it is older),
and the live subscribers each new event reaches."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from . import errors

Obj = dict[str, Any]
StorageKey = tuple[str, str]


@dataclass(frozen=True)
class Event:
    """One write as watchers see it. `old` is the previous object of a MODIFIED/DELETED event."""

    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    key: StorageKey
    namespace: str | None
    obj: Obj
    old: Obj | None = None


@dataclass(eq=False)
class Subscriber:
    """A live watch: receives every new event of one storage key (and namespace, if given)."""

    key: StorageKey
    namespace: str | None
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)

    def poke(self) -> None:
        """Wake the watch up without an event (to re-check faults or the server stopping)."""
        self.queue.put_nowait(None)


class History:
    """The last `retained` events, and who listens for the next ones."""

    def __init__(self, retained: int) -> None:
        self._events: deque[Event] = deque(maxlen=max(retained, 0))
        self._evicted_rv = 0
        # The version at which a custom resource type began to be served: a watch from an older version is
        # 410 Expired, as kube-apiserver's watch cache of the type starts there.
        self._origins: dict[StorageKey, int] = {}
        self._subscribers: set[Subscriber] = set()

    @property
    def oldest_watchable_rv(self) -> int:
        """A watch from a version older than this gets `410 Gone` (its events are no longer retained)."""
        return self._evicted_rv

    def served_from(self, key: StorageKey, rv: int, *, again: bool) -> None:
        """The type of `key` is served from `rv` on (`again`: also when it was served already, as a new CRD)."""
        if again or key not in self._origins:
            self._origins[key] = rv

    def since(self, rv: int, key: StorageKey) -> list[Event]:
        """Retained events of one storage key newer than `rv` (410 `ApiError` if some were dropped, or if the
        type was not served yet at `rv`)."""
        oldest = max(self._evicted_rv, self._origins.get(key, 0))
        if rv < oldest:
            raise errors.expired(f"too old resource version: {rv} ({oldest + 1})")
        return [event for event in self._events if event.rv > rv and event.key == key]

    def emit(self, event: Event) -> None:
        """Retain `event` (forgetting the oldest) and hand it to the subscribers of its key and namespace."""
        events = self._events
        if events.maxlen == 0:
            self._evicted_rv = event.rv
        else:
            if len(events) == events.maxlen:
                self._evicted_rv = events[0].rv
            events.append(event)
        for subscriber in self._subscribers:
            if subscriber.key == event.key and subscriber.namespace in (None, event.namespace):
                subscriber.queue.put_nowait(event)

    def subscribe(self, key: StorageKey, namespace: str | None) -> Subscriber:
        subscriber = Subscriber(key, namespace)
        self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)

    def poke_all(self) -> None:
        for subscriber in list(self._subscribers):
            subscriber.poke()
