"""Decisions in other processes (`decisionProcesses`): the CPU of deciding spread over the machine's cores.

A decision is pure CPU over an immutable snapshot. The scheduler's process keeps everything else exactly as it
is: the queue, the passes, Reserve, the fenced writes, the Lease, the shutdown. A pass hands its binding to the
least busy decision process (`scheduling.decisions.process`) together with what other bindings' assumptions take
on the fleet, as the cache has them now (their versions noted now, so Reserve refuses the decision if a cluster
it places replicas on changed meanwhile, as for a decision made here), and awaits the answer. A process gets the
clusters that changed since its last decision before the next one; bindings of one snapshot cost it nothing more.

What stays in this process: a framework that asks accurate estimators, plans preemptions, reads workload groups,
or runs out-of-tree plugins or hooks that need more than the timings (those objects live here). A pass
cancelled while its decision is computed elsewhere drops the answer when it comes; nothing a decision process
does is ever written. If a process fails a decision or exits, that decision is made here instead (and the
process replaced), so nothing is lost.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from multiprocessing.connection import Connection

import numpy as np

from ...algorithm.general_estimator import AssumedLoad
from ...algorithm.general_estimator.columns import summary_columns
from ...algorithm.multi_template import multi_template_applicable
from ...algorithm.plugins import CycleState
from ...algorithm.registry import in_tree_plugins
from ...algorithm.schedule import needs_estimates
from ...algorithm.snapshot import Snapshot
from ...algorithm.walk import Decision
from ...model import Binding, Cluster
from ..framework.cpu import OverCpuLimit
from ..framework.runner import Framework
from .process import (
    Abandoned,
    Decide,
    Decided,
    Failed,
    Fleet,
    Ready,
    SentAssumptions,
    Setup,
    Stop,
    replay,
)

logger = logging.getLogger(__name__)

PROCESS_MODULE = "binding_scheduler.scheduling.decisions.process"
"""What a decision process runs (`python -m`): its own entry, never the scheduler's main module again."""
START_TIMEOUT = 60.0
"""Seconds a new decision process may take to start (imports included) before it is given up."""
STOP_TIMEOUT = 2.0
"""Seconds a decision process gets to exit at shutdown before it is killed."""
ANSWER_MARGIN = 10.0
"""Seconds past `decisionCPULimit` a decision process may take to answer before it is taken for stuck."""
RESTART_PAUSE = 5.0
"""Seconds between two replacements of a decision process that exited."""


class _Lost:
    """The answer of a decision whose process exited before answering."""


LOST = _Lost()
Answer = Decided | Abandoned | Failed | _Lost


class _Process:
    """One decision process: its pipe, a thread sending (pickling off the event loop's turn), a thread receiving,
    its outstanding requests, and what it was last sent."""

    def __init__(self, index: int, loop: asyncio.AbstractEventLoop) -> None:
        self.index = index
        self.loop = loop
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-m", PROCESS_MODULE, str(theirs.fileno()), *map(str, gc.get_threshold())]
        self.process = subprocess.Popen(command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        theirs.close()
        self.connection = Connection(ours.detach())
        self.ready = asyncio.Event()
        self.alive = True
        self.outstanding: dict[int, asyncio.Future[Answer]] = {}
        self.setup: Setup | None = None
        self.snapshot: Snapshot | None = None
        self.clusters: Mapping[str, Cluster] = {}
        self._outbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        threading.Thread(target=self._send_all, name=f"decisions-{index}-send", daemon=True).start()
        threading.Thread(target=self._receive_all, name=f"decisions-{index}-receive", daemon=True).start()

    def send(self, message: object) -> None:
        self._outbox.put(message)

    def sync(self, snapshot: Snapshot, setup: Setup) -> None:
        """Send what the process lacks to decide over `snapshot` with `setup`."""
        if self.setup != setup:
            self.send(setup)
            self.setup = setup
        if self.snapshot is snapshot:
            return
        known = self.clusters
        changed = tuple(c for c in snapshot.clusters if known.get(c.name) is not c)
        self.send(Fleet(snapshot.columns.names, changed))
        self.snapshot, self.clusters = snapshot, snapshot.by_name

    def _send_all(self) -> None:
        while True:
            message = self._outbox.get()
            if message is None:
                return
            try:
                self.connection.send(message)
            except Exception:  # gone, or a message that does not pickle: the process's view is lost either way
                logger.exception("decision process %d: sending failed: stopping it", self.index)
                self.process.kill()  # the receiving thread sees the pipe close and reports the process lost
                return

    def _receive_all(self) -> None:
        while True:
            try:
                message = self.connection.recv()
            except Exception as error:  # closed, or an answer that does not unpickle
                if not isinstance(error, EOFError | OSError):
                    logger.error("decision process %d: unreadable answer (%s): stopping it", self.index, error)
                    self.process.kill()
                self.loop.call_soon_threadsafe(self._exited)
                return
            self.loop.call_soon_threadsafe(self._answered, message)

    def _answered(self, message: object) -> None:
        if isinstance(message, Ready):
            self.ready.set()
            return
        if isinstance(message, Decided | Abandoned | Failed):
            future = self.outstanding.pop(message.request, None)
            if future is not None and not future.done():
                future.set_result(message)

    def _exited(self) -> None:
        self.alive = False
        for future in self.outstanding.values():
            if not future.done():
                future.set_result(LOST)
        self.outstanding.clear()

    def stop_sending(self) -> None:
        self._outbox.put(None)

    def join(self, timeout: float) -> int:
        """Stop the process (asked, then terminated, then killed): its exit code."""
        for stop in (None, self.process.terminate, self.process.kill):
            if stop is not None:
                stop()
            try:
                code = self.process.wait(timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            code = self.process.wait()
        self.connection.close()
        return code


def remote_setup(framework: Framework) -> Setup | None:
    """The setup a decision process needs to decide as `framework` does, or None when it cannot (see the
    module)."""
    if framework.estimator is not None or framework.preemptor is not None or framework.workload_groups is not None:
        return None
    if not all(hook.timings_only for hook in framework.hooks):
        return None
    names = framework.plugins.names
    if not set(names) <= {plugin.name for plugin in in_tree_plugins()}:
        return None
    return Setup(names, framework.options)


class DecisionPool:
    """`processes` decision processes, started by `start` and stopped by `close`."""

    def __init__(self, processes: int) -> None:
        self.size = processes
        self._processes: list[_Process] = []
        self._requests = itertools.count()
        self._setup_of: tuple[Framework, Setup | None] | None = None
        """The framework in force and its setup (one framework is in force at a time)."""
        self._closed = False
        self._restarted_at = 0.0
        self.remote = 0
        """Decisions made in a decision process."""
        self.local = 0
        """Decisions the pool made here (no process ready, one failed or exited, a framework it cannot run)."""

    async def start(self) -> None:
        """Start every process and wait until each is ready (or `START_TIMEOUT` passed)."""
        loop = asyncio.get_running_loop()
        self._processes = [_Process(i, loop) for i in range(self.size)]
        await self._wait_ready(self._processes)

    async def _wait_ready(self, processes: list[_Process]) -> None:
        waits = [asyncio.ensure_future(p.ready.wait()) for p in processes]
        _, pending = await asyncio.wait(waits, timeout=START_TIMEOUT)
        for wait in pending:
            wait.cancel()
        ready = sum(p.ready.is_set() for p in processes)
        logger.info("decision processes: %d of %d ready", ready, len(processes))

    async def decide(self, framework: Framework, binding: Binding, snapshot: Snapshot, state: CycleState) -> Decision:
        """`framework.decide(binding, snapshot, state)`, in a decision process when one is ready and the framework
        can run there."""
        setup = self._setup(framework)
        target = self._choose() if setup is not None else None
        if target is None or setup is None:
            self.local += 1
            return await framework.decide(binding, snapshot, state)
        target.sync(snapshot, setup)
        request = next(self._requests)
        assumed = _sent_assumptions(framework, binding, snapshot, state)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        target.outstanding[request] = future
        target.send(Decide(request, binding, assumed))
        try:
            async with asyncio.timeout(framework.options.cpu_limit + ANSWER_MARGIN):
                answer = await future
        except TimeoutError:
            logger.error("decision process %d gave no answer for %s within decisionCPULimit + %gs: stopping it",
                         target.index, binding.key, ANSWER_MARGIN)
            target.process.kill()  # its other requests are answered LOST when its pipe closes
            answer = LOST
        finally:
            target.outstanding.pop(request, None)  # cancelled: the answer is dropped when it comes
        if isinstance(answer, Decided):
            self.remote += 1
            replay(answer.timings, framework.hooks)
            return answer.decision_over(snapshot.columns.names)
        if isinstance(answer, Abandoned):
            self.remote += 1
            raise OverCpuLimit(answer.limit)
        if isinstance(answer, Failed):
            logger.error("decision process %d failed the decision for %s (deciding it here):\n%s", target.index,
                         binding.key, answer.text)
        else:
            logger.warning("decision process %d exited (code %s) while deciding %s: deciding it here",
                           target.index, target.process.poll(), binding.key)
        self.local += 1
        return await framework.decide(binding, snapshot, state)  # its estimate reads the versions again

    def _setup(self, framework: Framework) -> Setup | None:
        known = self._setup_of
        if known is None or known[0] is not framework:
            known = self._setup_of = (framework, remote_setup(framework))
        return known[1]

    def _choose(self) -> _Process | None:
        """The ready process with the fewest outstanding decisions; a process that exited is replaced."""
        if self._closed:
            return None
        self._replace_exited()
        ready = [p for p in self._processes if p.alive and p.ready.is_set()]
        return min(ready, key=lambda p: len(p.outstanding)) if ready else None

    def _replace_exited(self) -> None:
        exited = [p for p in self._processes if not p.alive]
        now = time.monotonic()
        if not exited or now - self._restarted_at < RESTART_PAUSE:
            return
        self._restarted_at = now
        loop = asyncio.get_running_loop()
        for old in exited:
            logger.warning("decision process %d exited (code %s): starting another", old.index, old.process.poll())
            old.stop_sending()
            old.connection.close()
            try:
                self._processes[self._processes.index(old)] = _Process(old.index, loop)
            except OSError as error:  # no process to start now: decided here, tried again after the pause
                logger.error("decision process %d could not be started again: %s", old.index, error)

    async def close(self) -> None:
        """Stop every process (bounded: `STOP_TIMEOUT` each, then killed). Decisions still awaited get no answer
        from them (their passes were cancelled or drained before)."""
        self._closed = True
        for process in self._processes:
            process.send(Stop())
            process.stop_sending()
        codes = await asyncio.gather(*(asyncio.to_thread(p.join, STOP_TIMEOUT) for p in self._processes))
        for process in self._processes:
            process._exited()
        logger.info("decision processes stopped (exit codes %s); decisions made there: %d, here: %d",
                    ", ".join(str(c) for c in codes) or "none", self.remote, self.local)


def _sent_assumptions(framework: Framework, binding: Binding, snapshot: Snapshot,
                      state: CycleState) -> SentAssumptions | None:
    """What other bindings' assumptions take over the whole fleet, for a decision made elsewhere; the versions
    read now go into `state` for Reserve."""
    cache = framework.assumptions
    if cache is None or not needs_estimates(binding):
        return None
    fleet = snapshot.columns
    every = snapshot.memo(("every-index", None), lambda: np.arange(len(fleet), dtype=np.intp))
    reading = cache.at(binding, fleet, every, workloads=framework.listed_workloads(snapshot))
    state.assumed, state.versions = reading.loads, reading.versions
    columns = reading.columns
    multi = multi_template_applicable(binding, framework.options.multiple_pod_templates)
    requirements = binding.replica_requirements
    resources: list[str] = [] if multi or requirements is None else [
        name for name, _ in snapshot.estimator.request(requirements).summary_request]
    summary = summary_columns(snapshot)
    one_by_one = columns.held & summary.has_summary
    if not multi:
        one_by_one &= summary.modelled
    loads: dict[str, AssumedLoad] = {}
    for index in np.flatnonzero(one_by_one).tolist():
        name = fleet.names[index]
        load = columns.load(name)
        if load is not None:
            loads[name] = load
    return SentAssumptions(columns.held, columns.pods, {r: columns.deducted(r) for r in resources}, loads)
