"""Per-cluster estimator failures: a metric for every one, a log line at most once per cluster per minute."""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable
from enum import StrEnum

from prometheus_client import REGISTRY, CollectorRegistry, Counter

logger = logging.getLogger("binding_scheduler.estimation")

FAILURES_METRIC = "binding_scheduler_estimator_failures"
LOG_INTERVAL = 60.0


class Reason(StrEnum):
    """The `reason` label of the failure metric: a small, closed set."""

    DISCOVERY = "discovery"  # the estimator's address cannot be found
    DIAL = "dial"  # no address became ready within the dial timeout
    DEADLINE = "deadline"  # the fan-out's deadline passed before the answer
    UNAVAILABLE = "unavailable"  # the connection broke or was refused
    RPC_ERROR = "rpc_error"  # the estimator answered with an error status (UNKNOWN, ...)
    INVALID_ANSWER = "invalid_answer"  # undecodable, negative (other than -1) or out of range
    SKIPPED = "skipped"  # not asked: Pull mode with disable_in_pull_mode (not counted, not logged)


_counters: weakref.WeakKeyDictionary[CollectorRegistry, Counter] = weakref.WeakKeyDictionary()


def failure_counter(registry: CollectorRegistry | None = None) -> Counter:
    """The failure counter of `registry` (the default one when None), created once per registry."""
    target = registry if registry is not None else REGISTRY
    counter = _counters.get(target)
    if counter is None:
        counter = Counter(
            FAILURES_METRIC,
            "Accurate estimator calls that gave no usable answer, per cluster and reason.",
            ["cluster", "reason"],
            registry=target,
        )
        _counters[target] = counter
    return counter


class FailureReporter:
    """Counts every failure and logs one line per cluster at most every `interval` seconds."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        interval: float = LOG_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._counter = failure_counter(registry)
        self._interval = interval
        self._clock = clock
        self._last_logged: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def report(self, cluster: str, reason: Reason, text: str) -> None:
        if reason is Reason.SKIPPED:
            return
        self._counter.labels(cluster=cluster, reason=reason.value).inc()
        now = self._clock()
        last = self._last_logged.get(cluster)
        if last is not None and now - last < self._interval:
            self._suppressed[cluster] = self._suppressed.get(cluster, 0) + 1
            return
        self._last_logged[cluster] = now
        suppressed = self._suppressed.pop(cluster, 0)
        more = f" ({suppressed} more since the last report)" if suppressed else ""
        logger.warning("estimator of cluster %s failed (%s): %s%s", cluster, reason.value, text, more)

    def forget(self, cluster: str) -> None:
        self._last_logged.pop(cluster, None)
        self._suppressed.pop(cluster, None)
