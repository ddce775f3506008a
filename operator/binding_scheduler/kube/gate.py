"""The write gate: every write of ours passes it before touching the network; once closed, it stays closed.

Shutdown (and a lost Lease) closes it; from then on a write raises `WriteGateClosed` before any byte is sent.
Writes already sent are not cut: shutdown waits for (or cancels) the passes that make them. The gate counts the
writes that were sent and got no answer (`in_doubt`): those may still be applied by the server after we stopped.
"""

from __future__ import annotations

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
        self.in_doubt = 0
        """Writes sent through this gate whose outcome is unknown (no answer, a 504, cut while in flight), counted
        once per request by the client that sent them."""

    @property
    def is_open(self) -> bool:
        return self._reason is None

    @property
    def reason(self) -> str | None:
        """Why the gate closed (None while open)."""
        return self._reason

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
        """Check the gate around one write (the block sends it)."""
        self.check()
        yield
