"""client-go's EventCorrelator (tools/record/events_cache.go) for the Events we record: no I/O, an injected clock.

Karmada's scheduler records through client-go's EventRecorder, which passes every Event through three caches
before it reaches the API server (`EventCorrelate`, in this order, for every Event):

1. **Aggregation** (`EventAggregator`). Events alike in everything but their message (the aggregate key:
   source component and host, involvedObject kind/namespace/name/uid/apiVersion, type, reason, reporting
   controller and instance) are grouped. Once `AGGREGATE_MAX_EVENTS` (10) distinct messages are in a group,
   each further new message becomes one aggregated Event, `"(combined from similar events): " + message`,
   correlated under the aggregate key itself: all of them are counted on one Event object, whose message is
   the latest. A group is forgotten when `AGGREGATE_INTERVAL` (600 s) passes without an Event in it.
   (The tenth distinct message is the first one combined, as in client-go's own test
   `similar-events-should-aggregate-event`.) client-go then removes an arbitrary message from the full set
   (`PopAny`, random in Go); we remove the one just added, so the first nine messages keep their own Events:
   one of the outcomes client-go allows, made deterministic.
2. **Counting** (`eventLogger`). An Event whose key (the aggregate key's fields without the reporting ones,
   plus involvedObject.fieldPath and the message: `getEventKey`) was seen before is not created again: the
   Event already written is patched with `count` + 1, `lastTimestamp` = now and the message, keeping its
   name and `firstTimestamp`.
3. **Spam filter** (`EventSourceObjectSpamFilter`). A token bucket per source and object *and type*
   (`getSpamKey`: component, host, involvedObject kind/namespace/name/uid/apiVersion, type; not the reason):
   `SPAM_BURST` (25) Events, then one every 1/`SPAM_QPS` (300) seconds. It runs last, on every Event, so a
   patch takes a token like a create; an Event without a token is not written at all. Aggregation and
   counting have already seen it, so it still counts: the next Event written carries the full count.

Each cache is an LRU of `MAX_LRU_CACHE_ENTRIES` (4096) keys. client-go's defaults are the ones Karmada runs
with (`record.NewBroadcaster()` without options).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

MAX_LRU_CACHE_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0  # seconds
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0  # one token every 5 minutes
AGGREGATE_PREFIX = "(combined from similar events): "

Key = tuple[str, ...]
K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most `size` entries; `get` and `put` make an entry the most recent, `put` evicts the least recent."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an LRU cache holds at least one entry, not {size}")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)


def _text(mapping: Any, key: str) -> str:
    value = mapping.get(key) if isinstance(mapping, Mapping) else None
    return str(value) if value is not None else ""


def _object_fields(event: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    involved = event.get("involvedObject")
    return (_text(involved, "kind"), _text(involved, "namespace"), _text(involved, "name"), _text(involved, "uid"),
            _text(involved, "apiVersion"))


def _source(event: Mapping[str, Any]) -> tuple[str, str]:
    source = event.get("source")
    return _text(source, "component"), _text(source, "host")


def event_key(event: Mapping[str, Any]) -> Key:
    """client-go's `getEventKey`: source, involvedObject (with fieldPath), type, reason, message."""
    kind, namespace, name, uid, api_version = _object_fields(event)
    field_path = _text(event.get("involvedObject"), "fieldPath")
    return (*_source(event), kind, namespace, name, field_path, uid, api_version, _text(event, "type"),
            _text(event, "reason"), _text(event, "message"))


def spam_key(event: Mapping[str, Any]) -> Key:
    """client-go's `getSpamKey`: source, involvedObject (without fieldPath), type. The reason is not in it."""
    return (*_source(event), *_object_fields(event), _text(event, "type"))


def aggregate_key(event: Mapping[str, Any]) -> tuple[Key, str]:
    """client-go's `EventAggregatorByReasonFunc`: (the group: everything but the message, the message)."""
    group = (*_source(event), *_object_fields(event), _text(event, "type"), _text(event, "reason"),
             _text(event, "reportingComponent"), _text(event, "reportingInstance"))
    return group, _text(event, "message")


@dataclass
class _Bucket:
    """A passive token bucket (client-go's `tokenBucketPassiveRateLimiter`): full at first."""

    tokens: float
    last: float

    def try_accept(self, now: float, burst: int, qps: float) -> bool:
        if now > self.last:
            self.tokens = min(float(burst), self.tokens + (now - self.last) * qps)
            self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass
class _Group:
    """An aggregation group: the distinct messages seen (at most max_events - 1 kept) and the last Event's time."""

    last: float
    messages: dict[str, None] = field(default_factory=dict)  # insertion-ordered set


@dataclass(frozen=True)
class Observation:
    """What the counting cache knows of one Event (client-go's `eventLog`). `name` is None until written."""

    count: int
    first_timestamp: str
    name: str | None


@dataclass(frozen=True)
class Correlated:
    """An Event to write: `body` to create, or (when `name` is set) `patch` to merge into the Event `name`.
    `key` is the counting cache's key, for `update_state` once written."""

    key: Key
    body: dict[str, Any]
    name: str | None
    patch: dict[str, Any] | None


class EventCorrelator:
    """Filters, aggregates and counts Events as client-go does; the caller writes the outcome.

    `correlate(body)` takes an Event body (as `events.event_body` builds it) and returns what to write, or None
    when the spam filter drops it. `update_state(key, answer)` records the server's answer (name, count,
    firstTimestamp) after a write. `clock` (monotonic seconds) drives the buckets and the aggregation window.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        cache_size: int = MAX_LRU_CACHE_ENTRIES,
        burst: int = SPAM_BURST,
        qps: float = SPAM_QPS,
        max_events: int = AGGREGATE_MAX_EVENTS,
        max_interval: float = AGGREGATE_INTERVAL,
    ) -> None:
        self.clock = clock
        self.burst = burst
        self.qps = qps
        self.max_events = max_events
        self.max_interval = max_interval
        self.spam: LRU[Key, _Bucket] = LRU(cache_size)
        self.groups: LRU[Key, _Group] = LRU(cache_size)
        self.log: LRU[Key, Observation] = LRU(cache_size)

    def correlate(self, body: Mapping[str, Any]) -> Correlated | None:
        now = self.clock()
        event, key = self._aggregate(body, now)
        correlated = self._observe(event, key)
        if not self._accept(event, now):
            return None
        return correlated

    def update_state(self, key: Key, answer: Mapping[str, Any]) -> None:
        """The Event as the server stored it (client-go's `UpdateState`): its name, count, firstTimestamp."""
        known = self.log.get(key)
        metadata = answer.get("metadata")
        name = _text(metadata, "name") or (known.name if known is not None else None)
        count = answer.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            count = known.count if known is not None else 1
        first = _text(answer, "firstTimestamp") or (known.first_timestamp if known is not None else "")
        self.log.put(key, Observation(count=count, first_timestamp=first, name=name))

    # ---- the three steps ------------------------------------------------------------------------------

    def _aggregate(self, body: Mapping[str, Any], now: float) -> tuple[dict[str, Any], Key]:
        """client-go's `EventAggregate`: the Event as it is (under its own key) or the aggregated one."""
        group_key, message = aggregate_key(body)
        group = self.groups.get(group_key)
        if group is None or now - group.last > self.max_interval:
            group = _Group(last=now)
        group.messages[message] = None
        group.last = now
        self.groups.put(group_key, group)
        if len(group.messages) < self.max_events:
            return dict(body), event_key(body)
        del group.messages[message]  # client-go's PopAny, deterministically the newest
        aggregated = dict(body)  # a new Event (count 1, first seen now) but for its message
        aggregated["message"] = AGGREGATE_PREFIX + message
        return aggregated, group_key

    def _observe(self, event: dict[str, Any], key: Key) -> Correlated:
        """client-go's `eventObserve`: count the Event; a known one becomes a patch of the Event written."""
        last = self.log.get(key)
        if last is None:
            self.log.put(key, Observation(count=1, first_timestamp=str(event.get("firstTimestamp") or ""),
                                          name=None))
            event["count"] = 1
            return Correlated(key=key, body=event, name=None, patch=None)
        count = last.count + 1
        self.log.put(key, Observation(count=count, first_timestamp=last.first_timestamp, name=last.name))
        event["count"] = count
        event["firstTimestamp"] = last.first_timestamp
        if last.name is not None:  # the Event keeps its name if it must be created again (a 404 on the patch)
            metadata = dict(event.get("metadata") or {})
            metadata.pop("generateName", None)
            metadata["name"] = last.name
            event["metadata"] = metadata
        patch = {"count": count, "lastTimestamp": event.get("lastTimestamp"), "message": event.get("message")}
        return Correlated(key=key, body=event, name=last.name, patch=patch if last.name is not None else None)

    def _accept(self, event: Mapping[str, Any], now: float) -> bool:
        """client-go's `EventSourceObjectSpamFilter.Filter` (inverted): a token for this source and object."""
        key = spam_key(event)
        bucket = self.spam.get(key)
        if bucket is None:
            bucket = _Bucket(tokens=float(self.burst), last=now)
        accepted = bucket.try_accept(now, self.burst, self.qps)
        self.spam.put(key, bucket)
        return accepted
