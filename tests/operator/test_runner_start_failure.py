"""A start that fails says why in one line and the process leaves at once: the runner does not wait for Kopf's
own wind-down (seconds) once our start has failed. (That a failure after the servers started says its cause
before the shutdown's report is held by tests/cli/test_errors.py, with the port in use.)"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

from binding_scheduler.operator.app import OperatorApp
from binding_scheduler.operator.options import LaunchOptions
from binding_scheduler.operator.runner import _until_kopf_ends, _without_the_failed_start_again


async def test_after_failed_start_kopf_is_not_waited_for() -> None:
    kopf_winding_down = asyncio.ensure_future(asyncio.Event().wait())  # a Kopf that would take its time
    app = OperatorApp(LaunchOptions())
    app.stop_flag = asyncio.Event()
    app._say_cannot_start(RuntimeError("SchedulerConfiguration x (--config) does not exist"))
    async with asyncio.timeout(10):
        await _until_kopf_ends(kopf_winding_down, app, app.stop_flag)
    assert kopf_winding_down.cancelled()


async def test_before_start_fails_kopf_is_awaited() -> None:
    kopf = asyncio.ensure_future(asyncio.sleep(0.2))
    app: Any = SimpleNamespace(service=None, start_error=None)
    await _until_kopf_ends(kopf, app, asyncio.Event())
    assert kopf.done() and not kopf.cancelled()


class ActivityError(Exception):
    """Named as Kopf's own (kopf._core.engines.activities), which its failed startup task holds."""


def handled(start_error: str | None, context: dict[str, Any]) -> list[dict[str, Any]]:
    """The contexts the loop's handler passes on to asyncio's default handler."""
    passed: list[dict[str, Any]] = []
    loop: Any = SimpleNamespace(default_exception_handler=passed.append)
    _without_the_failed_start_again(cast(OperatorApp, SimpleNamespace(start_error=start_error)))(loop, context)
    return passed


def test_failed_start_activity_error_logged_once() -> None:
    context = {"message": "Task exception was never retrieved", "exception": ActivityError("failed")}
    assert handled("kubeconfig /x does not exist", context) == []


def test_other_loop_errors_reach_asyncios_handler() -> None:
    other = {"message": "Task exception was never retrieved", "exception": RuntimeError("boom")}
    activity = {"message": "Task exception was never retrieved", "exception": ActivityError("failed")}
    assert handled("kubeconfig /x does not exist", other) == [other]
    assert handled(None, activity) == [activity]
