"""Kubernetes Events (core/v1) recorded by our own client, best effort, correlated as client-go does.

Every Event goes through an `EventCorrelator` (`event_correlator.py`: client-go's aggregation, counting and
spam filter, with its default limits) first. A repeat of an Event already written is a merge patch of that
Event (`count` + 1, `lastTimestamp`, `message`), not a new one; a patch answered 404 (the Event expired or was
deleted) creates it again, as client-go's `recordEvent` does. An Event the spam filter drops is not written.

An event that cannot be written is logged (the first failure of each event reason at WARNING, with the
involved object; later ones at DEBUG) and dropped: an event never fails a pass. A closed write gate and
cancellation do propagate, so shutdown stays write-free and prompt.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from ..model.conditions import rfc3339
from .client import ApiClient, resource_path
from .errors import KubeError, NotFound
from .event_correlator import Correlated, EventCorrelator, Key, aggregate_key

logger = logging.getLogger(__name__)

EventType = Literal["Normal", "Warning"]


def now_rfc3339() -> str:
    return rfc3339(time.time())


def event_body(
    involved: Mapping[str, str], type_: EventType, reason: str, message: str, component: str, host: str,
    timestamp: str,
) -> dict[str, Any]:
    """A core/v1 Event about `involved`, named `<name>.<random>` by the server (generateName)."""
    namespace = involved.get("namespace") or "default"
    reference = {key: involved[key] for key in ("apiVersion", "kind", "namespace", "name", "uid")
                 if involved.get(key)}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{involved.get('name', '')}.", "namespace": namespace},
        "involvedObject": reference,
        "reason": reason,
        "message": message,
        "type": type_,
        "source": {"component": component, "host": host},
        "reportingComponent": component,
        "reportingInstance": host,
        "firstTimestamp": timestamp,
        "lastTimestamp": timestamp,
        "count": 1,
    }


@dataclass
class _Turn:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class EventRecorder:
    """Records Events with `source.component = component` (Karmada: the scheduler name).

    `clock` (monotonic seconds) drives the correlator's spam buckets and aggregation window, `wall_clock`
    (seconds since the epoch) the Events' timestamps; `correlator` replaces the default one (client-go's limits).
    Counters: `created`, `patched` (writes that landed), `dropped` (by the spam filter), `failures`.
    """

    def __init__(
        self,
        client: ApiClient,
        component: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        correlator: EventCorrelator | None = None,
    ) -> None:
        self.client = client
        self.component = component
        self.host = socket.gethostname()
        self.wall_clock = wall_clock
        self.correlator = correlator if correlator is not None else EventCorrelator(clock=clock)
        self._logged_reasons: set[str] = set()
        self._turns: dict[Key, _Turn] = {}
        self.created = 0
        self.patched = 0
        self.dropped = 0
        self.failures = 0

    async def record(self, involved: Mapping[str, str], type: EventType, reason: str, message: str) -> None:
        """Create, count (patch) or drop one Event; API and transport failures are logged and swallowed."""
        self.client.gate.check()  # a closed gate raises, even for an Event the spam filter would drop
        body = event_body(involved, type, reason, message, self.component, self.host,
                          rfc3339(self.wall_clock()))
        # Events that may correlate (same object, type and reason) are correlated and written one at a time:
        # a repeat must see the name the server gave the first one (the senders post concurrently).
        async with self._turn(aggregate_key(body)[0]):
            correlated = self.correlator.correlate(body)
            if correlated is None:
                self.dropped += 1
                logger.debug("event %s (%s) on %s dropped: too many events about it", reason, type,
                             _describe(involved))
                return
            try:
                answer = await self._write(correlated)
            except KubeError as exc:
                self.failures += 1
                level = logging.DEBUG if reason in self._logged_reasons else logging.WARNING
                self._logged_reasons.add(reason)
                logger.log(level, "could not record event %s (%s) on %s: %s", reason, type, _describe(involved),
                           exc)
                return
            self.correlator.update_state(correlated.key, answer)

    async def _write(self, correlated: Correlated) -> dict[str, Any]:
        namespace = correlated.body["metadata"]["namespace"]
        if correlated.name is not None and correlated.patch is not None:
            try:
                answer = await self.client.patch_merge(
                    resource_path("", "v1", "events", namespace, correlated.name), correlated.patch)
            except NotFound:
                pass  # expired (kube-apiserver's --event-ttl, 1 h) or deleted: create it again
            else:
                self.patched += 1
                return answer
        answer = await self.client.create(resource_path("", "v1", "events", namespace), correlated.body)
        self.created += 1
        return answer

    @asynccontextmanager
    async def _turn(self, key: Key) -> AsyncIterator[None]:
        turn = self._turns.get(key)
        if turn is None:
            turn = self._turns[key] = _Turn()
        turn.users += 1
        try:
            async with turn.lock:
                yield
        finally:
            turn.users -= 1
            if turn.users == 0:
                del self._turns[key]


def _describe(involved: Mapping[str, str]) -> str:
    return (f"{involved.get('kind', '?')} {involved.get('namespace', '')}/{involved.get('name', '?')}"
            .replace(" /", " "))
