"""Decisions per second with decision processes (`decisionProcesses`), by fleet size and process count.

    .venv/bin/python -m benchmarks.decision_processes [--sizes 1000] [--processes 0,1,2] [--in-flight 8]
        [--seconds 5] [--assumptions]

The decisions of `benchmarks/algorithm.py` (its fleet and its three strategies, the bindings mixed), made as the
operator makes them: `in-flight` passes at once, each awaiting `PassSettings.decide`, over one snapshot; with 0
processes every decision is made in this process (the product's default), with N the pool sends each to the least
busy of N processes. `--assumptions`: overcommit protection on (as with workers > 1), each decided binding's
footprint assumed afterwards, so every request carries the others' assumptions. The process CPU of this process
and of the decision processes is reported beside the rate.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import resource
import time

from benchmarks.algorithm import PLACEMENTS, bindings, fleet
from benchmarks.e2e import proc_cpu
from binding_scheduler.algorithm.plugins import CycleState
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import Binding
from binding_scheduler.operator.runner import GC_THRESHOLDS
from binding_scheduler.scheduling.decisions.pool import DecisionPool
from binding_scheduler.scheduling.passes.context import PassSettings
from binding_scheduler.scheduling.state.assumptions import AssumptionCache


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_cpu(decisions: DecisionPool | None) -> float:
    if decisions is None:
        return 0.0
    return sum(proc_cpu(p.process.pid) for p in decisions._processes if p.process.pid is not None)


async def measure(snapshot: Snapshot, pool: list[Binding], processes: int, in_flight: int, seconds: float,
                  assumptions: bool) -> tuple[float, float, float]:
    """Decisions/s, and CPU seconds per decision here and in the decision processes."""
    decisions = DecisionPool(processes) if processes else None
    if decisions is not None:
        await decisions.start()
    cache = AssumptionCache() if assumptions else None
    settings = PassSettings(scheduler_name="bench", plugins=build_plugins(), assumptions=cache, decisions=decisions)
    done = 0
    stop_at = 0.0

    async def passes(offset: int) -> None:
        nonlocal done
        index = offset
        while time.perf_counter() < stop_at:
            binding = pool[index % len(pool)]
            state = CycleState()
            decision = await settings.decide(binding, snapshot, state)
            if cache is not None and decision.clusters:
                cache.assume(binding, decision.clusters, multi_template=False)
            done += 1
            index += in_flight

    try:
        stop_at = time.perf_counter() + 1.0
        await asyncio.gather(*(passes(i) for i in range(in_flight)))  # warm: every process has the fleet
        done = 0
        here, there = cpu_seconds(), children_cpu(decisions)
        started = time.perf_counter()
        stop_at = started + seconds
        await asyncio.gather(*(passes(i) for i in range(in_flight)))
        elapsed = time.perf_counter() - started
        used_here, used_there = cpu_seconds() - here, children_cpu(decisions) - there
    finally:
        if decisions is not None:
            await decisions.close()
    return done / elapsed, used_here / max(done, 1), used_there / max(done, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--processes", default="0,1,2")
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--assumptions", action="store_true")
    args = parser.parse_args()
    gc.set_threshold(*GC_THRESHOLDS)
    print(f"{'clusters':>8} {'processes':>9} {'decisions/s':>12} {'CPU ms/decision here':>21} "
          f"{'in the processes':>17}")
    for size in [int(s) for s in args.sizes.split(",")]:
        rng = random.Random(size)
        clusters = fleet(size, rng)
        snapshot = Snapshot(clusters)
        mixed = [b for strategy in PLACEMENTS for b in bindings(strategy, clusters, rng)]
        rng.shuffle(mixed)
        for processes in [int(p) for p in args.processes.split(",")]:
            rate, here, there = asyncio.run(measure(snapshot, mixed, processes, args.in_flight, args.seconds,
                                                    args.assumptions))
            print(f"{size:>8} {processes:>9} {rate:>12,.0f} {here * 1e3:>21.2f} {there * 1e3:>17.2f}", flush=True)


if __name__ == "__main__":
    main()
