"""Watch semantics: where a watch starts, which events it sees, and bookmarks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ApiError, bad_request
from .history import Event, Obj, Subscriber
from .resources import ResourceType
from .selectors import Matcher
from .store import Store

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def translate(event: Event, matcher: Matcher | None) -> tuple[str, Obj] | None:
    """The (type, object) a watcher with `matcher` sees for `event`, or None.

    As in kube-apiserver, an object that starts matching the selector arrives as ADDED and one that
    stops matching as DELETED.
    """
    if matcher is None:
        return event.type, event.obj
    now = matcher(event.obj)
    before = event.old is not None and matcher(event.old)
    if event.type == "ADDED":
        return ("ADDED", event.obj) if now else None
    if event.type == "DELETED":
        return ("DELETED", event.obj) if now or before else None
    if now and before:
        return "MODIFIED", event.obj
    if now:
        return "ADDED", event.obj
    if before:
        return "DELETED", event.obj
    return None


def parse_rv(value: str | None) -> int | None:
    """A `resourceVersion` query value as an int (None when absent or empty)."""
    if value in (None, ""):
        return None
    try:
        return int(str(value))
    except ValueError:
        raise bad_request(f"Invalid value: {value!r}: must be a valid resourceVersion") from None


@dataclass
class Watch:
    """One watch: subscribed to the store at creation, so nothing is missed between its parts."""

    store: Store
    rtype: ResourceType
    namespace: str | None
    matcher: Matcher | None
    since: int | None
    bookmarks: bool
    send_initial: bool = False

    def __post_init__(self) -> None:
        self.subscriber: Subscriber = self.store.subscribe(self.rtype, self.namespace)
        # The version the watch starts from: the one asked for, else the current one (its initial list).
        self.start_rv: int = self.since or self.store.resource_version

    def close(self) -> None:
        self.store.unsubscribe(self.subscriber)

    def initial(self) -> list[dict[str, Any]]:
        """The events to send first: synthetic ADDEDs (no version, "0", or `sendInitialEvents`)
        or the retained history newer than the version (410 `ApiError` when it is gone)."""
        if self.since is None or self.since == 0 or self.send_initial:
            namespace = self.namespace if self.rtype.namespaced else None
            items = self.store.list(self.rtype, namespace, self.matcher)  # by namespace and name, as kube does
            events = [{"type": "ADDED", "object": obj} for obj in items]
            if self.send_initial and self.bookmarks:
                events.append(self.bookmark(initial_end=True))
            return events
        result = []
        for event in self.store.history_since(self.since, self.rtype.storage_key):
            if self.namespace is not None and event.namespace != self.namespace:
                continue
            seen = translate(event, self.matcher)
            if seen is not None:
                result.append({"type": seen[0], "object": seen[1]})
        return result

    def bookmark(self, *, initial_end: bool = False) -> dict[str, Any]:
        """A BOOKMARK at the store's current version (valid when the subscriber queue is empty)."""
        metadata: dict[str, Any] = {"resourceVersion": str(self.store.resource_version)}
        if initial_end:
            metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"type": "BOOKMARK",
                "object": {"kind": self.rtype.kind, "apiVersion": self.rtype.api_version, "metadata": metadata}}

    def pending(self) -> list[dict[str, Any]]:
        """Events queued since the last call, without waiting."""
        result = []
        queue = self.subscriber.queue
        while not queue.empty():
            event = queue.get_nowait()
            if event is not None and (seen := translate(event, self.matcher)) is not None:
                result.append({"type": seen[0], "object": seen[1]})
        return result

    async def next(self) -> dict[str, Any] | None:
        """The next visible event; None when the watch was poked (faults changed or the server stops)."""
        while True:
            event = await self.subscriber.queue.get()
            if event is None:
                return None
            seen = translate(event, self.matcher)
            if seen is not None:
                return {"type": seen[0], "object": seen[1]}


def expired_event(error: ApiError) -> dict[str, Any]:
    """The ERROR event kube-apiserver streams for a watch from a version that is no longer retained."""
    return {"type": "ERROR", "object": error.body}
