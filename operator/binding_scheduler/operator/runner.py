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
    try:
        await kopf.operator(
            registry=registry,
            clusterwide=True,
            standalone=True,
            stop_flag=stop_flag,
            ready_flag=ready_flag,
        )
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


def main(options: LaunchOptions) -> int:
    return asyncio.run(run_operator(OperatorApp(options)))
