"""Micro-benchmark of the general estimator: clusters estimated per second on one core.

Run: `.venv/bin/python -m benchmarks.general_estimator [clusters] [decisions]`. Rates are per CPU second of
this process (`time.process_time`), so a busy machine skews them less.

Scenarios, each over the same snapshot of clusters (a third of them with resource models):

* repeated: decisions for bindings with the same requirements object (the memo answers);
* distinct: every decision has a new request (new amounts, so new integer profiles and a memo miss per cluster);
* assumed: like distinct, and every tenth cluster has an assumed workload to deduct;
* cold: a fresh snapshot (new Cluster objects) every decision, so each cluster's profile is rebuilt.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from binding_scheduler.algorithm.general_estimator import (
    AssumedWorkload,
    EstimatorCache,
    estimate_replicas,
)
from binding_scheduler.model import Cluster, Component, ReplicaRequirements, parse_cluster, parse_quantity


def make_cluster(i: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"syncMode": "Push"}
    summary: dict[str, Any] = {
        "allocatable": {"cpu": f"{64 + i % 50}", "memory": f"{256 + i % 70}Gi", "pods": "1100"},
        "allocated": {"cpu": f"{i % 30}500m", "memory": f"{i % 90}Gi", "pods": f"{i % 400}"},
        "allocating": {"cpu": "250m", "pods": "3"},
    }
    if i % 3 == 0:
        spec["resourceModels"] = [
            {"grade": g, "ranges": [{"name": "cpu", "min": str(2**g), "max": str(2 ** (g + 1))},
                                    {"name": "memory", "min": f"{4 * 2**g}Gi", "max": f"{8 * 2**g}Gi"}]}
            for g in range(4)
        ]  # fmt: skip
        summary["allocatableModelings"] = [{"grade": g, "count": 5 + (i + g) % 7} for g in range(4)]
    return {"metadata": {"name": f"member-{i}"}, "spec": spec, "status": {"resourceSummary": summary}}


def requirements(k: int) -> ReplicaRequirements:
    return ReplicaRequirements(
        resource_request={
            "cpu": parse_quantity(f"{100 + k % 900}m", "cpu"),
            "memory": parse_quantity(f"{128 + k % 1000}Mi", "memory"),
        }
    )


def measure(name: str, clusters_per_decision: int, decisions: int, run: Callable[[int], object]) -> None:
    run(-1)  # warm-up (imports, first profiles)
    start = time.process_time()  # CPU time of this process: other load on the machine does not count
    for k in range(decisions):
        run(k)
    elapsed = time.process_time() - start
    rate = clusters_per_decision * decisions / elapsed
    print(
        f"{name:>9}: {rate:>12,.0f} clusters/s   {decisions / elapsed:>9,.1f} decisions/s "
        f"at {clusters_per_decision} clusters"
    )


def main(argv: list[str]) -> None:
    n = int(argv[1]) if len(argv) > 1 else 1000
    decisions = int(argv[2]) if len(argv) > 2 else 300
    raw = [make_cluster(i) for i in range(n)]
    clusters: list[Cluster] = [parse_cluster(c) for c in raw]
    cache = EstimatorCache()  # what a snapshot carries

    same = requirements(1)
    measure("repeated", n, decisions, lambda _k: estimate_replicas(clusters, same, cache=cache))

    distinct = [requirements(k) for k in range(decisions + 1)]
    measure("distinct", n, decisions, lambda k: estimate_replicas(clusters, distinct[k], cache=cache))

    workload = AssumedWorkload("default", (Component("web", 4, requirements(7)),))
    assumed = {c.name: [workload] for c in clusters[::10]}
    distinct2 = [requirements(10_000 + k) for k in range(decisions + 1)]
    measure("assumed", n, decisions, lambda k: estimate_replicas(clusters, distinct2[k], assumed, cache=cache))

    cold_decisions = max(1, decisions // 10)
    snapshots = [[parse_cluster(c) for c in raw] for _ in range(cold_decisions + 1)]
    measure("cold", n, cold_decisions, lambda k: estimate_replicas(snapshots[k], same, cache=cache))


if __name__ == "__main__":
    main(sys.argv)
