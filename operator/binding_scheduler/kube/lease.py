"""Leader election on a `coordination.k8s.io/v1` Lease (Karmada: `karmada-scheduler` in `karmada-system`,
15 s lease, 10 s renew deadline, 2 s retry period: `cmd/scheduler/app/options/options.go: NewOptions`, used by
`cmd/scheduler/app/scheduler.go: run` through client-go's `leaderelection.RunOrDie`).

Every Lease write is a PUT carrying the resourceVersion that was read, so two candidates cannot both win: the
second gets 409, re-reads, and sees the winner. A lease is free when it has no holder or when
its record has not changed for `leaseDurationSeconds` as measured by our own clock since we first saw it so
(client-go's rule, `k8s.io/client-go/tools/leaderelection/leaderelection.go: tryAcquireOrRenew` and
`isLeaseValid`: the holder's `renewTime` is never compared with our clock, so a holder whose clock lags cannot be
deposed while it renews). `keep()` renews every `retry_period`; each renewal gets the whole `renew_deadline`
(tries every `retry_period` within it, as client-go's `LeaderElector.renew` does); when one cannot succeed within
it, or another holder shows up, it closes the client's write gate first (nothing of ours may be written once
leadership is in doubt), then calls `on_lost(reason)` once and returns. `release()` hands the lease over at once:
holder "" and a 1 s duration (client-go's `LeaderElector.release`). Every write passes the write gate.
"""

from __future__ import annotations

import asyncio
import datetime
import inspect
import logging
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .client import ApiClient, resource_path
from .errors import Conflict, KubeError, NotFound
from .gate import WriteGateClosed

logger = logging.getLogger(__name__)

OnLost = Callable[[str], Awaitable[None] | None]
PROBLEM_REPEAT = 60.0  # seconds between two WARNING lines of one lasting problem of the acquisition


def micro_time(seconds: float) -> str:
    """RFC 3339 with microseconds, UTC (metav1.MicroTime)."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaseNamespaceMissing(Exception):
    """The Lease's namespace does not exist: a definite answer (the create was refused, nothing was written), which
    no retry changes, unlike an API server that does not answer. Not a `KubeError`, so the election's retries do
    not take it for one."""

    def __init__(self, server: str, namespace: str) -> None:
        super().__init__(f"{server} has no namespace {namespace}, so the Lease cannot be created there "
                         "(--leader-elect-resource-namespace, spec.leaderElection.leaseNamespace)")


@dataclass(frozen=True)
class _Attempt:
    """The outcome of one try: `held` (we hold it now) or why not (`holder` is the other holder, if any)."""

    held: bool
    holder: str = ""
    why: str = ""


class LeaseElector:
    """One candidate for the Lease `namespace/name`."""

    def __init__(
        self,
        client: ApiClient,
        *,
        name: str = "karmada-scheduler",
        namespace: str = "karmada-system",
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        elapsed: Callable[[], float] | None = None,
    ) -> None:
        """`clock` is the wall clock written into the Lease; `elapsed` measures how long a record stayed
        unchanged (time.monotonic, or `clock` when a custom one is given, so tests drive both)."""
        if not lease_duration > renew_deadline > 0:
            raise ValueError(f"lease_duration ({lease_duration}) must exceed renew_deadline ({renew_deadline}) > 0")
        if not 0 < retry_period < renew_deadline:
            raise ValueError(f"retry_period ({retry_period}) must be positive and below renew_deadline")
        self.client = client
        self.name = name
        self.namespace = namespace
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._clock = clock
        self._sleep = sleep
        self._elapsed = elapsed or (time.monotonic if clock is time.time else clock)
        self._seen_spec: dict[str, Any] | None = None  # the last Lease record seen, and since when (elapsed)
        self._seen_at = 0.0
        self._held_since_attempt = float("-inf")  # elapsed() when our last successful write was begun
        self._leader = False
        self._sent_write = False  # a create or PUT of ours went out: the Lease may name us though no answer said so
        self.observed: dict[str, Any] = {}  # the last Lease read or written
        self.problem: str | None = None  # why the last acquisition attempt got no decision; None when it got one
        self._problem_said_at = float("-inf")

    @property
    def is_leader(self) -> bool:
        return self._leader

    @property
    def may_hold(self) -> bool:
        """Whether the Lease may name us: we lead, or a write of ours that would take it went out."""
        return self._leader or self._sent_write

    def doubt(self) -> str | None:
        """Why this instance cannot be sure it still leads, or None. Another candidate takes the Lease over only
        after seeing our record unchanged for `lease_duration` by its clock, and it can only have seen our last
        record after we began writing it; so until `lease_duration` minus one `retry_period` (a margin for the
        write's transit) after that beginning, nobody else holds it. Writes check this right before they are
        sent: a leader that was stopped or starved past that point cannot write before its keeper notices."""
        if not self._leader:
            return "this instance does not hold the Lease"
        age = self._elapsed() - self._held_since_attempt
        if age > self.lease_duration - self.retry_period:
            return f"the Lease was last renewed {age:.1f}s ago: another instance may lead by now"
        return None

    @property
    def path(self) -> str:
        return resource_path("coordination.k8s.io", "v1", "leases", self.namespace, self.name)

    @property
    def holder(self) -> str:
        """The holder in the last Lease seen ("" when none)."""
        return str((self.observed.get("spec") or {}).get("holderIdentity") or "")

    # ---- public --------------------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Return once this instance holds the Lease; try every `retry_period` meanwhile.

        An attempt the API server does not decide (no answer, a TLS failure, a refusal) is a `problem` (an
        attempt without an answer within `renew_deadline` too: a stalled API server hangs rather than fails):
        said at WARNING with its cause the first time, when the cause changes and then every PROBLEM_REPEAT
        seconds while it lasts, and at INFO once it is over. A standby that can take part in the election is
        healthy; one that cannot is blind, and says so. A namespace that does not exist is a definite answer:
        `LeaseNamespaceMissing`."""
        while True:
            try:
                async with asyncio.timeout(self.renew_deadline):
                    attempt = await self._try_acquire_or_renew()
            except TimeoutError:
                cause = f"no answer within {self.renew_deadline:g}s"  # a stalled API server hangs, it does not fail
                attempt = _Attempt(False, why=cause)
                self._report_problem(cause)
            except KubeError as exc:
                attempt = _Attempt(False, why=str(exc))
                self._report_problem(str(exc))
            else:
                self._problem_over()
            if attempt.held:
                logger.info("acquired lease %s/%s as %s", self.namespace, self.name, self.identity)
                self._leader = True
                return
            logger.debug("lease %s/%s not acquired: %s", self.namespace, self.name, attempt.why)
            await self._sleep(self.retry_period)

    def _report_problem(self, cause: str) -> None:
        now = self._elapsed()
        if cause != self.problem or now - self._problem_said_at >= PROBLEM_REPEAT:
            logger.warning("cannot take part in the election for lease %s/%s: %s (retrying every %gs)",
                           self.namespace, self.name, cause, self.retry_period)
            self._problem_said_at = now
        self.problem = cause

    def _problem_over(self) -> None:
        if self.problem is not None:
            logger.info("lease %s/%s: the API server answers again", self.namespace, self.name)
        self.problem = None

    async def keep(self, on_lost: OnLost) -> None:
        """Renew every `retry_period` until leadership is lost; then close the write gate, call
        `on_lost(reason)` once and return. Run it in a task of its own; cancel it to stop renewing."""
        if not self._leader:
            await self._lost(on_lost, "keep() was called without holding the lease")
            return
        while True:
            await self._sleep(self.retry_period)
            why = await self._renew_within_deadline()
            if why is not None:
                await self._lost(on_lost, why)
                return

    async def _renew_within_deadline(self) -> str | None:
        """One renewal: try every `retry_period` until it succeeds (None) or `renew_deadline` has passed since
        this renewal began (the reason), or another holder shows up (the reason)."""
        deadline = self._elapsed() + self.renew_deadline
        last_error = "no renewal was attempted in time"
        while True:
            remaining = deadline - self._elapsed()
            if remaining <= 0:
                return f"could not renew the lease within {self.renew_deadline:g}s: {last_error}"
            try:
                async with asyncio.timeout(remaining):
                    attempt = await self._try_acquire_or_renew()
            except TimeoutError:
                attempt = _Attempt(False, why="the renewal got no answer within the renew deadline")
            except KubeError as exc:
                attempt = _Attempt(False, why=str(exc))
            except WriteGateClosed as exc:
                return f"cannot renew the lease: {exc}"
            if attempt.held:
                return None
            if attempt.holder:
                return f"the lease is now held by {attempt.holder}"
            last_error = attempt.why or last_error
            remaining = deadline - self._elapsed()
            if remaining <= 0:
                return f"could not renew the lease within {self.renew_deadline:g}s: {last_error}"
            logger.warning("lease %s/%s renewal failed, retrying: %s", self.namespace, self.name, attempt.why)
            await self._sleep(min(self.retry_period, remaining))

    async def release(self) -> bool:
        """If the Lease names us, give it up (holder "", duration 1 s) so a successor acquires at once.
        True when released. Stop `keep()` and `acquire()` first. Without a write of ours ever sent it makes
        no request; an `acquire()` cancelled after sending its write may have taken the Lease without knowing,
        so then the Lease is read to know."""
        if not self._leader and not self._sent_write:
            return False
        self._leader = False
        for _ in range(3):
            try:
                lease = await self.client.get(self.path)
            except NotFound:
                return False
            self.observed = lease
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != self.identity:
                return False
            now = micro_time(self._clock())
            spec.update(holderIdentity="", leaseDurationSeconds=1, acquireTime=now, renewTime=now)
            try:
                self.observed = await self.client.put(self.path, {**lease, "spec": spec})
            except Conflict:
                continue
            logger.info("released lease %s/%s", self.namespace, self.name)
            return True
        return False

    # ---- one attempt ---------------------------------------------------------------------------------

    def _record(self, previous: dict[str, Any] | None) -> dict[str, Any]:
        now = micro_time(self._clock())
        previous = previous or {}
        ours = previous.get("holderIdentity") == self.identity
        transitions = int(previous.get("leaseTransitions") or 0)
        return {
            **previous,
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.lease_duration)),
            "acquireTime": previous.get("acquireTime") if ours and previous.get("acquireTime") else now,
            "renewTime": now,
            "leaseTransitions": transitions if ours or not previous else transitions + 1,
        }

    def _seen(self, spec: dict[str, Any]) -> None:
        """Note another holder's record as read: a changed record restarts its expiry by our own clock. (Our own
        writes are never judged expired, so they need no note.)"""
        if spec != self._seen_spec:
            self._seen_spec = dict(spec)
            self._seen_at = self._elapsed()

    def _expired(self, spec: dict[str, Any]) -> bool:
        """Unchanged for its `leaseDurationSeconds` since we first saw it so (client-go's observedTime)."""
        self._seen(spec)
        duration = spec.get("leaseDurationSeconds")
        if not isinstance(duration, int | float) or isinstance(duration, bool):
            return True
        return self._elapsed() > self._seen_at + float(duration)

    async def _try_acquire_or_renew(self) -> _Attempt:
        """Read the Lease; create it, renew it or take it over when free. A 409 means someone else wrote in
        between: read again and decide again (a few times, then report it)."""
        why = ""
        for _ in range(3):
            begun = self._elapsed()
            try:
                lease = await self.client.get(self.path)
            except NotFound:
                body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": self.name, "namespace": self.namespace},
                        "spec": self._record(None)}
                try:
                    self._sent_write = True
                    self.observed = await self.client.create(self.path.rsplit("/", 1)[0], body)
                except Conflict as exc:
                    why = str(exc)
                    continue
                except NotFound as exc:
                    if exc.details.get("kind") == "namespaces":
                        raise LeaseNamespaceMissing(self.client.connection.server, self.namespace) from None
                    raise
                self._held_since_attempt = begun
                return _Attempt(True)
            self.observed = lease
            spec = dict(lease.get("spec") or {})
            holder = str(spec.get("holderIdentity") or "")
            if holder and holder != self.identity and not self._expired(spec):
                if not self._leader:
                    # Read after any write of ours: none took it, and a late one is fenced (or refused as a
                    # duplicate create), so a stop has nothing of ours to release.
                    self._sent_write = False
                return _Attempt(False, holder=holder, why=f"held by {holder}")
            if holder != self.identity and self._leader:
                # We believed we held it, but it expired and someone (or a release) changed it: not ours.
                return _Attempt(False, holder=holder or "nobody")
            try:
                self._sent_write = True
                self.observed = await self.client.put(self.path, {**lease, "spec": self._record(spec)})
            except Conflict as exc:
                why = str(exc)
                continue
            self._held_since_attempt = begun
            return _Attempt(True)
        return _Attempt(False, why=f"conflicting writes: {why}")

    async def _lost(self, on_lost: OnLost, reason: str) -> None:
        self._leader = False
        logger.error("lost lease %s/%s: %s", self.namespace, self.name, reason)
        self.client.gate.close(f"leadership lost: {reason}")
        outcome = on_lost(reason)
        if inspect.isawaitable(outcome):
            await outcome
