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
    """SIGTERM and SIGINT ask the app to stop: the one owner of the signals. Ours from the first moment (a
    container's PID 1 ignores a SIGTERM it has no handler for), and again right after Kopf's `spawn_tasks` put its
    own in place, before the loop reads any signal: a stop must reach the passes at once, and a stop while
    waiting for the Lease must not wait for Kopf's 5 s wind-down. Only on the main thread (a test runs the
    operator in another)."""

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
    0 after a clean stop, 1 after a lost Lease or a failed start.

    The one stop flag joins everything that ends the process: our signal handlers, the Lease lost (the service's
    `on_fatal`), a failed start (the app's), and the caller's `stop`. Kopf watches the same flag. The shutdown
    entries, in the order they run: (1) the signal handler asks the service to stop at once (its passes are
    cancelled before their commit point) and sets the flag; (2) `_until_kopf_ends` sees the flag and runs the
    shutdown, not waiting for Kopf's cleanup; (3) Kopf's cleanup handler awaits that same shutdown (shared);
    (4) after Kopf has ended, the shutdown once more, a no-op unless a stop during the start skipped Kopf's
    cleanup."""
    registry = kopf.OperatorRegistry()
    stop_flag = stop or asyncio.Event()
    ready_flag = ready or asyncio.Event()
    app.stop_flag = stop_flag
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_without_the_failed_start_again(app))
    signals = _StopSignals(app, stop_flag, loop)
    register(registry, app)
    signals.take()
    before = asyncio.all_tasks()
    tasks = await kopf.spawn_tasks(registry=registry, clusterwide=True, standalone=True, stop_flag=stop_flag,
                                   ready_flag=ready_flag)
    signals.take()  # Kopf put its own handlers in place as spawn_tasks ended: ours again, before any signal is read
    operator = asyncio.create_task(kopf.run_tasks(tasks, ignored=before), name="kopf-operator")
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
    await app.shutdown()  # (4): a no-op after Kopf's cleanup ran it; a stop during startup skips that cleanup
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


KOPF_EXIT_GRACE = 0.5  # seconds Kopf may take to wind down once our shutdown has finished


async def _until_kopf_ends(operator: asyncio.Task[None], app: OperatorApp, stop_flag: asyncio.Event) -> None:
    """Await Kopf, or a stop. Once a stop is asked (the flag), run our shutdown without waiting for Kopf's cleanup
    (Kopf skips it for a stop during startup); once that has finished (the write gate is closed, every pass has
    ended), give Kopf only `KOPF_EXIT_GRACE`: Kopf then waits up to 5 s for any task still alive in the loop (a
    gRPC or aiohttp internal, say) before it returns, and the exit must not wait for that."""
    asked = asyncio.create_task(stop_flag.wait(), name="stop-asked")
    try:
        await asyncio.wait({operator, asked}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        asked.cancel()
    if not operator.done():
        await app.shutdown()  # (2): shared with Kopf's cleanup, bounded by its own budget
        await asyncio.wait({operator}, timeout=KOPF_EXIT_GRACE)
    if not operator.done():
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
