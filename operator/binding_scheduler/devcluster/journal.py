"""The request journal: every request the server received, in arrival order."""

from __future__ import annotations

import asyncio
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass
class JournalEntry:
    """One request. `status` is 0 while it is in flight and stays 0 when its connection was dropped."""

    time: float  # time.monotonic() at arrival
    method: str
    path: str
    query: dict[str, str]
    body: Any  # the parsed JSON body, or None
    status: int = 0
    finished: float | None = None  # time.monotonic() when answered (or when a watch stream ended)
    user_agent: str = ""

    @property
    def is_write(self) -> bool:
        return self.method in WRITE_METHODS

    @property
    def is_watch(self) -> bool:
        return self.query.get("watch") in ("true", "1")


class Journal(Sequence[JournalEntry]):
    """A list-like, append-only record of requests (optionally keeping only the last `limit` entries)."""

    def __init__(self, limit: int | None = None) -> None:
        self._entries: deque[JournalEntry] = deque(maxlen=limit)
        self._lock = threading.Lock()  # the server appends in its loop; tests read from their own threads
        self._changed = asyncio.Event()  # binds to a loop only when awaited

    def _snapshot(self) -> list[JournalEntry]:
        with self._lock:
            return list(self._entries)

    @overload
    def __getitem__(self, index: int) -> JournalEntry: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[JournalEntry]: ...
    def __getitem__(self, index: int | slice) -> JournalEntry | Sequence[JournalEntry]:
        if isinstance(index, slice):
            return self._snapshot()[index]
        with self._lock:
            return self._entries[index]

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[JournalEntry]:
        return iter(self._snapshot())

    def record(self, entry: JournalEntry) -> JournalEntry:
        with self._lock:
            self._entries.append(entry)
        self.notify()
        return entry

    def notify(self) -> None:
        self._changed.set()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def filter(
        self, method: str | None = None, path: str | None = None, *, watch: bool | None = None
    ) -> list[JournalEntry]:
        """Entries of a method and a path regex (`re.search`); `watch` picks or skips watch requests."""
        pattern = re.compile(path) if path is not None else None
        return [
            entry for entry in self._snapshot()
            if (method is None or entry.method == method.upper())
            and (pattern is None or pattern.search(entry.path))
            and (watch is None or entry.is_watch == watch)
        ]

    def writes(self) -> list[JournalEntry]:
        """Every POST/PUT/PATCH/DELETE."""
        return [entry for entry in self._snapshot() if entry.is_write]

    async def wait_for(
        self, predicate: Callable[[JournalEntry], bool], seconds: float = 10.0
    ) -> JournalEntry:
        """The first entry matching `predicate`, waiting for it to arrive (TimeoutError after `seconds`)."""
        async with asyncio.timeout(seconds):
            while True:
                for entry in self._snapshot():
                    if predicate(entry):
                        return entry
                self._changed.clear()
                await self._changed.wait()

