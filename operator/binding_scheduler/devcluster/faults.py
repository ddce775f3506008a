"""Fault injection: per method/path pattern, delay, hang until released, fail, drop, end watch streams."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .errors import ApiError

_MESSAGES = {
    409: "Operation cannot be fulfilled: the object has been modified (injected fault)",
    429: "Too many requests, please try again later (injected fault)",
    500: "Internal error occurred: injected fault",
    503: "The service is unavailable (injected fault)",
}


@dataclass(eq=False)
class Fault:
    """One injected fault. Matches requests by method and `re.search` of `path` (and `query`)."""

    method: str | None
    path: re.Pattern[str] | None
    query: re.Pattern[str] | None
    delay: float = 0.0
    hang: bool = False
    status: int | None = None
    retry_after: int | None = None
    drop: bool = False
    lose_answer: bool = False
    end_watch: bool = False
    watch_error: int | None = None
    cut_event: bool = False
    times: int | None = None
    message: str | None = None
    hits: int = 0
    _released: asyncio.Event = field(default_factory=asyncio.Event)
    _owner: Faults | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    @property
    def streaming(self) -> bool:
        """Acts on watch streams (open ones at once, new ones after their initial events)."""
        return self.end_watch or self.watch_error is not None or self.cut_event

    def matches(self, method: str, path: str, query_string: str, is_watch: bool) -> bool:
        if self.streaming and not is_watch:
            return False
        return (
            (self.method is None or self.method == method)
            and (self.path is None or self.path.search(path) is not None)
            and (self.query is None or self.query.search(query_string) is not None)
        )

    def release(self) -> None:
        """Let every request hanging on this fault (now or later) go on. Safe from any thread: tests often
        run the emulator in a thread of its own (`DevCluster.in_thread`)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            self._released.set()
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._released.set()
        else:
            loop.call_soon_threadsafe(self._released.set)

    def remove(self) -> None:
        """Stop injecting this fault (requests already hanging on it are released too)."""
        self.release()
        if self._owner is not None:
            self._owner.discard(self)

    @property
    def active(self) -> bool:
        return self._owner is not None and self in self._owner

    async def wait_released(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self._released.wait()

    def error(self) -> ApiError | None:
        """The failure to answer with, if this fault has a `status`."""
        if self.status is None:
            return None
        headers: dict[str, str] = {}
        details: dict[str, object] | None = None
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
            details = {"retryAfterSeconds": self.retry_after}
        message = self.message or _MESSAGES.get(self.status, f"injected fault {self.status}")
        return ApiError(self.status, message, details=details, headers=headers)


class Faults:
    """The active faults, first match wins. `add()` returns a `Fault` with `.release()` and `.remove()`."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._faults: list[Fault] = []
        self._on_change = on_change

    def add(
        self,
        method: str | None = None,
        path: str | None = None,
        *,
        query: str | None = None,
        delay: float = 0.0,
        hang: bool = False,
        status: int | None = None,
        retry_after: int | None = None,
        drop: bool = False,
        lose_answer: bool = False,
        end_watch: bool = False,
        watch_error: int | None = None,
        cut_event: bool = False,
        times: int | None = None,
        message: str | None = None,
    ) -> Fault:
        """Inject a fault into requests of `method` whose path matches the regex `path`.

        - `delay`: seconds to wait before handling; `hang`: wait until `fault.release()`/`fault.remove()`.
        - `status`: answer with a `Status` of that code (429 with `retry_after` sets `Retry-After`).
        - `drop`: close the connection without an answer (also cuts open watch streams).
        - `lose_answer`: handle the request (it takes effect), then close the connection instead of answering.
        - `end_watch`: end matching watch streams cleanly: open ones at once, new ones after their
          initial events (only watch requests match such a fault).
        - `watch_error`: like `end_watch`, but first send an `ERROR` event with that code (a `Status`), as
          kube-apiserver does when a watch fails (410 for an expired version, 500 for an internal error).
        - `cut_event`: like `end_watch`, but first send half of an event line, then cut the connection.
        - `times`: apply to that many requests, then vanish (None = until removed).
        """
        fault = Fault(
            method=method.upper() if method else None,
            path=re.compile(path) if path is not None else None,
            query=re.compile(query) if query is not None else None,
            delay=delay, hang=hang, status=status, retry_after=retry_after, drop=drop, lose_answer=lose_answer,
            end_watch=end_watch, watch_error=watch_error, cut_event=cut_event, times=times, message=message,
            _owner=self,
        )
        self._faults.append(fault)
        if self._on_change is not None and (fault.streaming or drop):
            self._on_change()
        return fault

    def discard(self, fault: Fault) -> None:
        if fault in self._faults:
            self._faults.remove(fault)

    def clear(self) -> None:
        for fault in list(self._faults):
            fault.remove()

    def __contains__(self, fault: object) -> bool:
        return fault in self._faults

    def __iter__(self) -> Iterator[Fault]:
        return iter(list(self._faults))

    def __len__(self) -> int:
        return len(self._faults)

    def take(
        self, method: str, path: str, query_string: str, is_watch: bool, *, streaming: bool = False
    ) -> Fault | None:
        """The first fault matching a request, counted as one hit (`streaming`: only drop/end_watch)."""
        if not self._faults:
            return None
        for fault in self._faults:
            if streaming and not (fault.drop or fault.streaming):
                continue
            if fault.matches(method, path, query_string, is_watch):
                fault.hits += 1
                if fault.times is not None and fault.hits >= fault.times:
                    self.discard(fault)
                return fault
        return None
