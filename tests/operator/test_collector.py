"""The scheduler process's cyclic garbage collector: passes' short-lived objects are collected young, so full
collections (which walk every stored binding) stay rare."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any

import pytest

from binding_scheduler.operator import runner
from binding_scheduler.operator.options import LaunchOptions


def test_young_generation_is_fifty_thousand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[int, int, int]] = []

    def fake_run(main: Coroutine[Any, Any, int]) -> int:
        seen.append(gc.get_threshold())
        main.close()
        return 0

    before = gc.get_threshold()
    monkeypatch.setattr(asyncio, "run", fake_run)
    try:
        assert runner.main(LaunchOptions()) == 0
    finally:
        gc.set_threshold(*before)
    assert seen == [(50_000, 20, 10)]
