"""`binding-scheduler run`: Kopf in this process with our own stop handling and exit code."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading

import kopf

from .app import OperatorApp
from .handlers import register
from .options import LaunchOptions

logger = logging.getLogger(__name__)


async def run_operator(
    app: OperatorApp, *, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None
) -> int:
    """Run until SIGTERM/SIGINT (or `stop`), then shut down within the drain bound. Returns the exit code:
    0 after a clean stop, 1 after a lost Lease or a failed start."""
    registry = kopf.OperatorRegistry()
    register(registry, app)
    stop_flag = stop or asyncio.Event()
    ready_flag = ready or asyncio.Event()
    app.stop_flag = stop_flag
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        logger.info("received %s: stopping", signal.Signals(signum).name)
        app.request_stop()
        stop_flag.set()

    main_thread = threading.current_thread() is threading.main_thread()

    async def take_signals() -> None:
        await ready_flag.wait()
        if main_thread:  # replaces Kopf's handlers, so the stop reaches the passes at once
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, on_signal, signum)

    signals = asyncio.create_task(take_signals())
    operator = asyncio.create_task(
        kopf.operator(registry=registry, clusterwide=True, standalone=True, stop_flag=stop_flag, ready_flag=ready_flag),
        name="kopf-operator",
    )
    try:
        await _until_kopf_ends(operator, app)
    except Exception:
        if app.start_error is None:  # otherwise already said, in one line
            logger.exception("the operator failed")
        await app.shutdown()  # a start that failed after acquiring the Lease releases it
        return 1
    finally:
        signals.cancel()
        if main_thread:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
    if app.service is None:
        return 1
    logger.debug("kopf stopped")
    await app.shutdown()  # a no-op after Kopf's cleanup ran it; a stop during startup skips that cleanup
    return app.exit_code


KOPF_EXIT_GRACE = 0.5  # seconds Kopf may take to wind down once our shutdown has finished


async def _until_kopf_ends(operator: asyncio.Task[None], app: OperatorApp) -> None:
    """Await Kopf; but once our shutdown has finished (the write gate is closed, every pass has ended), give
    it only `KOPF_EXIT_GRACE`: Kopf then waits up to 5 s for any task still alive in the loop (a gRPC or
    aiohttp internal, say) before it returns, and the exit must not wait for that."""
    finished_at: float | None = None
    loop = asyncio.get_running_loop()
    while not operator.done():
        await asyncio.wait({operator}, timeout=0.05)
        service = app.service
        if operator.done() or service is None or service.report is None:
            continue
        finished_at = finished_at if finished_at is not None else loop.time()
        if loop.time() - finished_at >= KOPF_EXIT_GRACE:
            logger.debug("kopf has not stopped %gs after the shutdown: cancelling it", KOPF_EXIT_GRACE)
            operator.cancel()
            await asyncio.wait({operator})
            return
    operator.result()


def main(options: LaunchOptions) -> int:
    return asyncio.run(run_operator(OperatorApp(options)))
