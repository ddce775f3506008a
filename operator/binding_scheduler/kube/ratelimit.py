"""A token bucket shared by every request of one client (Karmada's `--kube-api-qps` 40 / `--kube-api-burst` 60).

`acquire()` takes a token, waiting for one when the bucket is empty. Waiters reserve their token in turn (the
bucket may go below zero), so they leave in arrival order, `1/qps` apart. A cancelled waiter gives its
reservation back and its cancellation propagates at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class TokenBucket:
    """`qps` tokens per second, at most `burst` saved up. `qps <= 0` means no limit."""

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if qps > 0 and burst < 1:
            raise ValueError(f"burst must be at least 1 when qps is set, not {burst}")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(burst)
        self._last: float | None = None

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def _refill(self, now: float) -> None:
        if self._last is not None and now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        if self._last is None or now > self._last:
            self._last = now

    @property
    def tokens(self) -> float:
        """Tokens available now (negative: that many waiters hold reservations)."""
        if self.qps > 0:
            self._refill(self._now())
        return self._tokens

    async def acquire(self) -> None:
        """Take one token, waiting (cancellably) until it is available."""
        if self.qps <= 0:
            return
        self._refill(self._now())
        self._tokens -= 1.0
        if self._tokens >= 0.0:
            return
        try:
            await self._sleep(-self._tokens / self.qps)
        except BaseException:
            self._tokens = min(float(self.burst), self._tokens + 1.0)
            raise
