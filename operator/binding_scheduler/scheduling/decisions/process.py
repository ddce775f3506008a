"""A decision process: the scheduler's decisions for bindings, computed in another process (`decisionProcesses`).

It holds a copy of the fleet (the scheduler sends the clusters that changed, and the fleet's order, before the
first decision that needs them) and runs the same framework over it with the in-tree plugins the scheduler
enabled. Each request carries the binding and what other bindings' assumptions take, as the scheduler's cache
had them when it sent the request; the answer is the decision and the timings of each extension point and
plugin (the scheduler's metrics replay them). It writes nothing, holds no Lease and talks only to the scheduler
over its pipe; it exits when the pipe closes or on `Stop`.

The messages (pickled over a `multiprocessing` connection) are the dataclasses below.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import signal
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from itertools import repeat
from multiprocessing.connection import Connection
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from ...algorithm.fleet import FleetColumns, Indices, Mask
from ...algorithm.general_estimator import AssumedLoad, EstimatorCache
from ...algorithm.general_estimator.columns import AssumedAt, Column
from ...algorithm.plugins import CycleState
from ...algorithm.registry import build_plugins
from ...algorithm.schedule import ScheduleOptions
from ...algorithm.snapshot import Snapshot
from ...algorithm.walk import Decision
from ...model import Binding, Cluster, TargetCluster
from ..framework.cpu import OverCpuLimit, compute_here
from ..framework.hooks import ExtensionPoint, FrameworkHook
from ..framework.runner import Framework
from ..observability.labels import PluginResult


@dataclass(frozen=True, slots=True)
class Setup:
    """The framework to run: the in-tree plugins by name (the scheduler's enabled set) and the options."""

    plugins: tuple[str, ...]
    options: ScheduleOptions


@dataclass(frozen=True, slots=True)
class Fleet:
    """The fleet from now on: every cluster's name in the snapshot's order, and the clusters that changed (or
    are new) since the last `Fleet`."""

    names: tuple[str, ...]
    changed: tuple[Cluster, ...]


@dataclass(frozen=True, slots=True)
class SentAssumptions:
    """Other bindings' assumptions as the scheduler's cache had them, over the whole fleet (its order): where any
    is held, their pods, each requested resource's amount, and the loads of the clusters the estimates read one
    by one."""

    held: Mask
    pods: Column
    deducted: Mapping[str, Column]
    loads: Mapping[str, AssumedLoad]


@dataclass(frozen=True, slots=True)
class Decide:
    request: int
    binding: Binding
    assumed: SentAssumptions | None


@dataclass(frozen=True, slots=True)
class Stop:
    pass


@dataclass(frozen=True, slots=True)
class Ready:
    pass


Timing = tuple[str, str, str, str, float]
"""("step" | "plugin", extension point, plugin name or "", result, seconds)."""


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision, its clusters as fleet indices and replicas when none has components (thousands of
    `TargetCluster`s cost more to pickle than to decide), and the timings."""

    request: int
    decision: Decision
    timings: tuple[Timing, ...]
    indices: npt.NDArray[np.int32] | None = None
    replicas: npt.NDArray[np.int64] | None = None

    @classmethod
    def of(cls, request: int, decision: Decision, timings: tuple[Timing, ...], fleet: FleetColumns) -> Decided:
        clusters = decision.clusters
        if not clusters or any(t.components for t in clusters):
            return cls(request, decision, timings)
        index = fleet.index
        indices = np.array([index[t[0]] for t in clusters], dtype=np.int32)
        replicas = np.array([t[1] for t in clusters], dtype=np.int64)
        return cls(request, replace(decision, clusters=()), timings, indices, replicas)

    def decision_over(self, names: tuple[str, ...]) -> Decision:
        """The decision, its clusters named from the fleet it was decided over (in the snapshot's order)."""
        if self.indices is None or self.replicas is None:
            return self.decision
        at = self.indices.tolist()
        picked = itemgetter(*at)(names) if len(at) > 1 else (names[at[0]],)
        clusters = tuple(map(tuple.__new__, repeat(TargetCluster), zip(picked, self.replicas.tolist(), repeat(()))))
        return replace(self.decision, clusters=clusters)


@dataclass(frozen=True, slots=True)
class Abandoned:
    """The decision went over `decisionCPULimit`."""

    request: int
    limit: float


@dataclass(frozen=True, slots=True)
class Failed:
    """The decision raised what no decision should: the traceback, for the scheduler's log."""

    request: int
    text: str


class TimingRecorder(FrameworkHook):
    """Keeps what a `timings_only` hook would be told, to send back."""

    timings_only = True

    def __init__(self) -> None:
        self.timings: list[Timing] = []

    def step(self, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        self.timings.append(("step", point.value, "", result.value, seconds))

    def plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        self.timings.append(("plugin", point.value, plugin, result.value, seconds))


def replay(timings: tuple[Timing, ...], hooks: tuple[FrameworkHook, ...]) -> None:
    """Tell `hooks` the timings a decision process recorded."""
    for kind, point, plugin, result, seconds in timings:
        for hook in hooks:
            if kind == "step":
                hook.step(ExtensionPoint(point), PluginResult(result), seconds)
            else:
                hook.plugin(plugin, ExtensionPoint(point), PluginResult(result), seconds)


@dataclass(frozen=True, slots=True)
class _Reading:
    columns: AssumedAt
    loads: Mapping[str, AssumedLoad]
    versions: Mapping[str, int] = field(default_factory=dict)
    """Not known here: the scheduler noted the versions when it sent the request."""


class SentReader:
    """The `AssumptionReader` of one request: the sent columns at the decision's candidates."""

    def __init__(self, sent: SentAssumptions) -> None:
        self.sent = sent

    def at(self, binding: Binding, fleet: FleetColumns, indices: Indices, *,
           workloads: Callable[[str], bool] | bool) -> _Reading:
        sent = self.sent

        def deducted(resource: str) -> Column:
            return sent.deducted[resource][indices]

        columns = AssumedAt(sent.held[indices], sent.pods[indices], deducted, sent.loads.get)
        return _Reading(columns, sent.loads)


class DecisionState:
    """What a decision process holds: its copy of the fleet, the snapshot over it, the framework."""

    def __init__(self) -> None:
        self.clusters: dict[str, Cluster] = {}
        self.names: tuple[str, ...] = ()
        self.estimator = EstimatorCache()
        self.snapshot: Snapshot | None = None
        self.recorder = TimingRecorder()
        self._framework: Framework | None = None

    def set_up(self, setup: Setup) -> None:
        self._framework = Framework(build_plugins(list(setup.plugins)), options=setup.options,
                                    hooks=(self.recorder,), computes=compute_here)

    def apply(self, fleet: Fleet) -> None:
        for cluster in fleet.changed:
            self.clusters[cluster.name] = cluster
            self.estimator.forget(cluster.name)
        kept = set(fleet.names)
        for name in [n for n in self.clusters if n not in kept]:
            del self.clusters[name]
            self.estimator.forget(name)
        self.names = fleet.names
        self.snapshot = None

    def current(self) -> Snapshot:
        if self.snapshot is None:
            self.snapshot = Snapshot((self.clusters[name] for name in self.names), self.estimator)
        return self.snapshot

    async def decide(self, request: Decide) -> Decided | Abandoned | Failed:
        framework = self._framework
        if framework is None:
            return Failed(request.request, "the decision process was asked to decide before it was set up")
        framework.assumed = None if request.assumed is None else SentReader(request.assumed)
        self.recorder.timings = []
        try:
            decision = await framework.decide(request.binding, self.current(), CycleState())
        except OverCpuLimit as error:
            return Abandoned(request.request, error.limit)
        except Exception:  # sent back: the scheduler logs it and decides in its own process
            return Failed(request.request, traceback.format_exc())
        return Decided.of(request.request, decision, tuple(self.recorder.timings), self.current().columns)


def serve(connection: Connection, gc_thresholds: tuple[int, ...] = ()) -> None:
    """A decision process's main: answer requests until `Stop` or the pipe closes, with the scheduler's garbage
    collector thresholds (a decision's thousands of short-lived objects make CPython's defaults collect the
    old generation often). Ctrl-C reaches the whole process group: the scheduler decides when this process stops,
    so it ignores SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if gc_thresholds:
        gc.set_threshold(*gc_thresholds)
    state = DecisionState()
    loop = asyncio.new_event_loop()
    connection.send(Ready())
    try:
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):
                return
            if isinstance(message, Stop):
                return
            if isinstance(message, Setup):
                state.set_up(message)
            elif isinstance(message, Fleet):
                state.apply(message)
            elif isinstance(message, Decide):
                connection.send(loop.run_until_complete(state.decide(message)))
    finally:
        loop.close()
        connection.close()


def main(argv: list[str]) -> None:
    """`python -m binding_scheduler.scheduling.decisions.process FD [GC THRESHOLDS...]`: serve the connection on
    the inherited socket FD."""
    serve(Connection(int(argv[0])), tuple(int(t) for t in argv[1:]))


if __name__ == "__main__":
    # Run from the module under its package name, so what it pickles names its classes as the scheduler knows
    # them (as `__main__`, they would not unpickle there).
    importlib.import_module("binding_scheduler.scheduling.decisions.process").main(sys.argv[1:])
