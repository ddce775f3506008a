"""Shared pieces of the shutdown tests: a plugin that holds passes where an estimator call would hold them (the
port of Karmada's mockAlgorithm), and estimator stubs served from their own thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from binding_scheduler.algorithm.plugins import AttemptContext, EstimatePlugin
from binding_scheduler.devcluster import DevCluster
from binding_scheduler.estimation.stub import EstimatorStub
from binding_scheduler.model import Cluster


class HeldPasses(EstimatePlugin):
    """An Estimate plugin: every pass enters, is counted, and waits until `release()`; a cancelled wait is
    recorded. Installed with `OperatorThread(..., plugins=[held])`."""

    name = "TestHeldPasses"

    def __init__(self) -> None:
        self.entered: list[str] = []
        self.cancelled: list[str] = []
        self._changed = threading.Condition()
        self._release: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        await self.hold(ctx.binding.key)
        return {}

    async def hold(self, key: str) -> None:
        if self._release is None:
            self._release, self._loop = asyncio.Event(), asyncio.get_running_loop()
        self._note(self.entered, key)
        try:
            await self._release.wait()
        except asyncio.CancelledError:
            self._note(self.cancelled, key)
            raise

    def _note(self, where: list[str], key: str) -> None:
        with self._changed:
            where.append(key)
            self._changed.notify_all()

    def wait_entered(self, count: int = 1, timeout: float = 20.0) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.entered) >= count, timeout), (
                f"{len(self.entered)} of {count} passes entered the algorithm"
            )

    def release(self) -> None:
        if self._loop is not None and self._release is not None:
            self._loop.call_soon_threadsafe(self._release.set)


@contextmanager
def stubs_in_thread(*stubs: EstimatorStub) -> Iterator[list[EstimatorStub]]:
    """Serve estimator stubs from their own event loop; yields them started (their `.address` is set)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True, name="estimator-stubs")
    thread.start()

    def run(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(10)

    try:
        for stub in stubs:
            run(stub.start())
        yield list(stubs)
    finally:
        for stub in stubs:
            run(stub.stop())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def writes_after(api: DevCluster, moment: float) -> list[str]:
    """Every write request that reached the emulator after `moment` (time.monotonic())."""
    return [f"{e.method} {e.path}" for e in api.journal.writes() if e.time > moment]


def binding_writes(api: DevCluster, name: str) -> list[str]:
    entries = api.journal.filter(method="PATCH", path=rf"/resourcebindings/{name}")
    return [f"{e.method} {e.path} {e.status}" for e in entries]


def lease_held_elsewhere(api: DevCluster) -> None:
    """Another instance holds the scheduler's Lease for an hour: anyone starting now stays on standby."""
    api.store.create(
        "leases",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "karmada-scheduler", "namespace": "karmada-system"},
            "spec": {
                "holderIdentity": "someone-else",
                "leaseDurationSeconds": 3600,
                "renewTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            },
        },
    )
