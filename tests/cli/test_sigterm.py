"""A SIGTERM before a command has its own handling ends the process with status 143, not by the default
action (which a container's PID 1 does not have: the signal would be ignored)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from binding_scheduler.cli import main as cli

PROGRAM = """
import os, signal, time
from binding_scheduler.cli.main import take_sigterm_at_once
take_sigterm_at_once()
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(30)
"""


def test_early_sigterm_ends_process_with_status_143() -> None:
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 143, result.stderr


def test_sigterm_taken_before_parsing_or_imports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    order: list[str] = []
    monkeypatch.setattr(cli, "take_sigterm_at_once", lambda: order.append("sigterm"))
    monkeypatch.setattr(cli, "build_parser", lambda: order.append("parser") or cli.argparse.ArgumentParser())
    monkeypatch.setattr(sys, "argv", ["binding-scheduler", "--help"])
    with pytest.raises(SystemExit):
        cli.main()
    assert order == ["sigterm", "parser"]


def test_embedded_call_keeps_callers_signals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    called: list[str] = []
    monkeypatch.setattr(cli, "take_sigterm_at_once", lambda: called.append("sigterm"))
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert called == []
