"""`binding-scheduler run`: Kopf in this process with our own stop handling and exit code."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

import kopf

from .app import OperatorApp
from .handlers import register
from .options import LaunchOptions

logger = logging.getLogger(__name__)


class _StopSignals:
    """SIGTERM and SIGINT ask the app to stop. Ours from the first moment (a container's PID 1 ignores a SIGTERM
    it has no handler for), and again once Kopf has put its own in place: a stop must reach the passes at once,
    and a stop while waiting for the Lease must not wait for Kopf's 5 s wind-down. Only on the main thread (a
    test runs the operator in another)."""

    def __init__(self, app: OperatorApp, stop_flag: asyncio.Event, loop: asyncio.AbstractEventLoop) -> None:
        self.app, self.stop_flag, self.loop = app, stop_flag, loop
        self.received: list[int] = []
        self.main_thread = threading.current_thread() is threading.main_thread()

    def _on_signal(self, signum: int) -> None:
        logger.info("received %s: stopping", signal.Signals(signum).name)
        self.received.append(signum)
        self.app.request_stop()
        self.stop_flag.set()

    def take(self) -> None:
        if self.main_thread:
            for signum in (signal.SIGTERM, signal.SIGINT):
                self.loop.add_signal_handler(signum, self._on_signal, signum)

    def release(self) -> None:
        if self.main_thread:
            for signum in (signal.SIGTERM, signal.SIGINT):
                self.loop.remove_signal_handler(signum)


async def run_operator(
    app: OperatorApp, *, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None
) -> int:
    """Run until SIGTERM/SIGINT (or `stop`), then shut down within the drain bound. Returns the exit code:
    0 after a clean stop, 1 after a lost Lease or a failed start."""
    registry = kopf.OperatorRegistry()
    stop_flag = stop or asyncio.Event()
    ready_flag = ready or asyncio.Event()
    app.stop_flag = stop_flag
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_without_the_failed_start_again(app))
    signals = _StopSignals(app, stop_flag, loop)

    @kopf.on.startup(registry=registry)
    async def signals_to_us(**_: Any) -> None:
        # Registered first, so it runs before the app's startup (which may wait long for the Lease). Kopf
        # puts its handlers in place right after its first startup step: ours go back a moment later.
        loop.call_later(KOPF_SIGNALS_SETTLE, signals.take)

    register(registry, app)
    signals.take()
    operator = asyncio.create_task(
        kopf.operator(registry=registry, clusterwide=True, standalone=True, stop_flag=stop_flag, ready_flag=ready_flag),
        name="kopf-operator",
    )
    try:
        await _until_kopf_ends(operator, app, stop_flag)
    except Exception:
        if app.start_error is None:  # otherwise already said, in one line
            logger.exception("the operator failed")
        await app.shutdown()  # a start that failed after acquiring the Lease releases it
        return 1
    finally:
        signals.release()
    if app.start_error is not None:
        await app.shutdown()
        return 1
    if app.service is None:
        return 0 if signals.received else 1  # stopped before it could start
    logger.debug("kopf stopped")
    await app.shutdown()  # a no-op after Kopf's cleanup ran it; a stop during startup skips that cleanup
    return app.exit_code


def _without_the_failed_start_again(app: OperatorApp) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """The loop's exception handler: a failed start leaves Kopf's startup task holding an `ActivityError` nobody
    retrieves, and the collector would log it with a traceback whenever it runs (at exit, or in a later test)
    after our one `cannot start` line; everything else goes to asyncio's default handler."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if app.start_error is not None and type(error).__name__ == "ActivityError":
            return
        loop.default_exception_handler(context)

    return handle


KOPF_SIGNALS_SETTLE = 0.05  # seconds after Kopf's first startup step, when its signal handlers are in place
KOPF_EXIT_GRACE = 0.5  # seconds Kopf may take to wind down once our shutdown has finished


async def _until_kopf_ends(operator: asyncio.Task[None], app: OperatorApp, stop_flag: asyncio.Event) -> None:
    """Await Kopf; but once a stop is asked, run our shutdown without waiting for Kopf's cleanup (Kopf skips
    it for a stop during startup), and once that has finished (the write gate is closed, every pass has
    ended), give Kopf only `KOPF_EXIT_GRACE`: Kopf then waits up to 5 s for any task still alive in the loop
    (a gRPC or aiohttp internal, say) before it returns, and the exit must not wait for that."""
    finished_at: float | None = None
    shutdown: asyncio.Task[Any] | None = None
    loop = asyncio.get_running_loop()
    while not operator.done():
        await asyncio.wait({operator}, timeout=0.05)
        service = app.service
        if operator.done():
            continue
        if service is None:
            if app.start_error is not None:  # said in its line; nothing of ours runs: no wind-down to wait for
                finished_at = finished_at if finished_at is not None else loop.time()
                if loop.time() - finished_at >= KOPF_EXIT_GRACE:
                    operator.cancel()
                    await asyncio.wait({operator})
                    return
            continue
        if stop_flag.is_set() and shutdown is None:
            shutdown = asyncio.create_task(app.shutdown(), name="shutdown")  # shared with Kopf's cleanup
        if service.report is None:
            continue
        finished_at = finished_at if finished_at is not None else loop.time()
        if loop.time() - finished_at >= KOPF_EXIT_GRACE:
            logger.debug("kopf has not stopped %gs after the shutdown: cancelling it", KOPF_EXIT_GRACE)
            operator.cancel()
            await asyncio.wait({operator})
            return
    operator.result()


GC_THRESHOLDS = (50_000, 20, 10)
"""The cyclic collector's thresholds for the scheduler process (CPython's default is 700, 10, 10). A pass holds
thousands of short-lived objects across its awaits (a candidate per cluster, estimates, the result); with a
young generation of 700 they survive into the old one, and each full collection then walks every stored
binding: at 10,000 bindings over 1,000 clusters the collector took 90 s of a 170 s cold start."""


def main(options: LaunchOptions) -> int:
    gc.set_threshold(*GC_THRESHOLDS)
    return asyncio.run(run_operator(OperatorApp(options)))
