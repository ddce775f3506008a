"""Bodies, paths and fake time for the kube layer tests."""

from __future__ import annotations

import asyncio
from typing import Any

from binding_scheduler.kube import resource_path

RB_GROUP, RB_VERSION = "work.karmada.io", "v1alpha2"
EPOCH = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def rb_path(name: str | None = None, namespace: str = "default", sub: str | None = None) -> str:
    return resource_path(RB_GROUP, RB_VERSION, "resourcebindings", namespace, name, sub)


def rb_body(name: str = "rb1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{RB_GROUP}/{RB_VERSION}",
        "kind": "ResourceBinding",
        "metadata": {"name": name},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, **spec},
    }


class FakeTime:
    """A wall clock that moves only when someone sleeps (or `advance` is called)."""

    def __init__(self, now: float = EPOCH) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)
