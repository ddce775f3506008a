"""The metrics and health HTTP endpoints: `/metrics` (Prometheus text format), `/healthz` and `/readyz`.

Karmada serves `/metrics` on `--metrics-bind-address` (`:8080`) and `/healthz` on `--health-probe-bind-address`
(`:10351`); when the two are equal, one server serves both
(`cmd/scheduler/app/scheduler.go: serveHealthzAndMetrics`). Here a port of `None` disables that server and `0`
binds a free port (the configuration maps Karmada's "0 disables" onto `None`). Equal ports, `0` included, and
equal hosts mean one server for all three paths. Each server has its own host: an IP address or a hostname, or
"" for every interface (IPv4, and IPv6 where the machine has it), as Go's `:8080` does.

An aiohttp server on the event loop: no threads, `start()` and `stop()` are idempotent, and `stop()` waits at
most `shutdown_timeout` for requests in progress.
"""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import Callable
from types import TracebackType

from aiohttp import web

from binding_scheduler.scheduling.observability.metrics import CONTENT_TYPE, SchedulerMetrics

METRICS_PATH = "/metrics"
HEALTHZ_PATH = "/healthz"
READYZ_PATH = "/readyz"

logger = logging.getLogger(__name__)

ALL_INTERFACES = ("0.0.0.0", "::")
# What binding "::" fails with on a machine without IPv6: then "" means IPv4 only, as Go falls back to.
NO_IPV6 = frozenset({errno.EAFNOSUPPORT, errno.EADDRNOTAVAIL, errno.EPROTONOSUPPORT})


def readiness(
    *,
    stopping: bool,
    lease_lost: bool,
    standing_by: bool,
    lease_problem: str | None,
    scheduling: bool,
    watch_problem: str | None,
) -> bool:
    """What `/readyz` answers, from the service's state. Never once stopping or after a lost Lease. A standby is
    ready while it can take part in the election (its Lease attempts get answers): a rollout waits for each new
    pod to be ready, and a new pod cannot win the Lease while an old one holds it. A leader is ready once its
    caches are listed and its passes run (`scheduling`), and while no watch fails."""
    if stopping or lease_lost:
        return False
    if standing_by:
        return lease_problem is None
    return scheduling and watch_problem is None


class ServeError(Exception):
    """A server could not listen where it was asked to; the message says which server, where and why."""


class HealthServer:
    """Serves `/metrics` from `metrics`' registry, `/healthz` (always `ok` while serving) and `/readyz` (`ok` when
    `ready()` is true, else 503 with a short reason)."""

    def __init__(
        self,
        metrics: SchedulerMetrics,
        *,
        metrics_host: str = "",
        metrics_port: int | None = 8080,
        health_host: str = "",
        health_port: int | None = 10351,
        ready: Callable[[], bool],
        shutdown_timeout: float = 1.0,
    ) -> None:
        for what, port in (("metrics", metrics_port), ("health", health_port)):
            if port is not None and not 0 <= port <= 65535:
                raise ValueError(f"{what} port must be within 0..65535 or None (got {port})")
        if shutdown_timeout < 0:
            raise ValueError(f"shutdown_timeout must not be negative (got {shutdown_timeout})")
        self._metrics = metrics
        self._metrics_host = metrics_host
        self._health_host = health_host
        self._metrics_port_wanted = metrics_port
        self._health_port_wanted = health_port
        self._ready = ready
        self._shutdown_timeout = shutdown_timeout
        self._lock = asyncio.Lock()
        self._runners: list[web.AppRunner] = []
        self._metrics_port: int | None = None
        self._health_port: int | None = None

    # --- lifecycle -----------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind and serve. Does nothing when already serving. On any failure (a port in use, cancellation) the
        servers started so far are stopped again before the error propagates."""
        async with self._lock:
            if self._runners:
                return
            try:
                await self._start_servers()
            except BaseException:
                await self._stop_servers()
                raise

    async def stop(self) -> None:
        """Stop serving, waiting at most `shutdown_timeout` for requests in progress. Safe to call any number of
        times, and before `start()`."""
        async with self._lock:
            await self._stop_servers()

    async def __aenter__(self) -> HealthServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def serving(self) -> bool:
        return bool(self._runners)

    @property
    def metrics_port(self) -> int | None:
        """The port `/metrics` is served on, or None when that server is disabled or not running."""
        return self._metrics_port

    @property
    def health_port(self) -> int | None:
        """The port `/healthz` and `/readyz` are served on, or None when that server is disabled or not running."""
        return self._health_port

    def describe(self) -> str:
        """Where it serves, for the startup line: `metrics on :8080, health on 127.0.0.1:10351` (`off` when
        disabled; a host of "" is every interface)."""
        def where(name: str, host: str, port: int | None, wanted: int | None) -> str:
            if wanted is None:
                return f"{name} off"
            shown = f"[{host}]" if ":" in host else host
            return f"{name} on {shown}:{port if port is not None else wanted}"
        return (f"{where('metrics', self._metrics_host, self._metrics_port, self._metrics_port_wanted)}, "
                f"{where('health', self._health_host, self._health_port, self._health_port_wanted)}")

    # --- internals -----------------------------------------------------------------------------------------------

    async def _start_servers(self) -> None:
        metrics_port, health_port = self._metrics_port_wanted, self._health_port_wanted
        if metrics_port is not None and metrics_port == health_port and self._metrics_host == self._health_host:
            port = await self._serve(self._metrics_host, metrics_port, metrics=True, health=True)
            self._metrics_port = self._health_port = port
            return
        if metrics_port is not None:
            self._metrics_port = await self._serve(self._metrics_host, metrics_port, metrics=True, health=False)
        if health_port is not None:
            self._health_port = await self._serve(self._health_host, health_port, metrics=False, health=True)

    async def _serve(self, host: str, port: int, *, metrics: bool, health: bool) -> int:
        what = " and ".join(n for n, on in (("/metrics", metrics), ("/healthz, /readyz", health)) if on)
        try:
            return await self._listen(host, port, metrics=metrics, health=health)
        except OSError as error:
            where = f"{host}:{port}" if host else f":{port} (every interface)"
            fields = "spec.metrics.host/port" if metrics else "spec.metrics.healthHost/healthPort"
            raise ServeError(
                f"cannot serve {what} on {where}: {error.strerror or error} (set by {fields}, or "
                "--metrics-bind-address/--health-probe-bind-address)"
            ) from error

    async def _listen(self, host: str, port: int, *, metrics: bool, health: bool) -> int:
        app = web.Application()
        if metrics:
            app.router.add_get(METRICS_PATH, self._handle_metrics)
        if health:
            app.router.add_get(HEALTHZ_PATH, self._handle_healthz)
            app.router.add_get(READYZ_PATH, self._handle_readyz)
        runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=self._shutdown_timeout)
        self._runners.append(runner)
        await runner.setup()
        if host:
            await web.TCPSite(runner, host, port).start()
            bound: int = runner.addresses[0][1]
            return bound
        # Every interface: IPv4 first, then IPv6 on the same port (a free port is the IPv4 one's).
        await web.TCPSite(runner, ALL_INTERFACES[0], port).start()
        bound = runner.addresses[0][1]
        try:
            await web.TCPSite(runner, ALL_INTERFACES[1], bound).start()
        except OSError as error:
            if error.errno not in NO_IPV6:
                raise
            logger.debug("no IPv6 on this machine: serving on 0.0.0.0:%d only (%s)", bound, error)
        return bound

    async def _stop_servers(self) -> None:
        runners, self._runners = self._runners, []
        self._metrics_port = self._health_port = None
        for runner in runners:
            await runner.cleanup()

    async def _handle_metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self._metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    async def _handle_healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _handle_readyz(self, request: web.Request) -> web.Response:
        try:
            ready = self._ready()
        except Exception:
            # The probe is unauthenticated: the details go to the log, not to whoever asks.
            logger.exception("the readiness check failed")
            return web.Response(status=503, text="not ready: the readiness check failed (see the scheduler's log)")
        if ready:
            return web.Response(text="ok")
        return web.Response(status=503, text="not ready")
