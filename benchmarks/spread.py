"""Spread selection throughput: selections per second for 10/100/1,000/5,000 clusters on one core.

Run: .venv/bin/python -m benchmarks.spread
The scheduler targets >= 300 whole decisions/s at 1,000 clusters, so one selection should stay well under
1 ms there. Scenarios: 10 regions (region min 2 max 3, cluster min 2 max 6); a lone cluster spread whose
first choices lack capacity (the swap path); and no constraints (sorting only). Candidates arrive shuffled,
as the pipeline may pass them in any order.
"""

from __future__ import annotations

import random
import time
from typing import Any

from binding_scheduler.algorithm.candidates import ClusterDetail
from binding_scheduler.algorithm.spread import select_best_clusters
from binding_scheduler.model import Binding, parse_binding, parse_cluster

SIZES = (10, 100, 1000, 5000)
REGIONS = 10
MIN_SECONDS = 0.5
AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}


def fleet(size: int) -> list[ClusterDetail]:
    rng = random.Random(size)
    details = []
    for i in range(size):
        cluster = parse_cluster(
            {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": f"member{i:05d}"},
                "spec": {"region": f"region-{i % REGIONS}", "zones": [f"zone-{i % (REGIONS * 3)}"]},
            }
        )
        capacity = rng.randrange(0, 60)
        score = 100 if i % 97 == 0 else 0
        details.append(ClusterDetail(cluster, score=score, allocatable=capacity, available=capacity))
    rng.shuffle(details)
    return details


def binding(replicas: int, constraints: list[dict[str, Any]]) -> Binding:
    placement: dict[str, Any] = {"replicaScheduling": AGGREGATED}
    if constraints:
        placement["spreadConstraints"] = constraints
    return parse_binding(
        {
            "apiVersion": "work.karmada.io/v1alpha2",
            "kind": "ResourceBinding",
            "metadata": {"name": "bench", "namespace": "default"},
            "spec": {
                "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "bench"},
                "replicas": replicas,
                "placement": placement,
            },
        }
    )


SCENARIOS = {
    "region spread": binding(
        100,
        [
            {"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
            {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 6},
        ],
    ),
    "cluster spread + swap": binding(150, [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 6}]),
    "no constraints": binding(100, []),
}


def rate(b: Binding, candidates: list[ClusterDetail]) -> float:
    runs = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < MIN_SECONDS:
        for _ in range(10):
            select_best_clusters(b, candidates, b.replicas)
        runs += 10
        elapsed = time.perf_counter() - start
    return runs / elapsed


def calibration_ms() -> float:
    """How long this core takes to sum a million ints (about 10 ms on a quick desktop core): a yardstick."""
    start = time.perf_counter()
    sum(range(1_000_000))
    return (time.perf_counter() - start) * 1000


def main() -> None:
    print(f"calibration: sum(range(10**6)) takes {calibration_ms():.1f} ms on this core")
    print(f"{'scenario':<24}{'clusters':>10}{'selections/s':>16}{'ms each':>10}")
    for name, b in SCENARIOS.items():
        for size in SIZES:
            per_second = rate(b, fleet(size))
            print(f"{name:<24}{size:>10}{per_second:>16,.0f}{1000 / per_second:>10.3f}")


if __name__ == "__main__":
    main()
