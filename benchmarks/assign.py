"""Replica assignment throughput: assignments per second for 10/100/1,000/5,000 clusters on one core.

Run: .venv/bin/python -m benchmarks.assign
The scheduler targets >= 300 whole decisions/s at 1,000 clusters, so assignment should stay well under 1 ms there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from binding_scheduler.algorithm.assign import assign_replicas
from binding_scheduler.algorithm.candidates import ClusterDetail
from binding_scheduler.model import Binding, parse_binding, parse_cluster

SIZES = (10, 100, 1000, 5000)
ROUND_SECONDS = 0.2
ROUNDS = 3
TYPICAL_REPLICAS = 50


def fleet(size: int) -> list[ClusterDetail]:
    details = []
    for i in range(size):
        cluster = parse_cluster(
            {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": f"member{i:05d}", "labels": {"tier": "gold" if i % 3 == 0 else "silver"}},
            }
        )
        capacity = 10 + i % 50
        details.append(ClusterDetail(cluster, allocatable=capacity, available=capacity))
    return details


def binding(replicas: int, scheduling: dict[str, Any], previous: list[dict[str, Any]] | None = None) -> Binding:
    return parse_binding(
        {
            "apiVersion": "work.karmada.io/v1alpha2",
            "kind": "ResourceBinding",
            "metadata": {"name": "web-deployment", "namespace": "default"},
            "spec": {
                "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "bench"},
                "replicas": replicas,
                "replicaRequirements": {"resourceRequest": {"cpu": "100m"}},
                "placement": {"replicaScheduling": scheduling},
                "clusters": previous or [],
            },
        }
    )


def static(rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": rules},
    }


STATIC_BY_LABEL = static(
    [
        {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
        {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "silver"}}}, "weight": 1},
    ]
)


def static_by_names(size: int) -> dict[str, Any]:
    names = [f"member{i:05d}" for i in range(size)]
    return static(
        [
            {"targetCluster": {"clusterNames": names[::3]}, "weight": 3},
            {"targetCluster": {"clusterNames": names}, "weight": 1},
        ]
    )


DYNAMIC = {
    "replicaSchedulingType": "Divided",
    "replicaDivisionPreference": "Weighted",
    "weightPreference": {"dynamicWeight": "AvailableReplicas"},
}


def rate(run: Callable[[], object]) -> float:
    """Calls per second: the best of ROUNDS rounds of at least ROUND_SECONDS each (shared machines are noisy)."""
    best = 0.0
    for _ in range(ROUNDS):
        calls, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < ROUND_SECONDS:
            run()
            calls += 1
        best = max(best, calls / elapsed)
    return best


def scenarios(size: int, replicas: int) -> dict[str, Callable[[], object]]:
    selected = fleet(size)
    half = [{"name": d.name, "replicas": 1} for d in selected[: min(size // 2, replicas // 2)]]
    bindings = {
        "StaticWeight names": binding(replicas, static_by_names(size)),
        "StaticWeight labels": binding(replicas, STATIC_BY_LABEL),
        "DynamicWeight first": binding(replicas, DYNAMIC),
        "DynamicWeight scale-up": binding(replicas, DYNAMIC, half),
    }
    return {name: (lambda b=b: assign_replicas(b, selected)) for name, b in bindings.items()}


def main() -> None:
    print(f"{'clusters':>8}  {'scenario':<24} {'replicas':>8} {'assign/s':>10} {'ms each':>8}")
    for size in SIZES:
        for replicas in (TYPICAL_REPLICAS, 2 * size):
            for name, run in scenarios(size, replicas).items():
                per_second = rate(run)
                print(f"{size:>8}  {name:<24} {replicas:>8} {per_second:>10.0f} {1000 / per_second:>8.3f}")


if __name__ == "__main__":
    main()
