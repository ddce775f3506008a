"""The write gate: every write of ours passes it before touching the network; once closed, it stays closed.

Shutdown (and a lost Lease) closes it; from then on a write raises `WriteGateClosed` before any byte is sent.
It also counts the writes in progress, so shutdown can see (and wait for) writes still on the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class WriteGateClosed(Exception):
    """A write was attempted after the write gate closed. `reason` says why it closed."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"write refused: the write gate is closed ({reason})")
        self.reason = reason


class LeadershipInDoubt(WriteGateClosed):
    """A write refused because this instance cannot be sure it still leads (its Lease renewal is overdue).
    The gate itself stays open: the next renewal lifts the doubt, a lost Lease closes the gate."""

    def __init__(self, reason: str) -> None:
        Exception.__init__(self, f"write refused: {reason}")
        self.reason = reason


class WriteGate:
    """Open until `close(reason)`; never reopens. `async with gate.writing():` wraps one write."""

    def __init__(self) -> None:
        self._reason: str | None = None
        self._in_flight = 0
        self._idle = asyncio.Event()  # binds to a loop only when awaited
        self._idle.set()

    @property
    def is_open(self) -> bool:
        return self._reason is None

    @property
    def reason(self) -> str | None:
        """Why the gate closed (None while open)."""
        return self._reason

    @property
    def in_flight(self) -> int:
        """Writes that passed the gate and have not finished yet."""
        return self._in_flight

    def close(self, reason: str) -> None:
        """Close the gate. Idempotent: the first reason is kept. Writes already in flight are not touched."""
        if self._reason is None:
            self._reason = reason

    def check(self) -> None:
        """Raise `WriteGateClosed` if the gate is closed."""
        if self._reason is not None:
            raise WriteGateClosed(self._reason)

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """Check the gate, then count this write as in flight until the block ends (however it ends)."""
        self.check()
        self._in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    async def wait_idle(self) -> None:
        """Return once no write is in flight (at once if none is)."""
        while self._in_flight:
            await self._idle.wait()
