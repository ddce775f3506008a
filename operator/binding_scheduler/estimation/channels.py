"""One gRPC channel per cluster: created on first use, kept (gRPC reconnects it by itself), closed on demand.

Dialing follows Karmada (`pkg/util/grpcconnection/config.go: ClientConfig.DialWithTimeOut` and
`createGRPCConnection`, called by `pkg/estimator/client/cache.go: EstablishConnection`): try the candidate
addresses in order, each until its connection is READY or `dial_timeout` passes, and keep the first that
succeeds. One difference: an address whose connection
fails outright (refused, unresolvable: TRANSIENT_FAILURE) is given up at once instead of waiting out the dial
timeout. Dialing runs inside the caller's task, so it is bounded by the caller's deadline and cancelled with it.
"""

from __future__ import annotations

import asyncio

import grpc
import grpc.aio

from .credentials import TlsMaterial
from .discovery import ServiceLookup, candidate_targets
from .settings import EstimatorSettings
from .trust import peer_trust

# A channel whose estimator went away fails calls fast (UNAVAILABLE) while gRPC reconnects in the background,
# with exponential backoff. gRPC's default cap (120 s) would keep a restarted estimator unused for minutes;
# these bounds bring it back within seconds.
CHANNEL_OPTIONS: list[tuple[str, int]] = [
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 5000),
]


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
        self, settings: EstimatorSettings, lookup: ServiceLookup | None, tls: TlsMaterial | None
    ) -> None:
        self._settings = settings
        self._lookup = lookup
        self._tls = tls
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._targets: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    @property
    def targets(self) -> dict[str, str]:
        """The address each open channel is connected to, per cluster."""
        return dict(self._targets)

    async def channel(self, cluster: str) -> grpc.aio.Channel:
        """The channel of `cluster`, dialing it first when there is none."""
        existing = self._channels.get(cluster)
        if existing is not None:
            return existing
        lock = self._locks.setdefault(cluster, asyncio.Lock())
        async with lock:
            existing = self._channels.get(cluster)
            if existing is not None:
                return existing
            if self._closed:
                raise DialError("the estimator client is closed")
            target, channel = await self._dial(cluster)
            if self._closed:
                await channel.close(None)
                raise DialError("the estimator client is closed")
            self._channels[cluster] = channel
            self._targets[cluster] = target
            return channel

    async def _open(self, target: str) -> grpc.aio.Channel:
        if self._tls is None:
            return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
        if not self._tls.skip_verify:
            return grpc.aio.secure_channel(target, self._tls.credentials(), options=CHANNEL_OPTIONS)
        root, name = await peer_trust(target)
        options = [*CHANNEL_OPTIONS, ("grpc.ssl_target_name_override", name)]
        return grpc.aio.secure_channel(target, self._tls.credentials(root_override=root), options=options)

    async def _dial(self, cluster: str) -> tuple[str, grpc.aio.Channel]:
        errors = []
        for target in await candidate_targets(self._settings, cluster, self._lookup):
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
            if channel is not None:
                await channel.close(None)

    async def close(self) -> None:
        """Close every channel; idempotent. Later dials fail with `DialError`."""
        self._closed = True
        channels = list(self._channels.values())
        self._channels.clear()
        self._targets.clear()
        for channel in channels:
            await channel.close(None)
