"""Decision processes (`decisionProcesses`): a decision made in another process is the decision this process makes,
assumptions and cluster changes included; what cannot run there is decided here; a cancelled pass drops its answer;
a process that exits leaves its decision to this process; shutdown stops every process."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest

from binding_scheduler.algorithm.plugins import CycleState
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.algorithm.walk import Decision
from binding_scheduler.model import Binding, TargetCluster, parse_binding, parse_cluster
from binding_scheduler.scheduling.decisions.pool import DecisionPool, remote_setup
from binding_scheduler.scheduling.framework.cpu import OverCpuLimit
from binding_scheduler.scheduling.framework.hooks import ExtensionPoint, FrameworkHook
from binding_scheduler.scheduling.framework.runner import Framework
from binding_scheduler.scheduling.observability.labels import PluginResult
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from testsupport import builders
from testsupport.builders import AGGREGATED, DUPLICATED, DYNAMIC_WEIGHT, placement

REGION_SPREAD = [{"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
                 {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 4}]


def fleet(count: int = 12, *, cpu: str = "8") -> list[dict[str, Any]]:
    return [builders.cluster(f"m{i}", region=f"r{i % 3}", provider="aws", zones=(f"z{i % 2}",),
                             labels={"tier": "gold" if i % 2 else "silver"},
                             taints=[{"key": "dedicated", "effect": "NoSchedule"}] if i == 5 else (),
                             allocatable={"pods": "110", "cpu": cpu, "memory": "32Gi"},
                             allocated={"pods": str(i), "cpu": "1"}) for i in range(count)]


def snapshot_of(bodies: list[dict[str, Any]]) -> Snapshot:
    return Snapshot(parse_cluster(b) for b in bodies)


def bindings() -> list[Binding]:
    def rb(name: str, replicas: int, scheduling: dict[str, Any] | None, **extra: Any) -> Binding:
        return parse_binding(builders.binding(name, namespace="shop", uid=f"uid-{name}", replicas=replicas,
                                              requests={"cpu": "500m"},
                                              placement=placement(scheduling=scheduling, **extra)))

    return [
        rb("dup", 2, DUPLICATED),
        rb("dynamic", 17, DYNAMIC_WEIGHT),
        rb("aggregated", 9, AGGREGATED, affinity={"labelSelector": {"matchLabels": {"tier": "gold"}}}),
        rb("spread", 12, DYNAMIC_WEIGHT, spread=REGION_SPREAD),
        rb("nowhere", 3, DUPLICATED, affinity={"clusterNames": ["absent"]}),
        rb("too-big", 400, AGGREGATED, spread=[{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]),
        parse_binding(builders.binding("moved", namespace="shop", uid="uid-moved", replicas=6,
                                       requests={"cpu": "1"}, clusters={"m1": 3, "m2": 3},
                                       placement=placement(scheduling=DYNAMIC_WEIGHT))),
    ]


def outcome(decision: Decision) -> tuple[Any, ...]:
    """A decision as comparable values (errors compare by identity)."""
    error = decision.error
    return (decision.clusters, decision.affinity_name, decision.warnings, decision.term_index,
            None if error is None else (type(error), str(error), vars(error)))


class Timings(FrameworkHook):
    timings_only = True

    def __init__(self) -> None:
        self.steps: list[tuple[ExtensionPoint, PluginResult]] = []

    def step(self, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        self.steps.append((point, result))


def framework(assumptions: AssumptionCache | None = None, hooks: tuple[FrameworkHook, ...] = (),
              options: ScheduleOptions | None = None) -> Framework:
    return Framework(build_plugins(), assumptions=assumptions, hooks=hooks, options=options or ScheduleOptions())


@pytest.fixture
async def pool() -> AsyncIterator[DecisionPool]:
    started = DecisionPool(1)
    await started.start()
    try:
        yield started
    finally:
        await started.close()


def assumed_cache() -> AssumptionCache:
    cache = AssumptionCache()
    other = parse_binding(builders.binding("other", namespace="shop", replicas=10, requests={"cpu": "1"}))
    cache.assume(other, [TargetCluster(f"m{i}", 6 if i < 4 else 2) for i in range(10)], multi_template=False)
    moved = bindings()[-1]
    cache.assume(moved, [TargetCluster("m1", 3), TargetCluster("m2", 3)], multi_template=False)
    return cache


async def test_decision_made_in_decision_process_is_decision_made_here(pool: DecisionPool) -> None:
    snapshot = snapshot_of(fleet())
    here = framework(assumed_cache())
    for binding in bindings():
        expected = await here.decide(binding, snapshot, CycleState())
        assert outcome(await pool.decide(here, binding, snapshot, CycleState())) == outcome(expected), binding.key
    assert (pool.remote, pool.local) == (len(bindings()), 0)


async def test_versions_of_remote_decision_are_read_when_it_is_sent(pool: DecisionPool) -> None:
    cache = assumed_cache()
    here = framework(cache)
    snapshot = snapshot_of(fleet())
    state = CycleState()
    await pool.decide(here, bindings()[1], snapshot, state)
    assert cache.unchanged(state.versions, ["m0", "m3"])
    other = parse_binding(builders.binding("late", namespace="shop", replicas=1, requests={"cpu": "1"}))
    cache.assume(other, [TargetCluster("m3", 1)], multi_template=False)
    assert not cache.unchanged(state.versions, ["m0", "m3"])


async def test_cluster_changes_reach_process_before_next_decision(pool: DecisionPool) -> None:
    here = framework()
    bodies = fleet()
    binding = bindings()[1]
    first = snapshot_of(bodies)
    assert outcome(await pool.decide(here, binding, first, CycleState())) == outcome(
        await here.decide(binding, first, CycleState()))
    changed = [b for b in bodies if b["metadata"]["name"] != "m3"]
    changed[0] = builders.cluster("m0", region="r0", allocatable={"pods": "110", "cpu": "64"})
    changed.append(builders.cluster("new", region="r9", allocatable={"pods": "110", "cpu": "32"}))
    second = snapshot_of(changed)
    remote = await pool.decide(here, binding, second, CycleState())
    assert outcome(remote) == outcome(await here.decide(binding, second, CycleState()))
    assert {t.name for t in remote.clusters or ()} >= {"m0", "new"}
    assert "m3" not in {t.name for t in remote.clusters or ()}


async def test_steps_timed_in_process_reach_this_process_hooks(pool: DecisionPool) -> None:
    timings = Timings()
    here = framework(hooks=(timings,))
    await pool.decide(here, bindings()[4], snapshot_of(fleet()), CycleState())
    assert timings.steps[0] == (ExtensionPoint.FILTER, PluginResult.UNSCHEDULABLE)
    assert pool.remote == 1


async def test_estimator_or_wide_hook_decides_here(
    pool: DecisionPool,
) -> None:
    class Reads(FrameworkHook):
        pass

    assert remote_setup(framework(hooks=(Reads(),))) is None
    snapshot = snapshot_of(fleet())
    here = framework(hooks=(Reads(),))
    assert outcome(await pool.decide(here, bindings()[0], snapshot, CycleState())) == outcome(
        await here.decide(bindings()[0], snapshot, CycleState()))
    assert (pool.remote, pool.local) == (0, 1)


async def test_cancelled_decision_drops_answer_and_process_goes_on(pool: DecisionPool) -> None:
    here = framework()
    snapshot = snapshot_of(fleet(400))
    task = asyncio.ensure_future(pool.decide(here, bindings()[3], snapshot, CycleState()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    binding = bindings()[0]
    assert outcome(await pool.decide(here, binding, snapshot, CycleState())) == outcome(
        await here.decide(binding, snapshot, CycleState()))
    assert all(not p.outstanding for p in pool._processes)


async def test_process_decision_over_cpu_limit_raises(pool: DecisionPool) -> None:
    wide = [builders.cluster(f"wide-{i:02d}", region=f"wide-region-{i:02d}") for i in range(26)]
    exponential = parse_binding(builders.binding("search", replicas=26, placement=placement(
        spread=[{"spreadByField": "region", "minGroups": 1, "maxGroups": 26},
                {"spreadByField": "cluster", "minGroups": 13, "maxGroups": 26}],
        scheduling=AGGREGATED)))  # Karmada's region search over 26 one-cluster regions: seconds of CPU
    here = framework(options=ScheduleOptions(cpu_limit=0.01))
    with pytest.raises(OverCpuLimit, match=r"more than 0.01s of CPU \(decisionCPULimit 0.01s\)"):
        await pool.decide(here, exponential, snapshot_of(wide), CycleState())
    assert pool.remote == 1


async def test_dead_process_leaves_decision_here(pool: DecisionPool) -> None:
    here = framework()
    snapshot = snapshot_of(fleet())
    binding = bindings()[1]
    process = pool._processes[0].process
    assert process.pid is not None
    os.kill(process.pid, signal.SIGSTOP)
    task = asyncio.ensure_future(pool.decide(here, binding, snapshot, CycleState()))
    await asyncio.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    assert outcome(await asyncio.wait_for(task, 30)) == outcome(await here.decide(binding, snapshot, CycleState()))
    assert (pool.remote, pool.local) == (0, 1)


async def test_close_stops_processes_decides_here() -> None:
    started = DecisionPool(2)
    await started.start()
    processes = [p.process for p in started._processes]
    await started.close()
    assert [p.poll() for p in processes] == [0, 0]
    here = framework()
    snapshot = snapshot_of(fleet())
    await started.decide(here, bindings()[0], snapshot, CycleState())
    assert (started.remote, started.local) == (0, 1)


async def test_silent_process_stopped_decision_made_here(
    pool: DecisionPool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.decisions.pool.ANSWER_MARGIN", 0.2)
    here = framework(options=ScheduleOptions(cpu_limit=0.1))
    snapshot = snapshot_of(fleet())
    binding = bindings()[1]
    process = pool._processes[0].process
    os.kill(process.pid, signal.SIGSTOP)
    decided = await asyncio.wait_for(pool.decide(here, binding, snapshot, CycleState()), 30)
    assert outcome(decided) == outcome(await here.decide(binding, snapshot, CycleState()))
    assert process.wait(10) == -signal.SIGKILL
    assert (pool.remote, pool.local) == (0, 1)
