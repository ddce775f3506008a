"""What a stop reports: what the drain did to the passes in flight (`DrainReport`), and the whole shutdown's last
line (`ShutdownReport`): passes cancelled, drained and cut, what became of the Lease, and the writes whose outcome
is unknown."""

from __future__ import annotations

from dataclasses import dataclass


def passes(count: int) -> str:
    """`1 pass`, `3 passes`: the reports' count of passes."""
    return f"{count} pass" if count == 1 else f"{count} passes"


@dataclass(frozen=True, slots=True)
class DrainReport:
    """What a stop did to the passes in flight."""

    cancelled: int
    drained: int
    cut: int
    seconds: float

    def line(self) -> str:
        return (
            f"scheduler stopped: {passes(self.cancelled)} cancelled before {_their(self.cancelled)} commit point, "
            f"{self.drained} "
            f"drained, {self.cut} cut at the drain deadline, in {self.seconds * 1000:.0f} ms"
        )


@dataclass(frozen=True, slots=True)
class ShutdownReport:
    cancelled: int
    drained: int
    cut: int
    seconds: float
    lease_released: bool
    lease: str = "not held"
    """What happened to the Lease when it was not released: `not held`, `lost`, or `not released (why): ...`."""
    in_doubt: int = 0
    """Writes of this instance that got no answer (timeouts, 504s, cut by the stop): the API server may still
    apply them, each only where its resourceVersion precondition still holds."""

    def line(self) -> str:
        doubt = ""
        if self.in_doubt:
            doubt = (f"; {self.in_doubt} write{'s' if self.in_doubt != 1 else ''} got no answer and may still be "
                     "applied (binding and Lease writes are fenced: only where nobody wrote since)")
        return (
            f"shutdown complete in {self.seconds * 1000:.0f} ms: {passes(self.cancelled)} cancelled before "
            f"{_their(self.cancelled)} commit point, {self.drained} drained, {self.cut} cut at the drain deadline; "
            f"lease {'released' if self.lease_released else self.lease}{doubt}; write gate closed"
        )


def _their(count: int) -> str:
    return "its" if count == 1 else "their"
