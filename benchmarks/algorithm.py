"""Scheduling decisions per second on one core, by fleet size and strategy.

    .venv/bin/python -m benchmarks.algorithm [--sizes 10,100,1000,5000] [--seconds 2] [--gc product|default]

A decision is one whole attempt (filter, score, general estimate, select, assign) for one binding against a
snapshot built once, as the operator does between cluster changes. The bindings differ (name, uid, replicas,
previous result) and share their policy's placement, as bindings of one PropagationPolicy do.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import random
import time
from collections.abc import Callable
from typing import Any

from binding_scheduler.algorithm.registry import PluginSet, build_plugins
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import Binding, Cluster, parse_binding, parse_cluster
from binding_scheduler.operator.runner import GC_THRESHOLDS
from binding_scheduler.scheduling.framework.runner import Framework

REGIONS = [f"region-{i}" for i in range(10)]
PROVIDERS = ["aws", "gcp", "azure"]
API = [
    {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]},
    {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
    {"groupVersion": "batch/v1", "resources": [{"name": "jobs", "kind": "Job"}]},
]


def fleet(size: int, rng: random.Random) -> list[Cluster]:
    clusters = []
    for i in range(size):
        taints = [{"key": "maintenance", "effect": "NoSchedule"}] if rng.random() < 0.1 else []
        cpu = rng.choice([32, 64, 128])
        clusters.append(
            parse_cluster(
                {
                    "kind": "Cluster",
                    "metadata": {
                        "name": f"member-{i:05d}",
                        "labels": {"env": "prod" if i % 5 else "staging", "tier": rng.choice(["gold", "silver"])},
                    },
                    "spec": {
                        "syncMode": "Push",
                        "provider": PROVIDERS[i % 3],
                        "region": REGIONS[i % len(REGIONS)],
                        "zones": [f"{REGIONS[i % len(REGIONS)]}-a"],
                        "taints": taints,
                    },
                    "status": {
                        "apiEnablements": API,
                        "resourceSummary": {
                            "allocatable": {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", "pods": "330"},
                            "allocated": {"cpu": str(rng.randint(0, cpu // 2)), "memory": "16Gi", "pods": "40"},
                        },
                    },
                }
            )
        )
    return clusters


PLACEMENTS: dict[str, dict[str, Any]] = {
    "Duplicated": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
    },
    "StaticWeight": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {
                "staticWeightList": [
                    {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
                    {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "silver"}}}, "weight": 1},
                ]
            },
        },
    },
    "DynamicWeight": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        },
    },
    "DynamicWeight+region": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "spreadConstraints": [
            {"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
            {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 6},
        ],
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        },
    },
}


def bindings(strategy: str, clusters: list[Cluster], rng: random.Random, count: int = 64) -> list[Binding]:
    result = []
    for i in range(count):
        sample = rng.sample(clusters, min(3, len(clusters)))
        previous = [{"name": c.name, "replicas": rng.randint(1, 5)} for c in sample]
        result.append(
            parse_binding(
                {
                    "kind": "ResourceBinding",
                    "metadata": {"name": f"app-{i}", "namespace": "bench"},
                    "spec": {
                        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"app-{i}",
                                     "uid": f"{rng.getrandbits(128):032x}"},
                        "replicas": rng.randint(10, 60),
                        "replicaRequirements": {"resourceRequest": {"cpu": "500m", "memory": "1Gi"}},
                        "clusters": previous if i % 2 else [],
                        "placement": PLACEMENTS[strategy],
                    },
                }
            )
        )
    return result


LOOP = asyncio.new_event_loop()


def decide(binding: Binding, *, snapshot: Snapshot, plugins: PluginSet) -> object:
    """One attempt through the framework the operator runs (general estimator only)."""
    return LOOP.run_until_complete(Framework(plugins).attempt(binding, snapshot))


def rate(decide: Callable[[Binding], object], pool: list[Binding], seconds: float) -> float:
    for binding in pool[:4]:
        decide(binding)
    done, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for binding in pool:
            decide(binding)
        done += len(pool)
    return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000,5000")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--gc", choices=("product", "default"), default="product",
                        help="the garbage collector's thresholds: binding-scheduler run's (default) or CPython's")
    args = parser.parse_args()
    if args.gc == "product":
        gc.set_threshold(*GC_THRESHOLDS)
    sizes = [int(s) for s in args.sizes.split(",")]
    plugins = build_plugins()
    print(f"{'clusters':>8}  " + "  ".join(f"{name:>22}" for name in PLACEMENTS) + "   (decisions/s, one core)")
    for size in sizes:
        rng = random.Random(size)
        clusters = fleet(size, rng)
        snapshot = Snapshot(clusters)
        rates = []
        for strategy in PLACEMENTS:
            pool = bindings(strategy, clusters, rng)
            rates.append(rate(functools.partial(decide, snapshot=snapshot, plugins=plugins), pool, args.seconds))
        print(f"{size:>8}  " + "  ".join(f"{r:>22,.0f}" for r in rates), flush=True)


if __name__ == "__main__":
    main()
