"""A start that fails says why in one line and the process leaves at once: the runner does not wait for Kopf's
own wind-down (seconds) once our start has failed, and a failure after the servers started says its cause
before the shutdown reports."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from binding_scheduler.operator.runner import _until_kopf_ends
from tests.cli.test_errors import cli
from tests.operator.harness import config_spec, write_config


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


def test_a_port_in_use_says_its_cause_before_the_shutdown_report(tmp_path: Path) -> None:
    import socket

    from binding_scheduler.devcluster import DevCluster

    with socket.socket() as taken, DevCluster.in_thread() as api:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_config(tmp_path / "config.yaml", config_spec(metrics={"port": 0, "healthPort": port,
                                                                             "healthHost": "127.0.0.1"}))
        result = cli("run", "--kubeconfig", str(api.kubeconfig_path), "--config-file", str(config))
    lines = result.stderr.splitlines()
    cause = next(i for i, line in enumerate(lines) if "cannot start:" in line)
    reports = [i for i, line in enumerate(lines) if "shutdown complete" in line]
    assert result.returncode == 1
    assert reports and all(cause < i for i in reports), result.stderr
