"""The runner owns SIGTERM and SIGINT from its first moment to its last: one that arrives the instant Kopf puts its
own handlers in place is still ours, and the process ends as a stop ends it (status 0), not as a Kopf that
stopped on its own (status 1)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import kopf
import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.operator.app import OperatorApp
from binding_scheduler.operator.options import LaunchOptions
from binding_scheduler.operator.runner import run_operator


def test_sigterm_as_kopf_takes_signal_handlers_is_clean_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    spawn = kopf.spawn_tasks

    async def spawn_then_terminated(**kwargs: Any) -> Any:
        tasks = await spawn(**kwargs)  # Kopf's handlers are in place now
        os.kill(os.getpid(), signal.SIGTERM)
        return tasks

    monkeypatch.setattr(kopf, "spawn_tasks", spawn_then_terminated)
    with DevCluster.in_thread() as api:
        app = OperatorApp(LaunchOptions(kubeconfig=str(api.kubeconfig_path), identity="first-moment"))
        code = asyncio.run(asyncio.wait_for(run_operator(app), timeout=60))
    assert code == 0
