"""Running a decision's pure computation without holding the event loop hostage.

A decision is pure CPU, usually well under a millisecond, so it runs on the event loop. But some legal
placements make Karmada's searches long, and a long computation on the loop stops the Lease keeper, the
cancellation of passes and the shutdown. So a computation gets `INLINE_SLICE` of CPU on the loop; past it, it
is abandoned there (at its next checkpoint) and run again from the start in a worker thread, where the loop
keeps running beside it. There it may use `cpu_limit` seconds of CPU; past that it fails with `OverCpuLimit`.
Cancelling the awaiting task abandons the thread's computation at its next checkpoint. The computation must be
pure (it is run twice when moved) and call its checkpoint often (the algorithm's searches do).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from ...algorithm.errors import DecisionAbandoned

T = TypeVar("T")


class Compute(Protocol):
    """`compute`'s shape: run `work(checkpoint)` within a CPU limit."""

    def __call__(self, work: Callable[[Callable[[], None]], T], cpu_limit: float) -> Awaitable[T]: ...


INLINE_SLICE = 0.02  # seconds of CPU a computation may hold the event loop
CHECK_EVERY = 64  # checkpoints between two looks at the clock


class OverCpuLimit(DecisionAbandoned):
    """The decision used more CPU than `decisionCPULimit` allows."""

    def __init__(self, limit: float) -> None:
        super().__init__(f"the decision needed more than {limit:g}s of CPU (decisionCPULimit {limit:g}s)")
        self.limit = limit

    def __reduce__(self) -> tuple[type[OverCpuLimit], tuple[float]]:
        return OverCpuLimit, (self.limit,)


class _MoveOffLoop(DecisionAbandoned):
    """The computation used up its slice of the event loop: run it again in a thread."""


class _Cancelled(DecisionAbandoned):
    """The pass was cancelled while its computation ran in a thread."""


class CpuBudget:
    """The checkpoint of one run of a computation: measures this thread's CPU time since it was made.

    Reading a thread's CPU clock is a system call (7-10 µs in a busy operator process, a few % of a binding),
    and most decisions finish before their first look at the clock. So the CPU clock is read first at the first
    look, `CHECK_EVERY` checkpoints in, and the time before it is counted as the wall time since the budget was
    made (a cheap clock, and never less than the CPU the thread used meanwhile): the budget only ever errs on
    the side of moving a computation off the loop early, by at most the thread's waits in its first checkpoints.
    """

    def __init__(self, limit: float, *, raises: type[DecisionAbandoned] | None = None,
                 cancelled: threading.Event | None = None) -> None:
        self.limit = limit
        self.raises = raises
        self.cancelled = cancelled
        self._made = time.perf_counter()
        self._cpu_at_first_look: float | None = None
        self._before_first_look = 0.0
        self._countdown = CHECK_EVERY

    def checkpoint(self) -> None:
        self._countdown -= 1
        if self._countdown > 0:
            return
        self._countdown = CHECK_EVERY
        if self.cancelled is not None and self.cancelled.is_set():
            raise _Cancelled("cancelled")
        if self.used() > self.limit:
            raise self.raises("slice used up") if self.raises is not None else OverCpuLimit(self.limit)

    def used(self) -> float:
        """Seconds of CPU this run has used (an upper bound until the first look; see the class)."""
        now = time.thread_time()
        if self._cpu_at_first_look is None:
            self._cpu_at_first_look = now
            self._before_first_look = time.perf_counter() - self._made
        return now - self._cpu_at_first_look + self._before_first_look


async def compute(work: Callable[[Callable[[], None]], T], cpu_limit: float) -> T:
    """`work(checkpoint)`, on the event loop if it is short, else in a worker thread (see the module)."""
    if cpu_limit <= INLINE_SLICE:
        return work(CpuBudget(cpu_limit).checkpoint)
    try:
        return work(CpuBudget(INLINE_SLICE, raises=_MoveOffLoop).checkpoint)
    except _MoveOffLoop:
        pass
    cancelled = threading.Event()

    def in_thread() -> T:
        return work(CpuBudget(cpu_limit, cancelled=cancelled).checkpoint)

    try:
        return await asyncio.get_running_loop().run_in_executor(None, in_thread)
    except asyncio.CancelledError:
        cancelled.set()  # the thread stops at its next checkpoint; nothing waits for it
        raise


async def compute_here(work: Callable[[Callable[[], None]], T], cpu_limit: float) -> T:
    """`work(checkpoint)` in this thread, whatever it takes up to `cpu_limit` (a decision process has no event
    loop to keep free)."""
    return work(CpuBudget(cpu_limit).checkpoint)
