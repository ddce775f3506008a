"""How long each step and plugin of an attempt took, reported to whoever listens (the scheduler's metrics).

The algorithm only measures; it does not know where the numbers go. Steps and extension points carry
Karmada's names (Filter, Score, Select, AssignReplicas; results Success, Unschedulable, Error).
"""

from __future__ import annotations

from typing import Protocol


class Observer(Protocol):
    def step(self, step: str, seconds: float) -> None: ...

    def extension_point(self, extension_point: str, result: str, seconds: float) -> None: ...

    def plugin(self, plugin: str, extension_point: str, result: str, seconds: float) -> None: ...
