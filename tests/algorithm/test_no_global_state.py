"""The pure layers hold no mutable state at module level: what is memoised lives on a snapshot (or whatever owns
it), so two schedulers, two tests or two snapshots in one process can never see each other's caches."""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import types
from collections.abc import Iterator
from typing import Any

import pytest

import binding_scheduler.algorithm
import binding_scheduler.model

MUTABLE = (dict, list, set, bytearray, itertools.count)


def modules() -> Iterator[types.ModuleType]:
    for package in (binding_scheduler.model, binding_scheduler.algorithm):
        yield package
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            yield importlib.import_module(info.name)


def mutable(value: Any) -> bool:
    if isinstance(value, types.ModuleType | type | types.FunctionType | types.BuiltinFunctionType):
        return hasattr(value, "cache_info")  # functools caches
    if hasattr(value, "cache_info") or hasattr(value, "cache_clear"):
        return True
    if isinstance(value, MUTABLE):
        return not isinstance(value, frozenset) and type(value).__name__ != "FrozenMap"
    return hasattr(value, "__dict__") and not callable(value) and type(value).__module__.startswith("binding_scheduler")


@pytest.mark.parametrize("module", list(modules()), ids=lambda m: m.__name__)
def test_module_holds_no_mutable_state(module: types.ModuleType) -> None:
    found = [
        f"{name}: {type(value).__name__}"
        for name, value in vars(module).items()
        if not name.startswith("__") and getattr(value, "__module__", module.__name__) in (module.__name__, None)
        and mutable(value)
    ]
    assert found == []


def test_check_sees_module_level_cache() -> None:
    fake = types.ModuleType("binding_scheduler.algorithm.fake")
    fake.memo = {}  # type: ignore[attr-defined]
    assert mutable(fake.memo)  # type: ignore[attr-defined]
    import functools

    @functools.lru_cache
    def cached(x: int) -> int:
        return x

    assert mutable(cached)
