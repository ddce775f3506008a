"""One gRPC channel per cluster: created on first use, kept (gRPC reconnects it by itself), closed on demand, and
replaced when the cluster's estimator has moved to another address.

Dialing follows Karmada (`pkg/util/grpcconnection/config.go: ClientConfig.DialWithTimeOut` and
`createGRPCConnection`, called by `pkg/estimator/client/cache.go: EstablishConnection`): try the candidate
addresses in order, each until its connection is READY or `dial_timeout` passes, and keep the first that
succeeds. One difference: an address whose connection
fails outright (refused, unresolvable: TRANSIENT_FAILURE) is given up at once instead of waiting out the dial
timeout. Dialing runs inside the caller's task, so it is bounded by the caller's deadline and cancelled with it.

gRPC reconnects a channel to the address it was made for, never to another: when the estimator's Service is
re-pointed (another ExternalName or port), a channel kept forever would fail until the scheduler restarts. So a
call that fails for want of a connection (`ChannelPool.call_failed`) makes the next call on that cluster resolve
its addresses again first (in that call's task, under its deadline; at most once per `RECHECK_INTERVAL`) and,
when the channel's address is no longer among them, close the channel and dial the new address: what a freshly
started scheduler would do. Calls on a channel that works never wait for a lookup.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

import grpc
import grpc.aio

from .credentials import TlsMaterial
from .discovery import ServiceLookup, candidate_targets
from .settings import EstimatorSettings
from .trust import peer_trust

logger = logging.getLogger("binding_scheduler.estimation")

# A channel whose estimator went away fails calls fast (UNAVAILABLE) while gRPC reconnects in the background,
# with exponential backoff. gRPC's default cap (120 s) would keep a restarted estimator unused for minutes;
# these bounds bring it back within seconds.
_MAX_RECONNECT_BACKOFF_MS = 5000
CHANNEL_OPTIONS: list[tuple[str, int]] = [
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", _MAX_RECONNECT_BACKOFF_MS),
]

RECHECK_INTERVAL = _MAX_RECONNECT_BACKOFF_MS / 1000
"""Seconds between two re-resolutions of one cluster's address: as often as gRPC retries the connection, so an
estimator that stays down costs one Service lookup per interval, not one per pass."""


class DialError(Exception):
    """No candidate address of a cluster's estimator could be connected."""


async def wait_ready(channel: grpc.aio.Channel, within: float) -> None:
    """Return when `channel` is READY; `DialError` if it fails or `within` seconds pass first."""
    try:
        async with asyncio.timeout(within):
            state = channel.get_state(try_to_connect=True)
            while state is not grpc.ChannelConnectivity.READY:
                if state in (grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN):
                    raise DialError(f"connection failed ({state.name})")
                await channel.wait_for_state_change(state)
                state = channel.get_state(try_to_connect=True)
    except TimeoutError:
        raise DialError(f"not ready within {within:g}s") from None


class ChannelPool:
    def __init__(
        self,
        settings: EstimatorSettings,
        lookup: ServiceLookup | None,
        tls: TlsMaterial | None,
        *,
        recheck_interval: float = RECHECK_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._lookup = lookup
        self._tls = tls
        self._recheck_interval = recheck_interval
        self._clock = clock
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._targets: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._suspects: set[str] = set()  # clusters whose channel failed a call for want of a connection
        self._next_recheck: dict[str, float] = {}
        self._closed = False

    @property
    def targets(self) -> dict[str, str]:
        """The address each open channel is connected to, per cluster."""
        return dict(self._targets)

    async def channel(self, cluster: str) -> grpc.aio.Channel:
        """The channel of `cluster`, dialing it first when there is none or its estimator has moved.

        `DiscoveryError` when the addresses cannot be resolved (again), `DialError` when none connects."""
        existing = self._channels.get(cluster)
        if existing is not None and not self._recheck_due(cluster, existing):
            return existing
        lock = self._locks.setdefault(cluster, asyncio.Lock())
        async with lock:
            existing = self._channels.get(cluster)
            moved_to = None
            if existing is not None:
                if not self._recheck_due(cluster, existing):
                    return existing
                moved_to = await self._recheck(cluster, existing)
                if moved_to is None:
                    return existing
            if self._closed:
                raise DialError("the estimator client is closed")
            target, channel = await self._dial(cluster, moved_to)
            if self._closed:
                await channel.close(None)
                raise DialError("the estimator client is closed")
            self._channels[cluster] = channel
            self._targets[cluster] = target
            return channel

    def call_failed(self, cluster: str, channel: grpc.aio.Channel) -> None:
        """A call on `channel` ended UNAVAILABLE or past its deadline. Unless the channel is connected now (then
        the estimator was slow, not unreachable), the next call on `cluster` resolves its addresses again first.

        Synchronous on purpose: the failing call ends as it would have, without waiting for a lookup (its
        deadline may well have passed). Not for cancelled calls: cancelling says nothing about the address."""
        if self._channels.get(cluster) is channel and channel.get_state() is not grpc.ChannelConnectivity.READY:
            self._suspects.add(cluster)

    def _recheck_due(self, cluster: str, channel: grpc.aio.Channel) -> bool:
        """Whether `cluster`'s addresses should be resolved again before its channel is used: a call failed for
        want of a connection, gRPC has not reconnected since, and the last re-resolution is `recheck_interval`
        old. Only a set lookup for a cluster whose calls succeed."""
        if cluster not in self._suspects:
            return False
        if channel.get_state() is grpc.ChannelConnectivity.READY:
            self._suspects.discard(cluster)  # reconnected: the address works
            return False
        return self._clock() >= self._next_recheck.get(cluster, -math.inf)

    async def _recheck(self, cluster: str, channel: grpc.aio.Channel) -> tuple[str, ...] | None:
        """Resolve `cluster`'s addresses again. When the channel's address is still one of them, keep it (gRPC
        goes on reconnecting) and return None; otherwise close it and return the addresses to dial instead."""
        self._next_recheck[cluster] = self._clock() + self._recheck_interval  # a cut lookup counts too
        targets = await candidate_targets(self._settings, cluster, self._lookup)
        if self._closed:  # `close` does not wait for the cluster's lock: the channel is gone
            raise DialError("the estimator client is closed")
        self._suspects.discard(cluster)
        old = self._targets[cluster]
        if old in targets:
            return None
        logger.info("estimator of cluster %s moved from %s to %s: reconnecting", cluster, old, " or ".join(targets))
        del self._channels[cluster], self._targets[cluster]
        await asyncio.shield(channel.close(None))  # finished even if the caller is cancelled meanwhile
        return targets

    async def _open(self, target: str) -> grpc.aio.Channel:
        if self._tls is None:
            return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
        if not self._tls.skip_verify:
            return grpc.aio.secure_channel(target, self._tls.credentials(), options=CHANNEL_OPTIONS)
        root, name = await peer_trust(target)
        options = [*CHANNEL_OPTIONS, ("grpc.ssl_target_name_override", name)]
        return grpc.aio.secure_channel(target, self._tls.credentials(root_override=root), options=options)

    async def _dial(self, cluster: str, targets: tuple[str, ...] | None) -> tuple[str, grpc.aio.Channel]:
        """Connect to the first of `targets` (resolved now when None) that becomes ready."""
        if targets is None:
            targets = await candidate_targets(self._settings, cluster, self._lookup)
        errors = []
        for target in targets:
            try:
                channel = await self._open(target)
            except (OSError, ValueError) as exc:
                errors.append(f"{target}: {exc}")
                continue
            try:
                await wait_ready(channel, self._settings.dial_timeout)
            except DialError as exc:
                await channel.close(None)
                errors.append(f"{target}: {exc}")
                continue
            except BaseException:
                await asyncio.shield(channel.close(None))
                raise
            return target, channel
        raise DialError("; ".join(errors) or "no address to dial")

    async def forget(self, cluster: str) -> None:
        """Close the channel of `cluster` (calls in flight on it end with CANCELLED)."""
        async with self._locks.setdefault(cluster, asyncio.Lock()):
            channel = self._channels.pop(cluster, None)
            self._targets.pop(cluster, None)
            self._suspects.discard(cluster)
            self._next_recheck.pop(cluster, None)
            if channel is not None:
                await channel.close(None)

    async def close(self) -> None:
        """Close every channel; idempotent. Later dials fail with `DialError`."""
        self._closed = True
        channels = list(self._channels.values())
        self._channels.clear()
        self._targets.clear()
        self._suspects.clear()
        for channel in channels:
            await channel.close(None)
