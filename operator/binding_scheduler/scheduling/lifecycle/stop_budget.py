"""The time a stop may take, from the stop's request (the signal) to the end of the shutdown, and how it is
shared out: the drain gets `drainTimeout`, and what comes after it (posting the drained passes' Events,
releasing the Lease, closing the connections) gets `STOP_TAIL` in all, each step bounded by what is left.

A stalled API server answers nothing: without one deadline for the whole stop, each step would wait for its
own bound (1 s of Events, `renewDeadline` for the Lease: 10 s by default) and the kubelet would kill the pod
before it ended. The chart's grace period is `drainTimeout` + `terminationGracePeriodMarginSeconds` (10 s),
which leaves `STOP_TAIL` and the interpreter's exit inside it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from ...kube.errors import KubeError
from ...kube.lease import LeaseElector

logger = logging.getLogger(__name__)

STOP_TAIL = 4.0
"""Seconds a stop may take after the drain, whatever the API server does."""
CLOSE_RESERVE = 0.5
"""Seconds of the tail kept for closing the connections (local work: no answer is awaited)."""


@dataclass(frozen=True, slots=True)
class StopBudget:
    """The stop's deadline on the monotonic clock."""

    deadline: float

    @classmethod
    def starting(cls, at: float, drain_timeout: float) -> StopBudget:
        return cls(at + max(drain_timeout, 0.0) + STOP_TAIL)

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def share(self, bound: float, *, keep: float = 0.0) -> float:
        """What a step bounded by `bound` may take now, leaving `keep` seconds for the steps after it."""
        return max(0.0, min(bound, self.left() - keep))


async def release_within(
    lease: LeaseElector, budget: StopBudget, renew_deadline: float, lease_duration: float
) -> tuple[bool, str]:
    """Hand the Lease back within what is left of the stop's budget (and `renew_deadline`), keeping
    `CLOSE_RESERVE` for the connections. Whether it was released, and what became of it if not: the report's
    words (`not held`, `not released (why): it expires ...`)."""
    expiry = f"it expires {lease_duration:g}s after its last renewal"
    seconds = budget.share(renew_deadline, keep=CLOSE_RESERVE)
    if seconds <= 0:
        logger.warning("could not release the lease (it will expire): no time left in the stop's budget")
        return False, f"not released (no time left in the stop's budget): {expiry}"
    try:
        async with asyncio.timeout(seconds):
            if await lease.release():
                return True, "released"
            return False, "not held"
    except (KubeError, TimeoutError) as error:
        why = str(error) or f"no answer within {seconds:.1f}s"
        logger.warning("could not release the lease (it will expire): %s", why)
        return False, f"not released ({why}): {expiry}"
