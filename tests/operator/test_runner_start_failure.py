"""A start that fails says why in one line and the process leaves at once: the runner does not wait for Kopf's
own wind-down (seconds) once our start has failed. (That a failure after the servers started says its cause
before the shutdown's report is held by tests/cli/test_errors.py, with the port in use.)"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from binding_scheduler.operator.runner import _until_kopf_ends


async def test_after_a_failed_start_kopf_is_not_waited_for() -> None:
    kopf_winding_down = asyncio.ensure_future(asyncio.Event().wait())  # a Kopf that would take its time
    app: Any = SimpleNamespace(service=None, start_error="SchedulerConfiguration x (--config) does not exist")
    async with asyncio.timeout(10):
        await _until_kopf_ends(kopf_winding_down, app, asyncio.Event())
    assert kopf_winding_down.cancelled()


async def test_before_a_start_fails_kopf_is_awaited() -> None:
    kopf = asyncio.ensure_future(asyncio.sleep(0.2))
    app: Any = SimpleNamespace(service=None, start_error=None)
    await _until_kopf_ends(kopf, app, asyncio.Event())
    assert kopf.done() and not kopf.cancelled()
