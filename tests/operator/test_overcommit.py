"""Overcommit protection under load: 16 workers, 500 bindings, capacity for a fraction of them, accurate
estimators that answer late (so passes interleave between their estimates and their writes). With Reserve, no
cluster ends up with more replicas than it had room for, computed from the final objects alone; the same run
without it gives the same capacity out several times."""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.estimation.stub import EstimatorStub
from tests.shutdown.helpers import stubs_in_thread
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    namespaces,
    request,
    running_operator,
    wait_until,
    write_config,
)

CLUSTERS = 8
CPUS = 20
BINDINGS = 500
PLACEMENTS = [
    {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
     "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
]


def fleet() -> list[dict[str, Any]]:
    clusters = []
    for i in range(CLUSTERS):
        doc = cluster_doc(f"m{i}", pods=110)
        doc["status"]["resourceSummary"]["allocatable"]["cpu"] = str(CPUS)
        clusters.append(doc)
    return clusters


def bindings(rng: random.Random) -> list[dict[str, Any]]:
    docs = []
    for i in range(BINDINGS):
        doc = binding_doc(f"app-{i:03d}", namespace="shop", replicas=rng.randint(1, 3),
                          placement={"replicaScheduling": rng.choice(PLACEMENTS)})
        doc["spec"]["replicaRequirements"] = {"resourceRequest": {"cpu": "1"}}
        docs.append(doc)
    return docs


def placed_cpus(api: DevCluster) -> Counter[str]:
    """CPUs given out per cluster by the final `spec.clusters` of every binding (each replica asks for 1)."""
    status, answer = request(api, "GET", "/apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings")
    assert status == 200, answer
    given: Counter[str] = Counter()
    for body in answer["items"]:
        for target in body["spec"].get("clusters") or []:
            given[target["name"]] += int(target.get("replicas") or 0)
    return given


def decided(api: DevCluster) -> bool:
    status, answer = request(api, "GET", "/apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings")
    assert status == 200, answer
    return all(
        any(c.get("type") == "Scheduled" for c in (body.get("status") or {}).get("conditions") or [])
        for body in answer["items"]
    )


def run(tmp_path: Path, protected: bool) -> Counter[str]:
    with DevCluster.in_thread() as api, stubs_in_thread(
        *(EstimatorStub(f"m{i}", replicas=1000, latency=0.005) for i in range(CLUSTERS))
    ) as stubs:
        namespaces(api, "default", "karmada-system", "shop")
        apply(api, *fleet(), *bindings(random.Random(7)))
        spec = config_spec(
            workers=16,
            kubeAPI={"qps": 5000, "burst": 5000},  # Karmada's 40/s would make this a test of the rate limiter
            featureGates={"SchedulingOvercommitProtection": protected},
            estimator={"enabled": True, "timeout": "2s", "endpoints": {s.cluster_name: s.address for s in stubs}},
        )
        with running_operator(api, write_config(tmp_path / "config.yaml", spec), expect_exit=None):
            # Polled slowly: listing 500 bindings every 20 ms would compete with the operator for the process.
            wait_until(lambda: decided(api) or time.sleep(0.5), 120, "every binding to carry a Scheduled condition")
        return placed_cpus(api)


def test_with_reserve_no_cluster_is_given_more_than_it_had_free(tmp_path: Path) -> None:
    given = run(tmp_path, protected=True)
    over = {name: cpus for name, cpus in given.items() if cpus > CPUS}
    assert over == {}
    assert sum(given.values()) > CLUSTERS * CPUS * 0.9  # the fleet is nearly full, not empty


def test_without_reserve_same_load_overcommits(tmp_path: Path) -> None:
    given = run(tmp_path, protected=False)
    assert sum(given.values()) > CLUSTERS * CPUS * 2
    assert max(given.values()) > CPUS
