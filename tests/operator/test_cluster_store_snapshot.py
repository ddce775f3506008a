"""ClusterStore keeps the snapshot's indexes per change: its snapshot equals `Snapshot(clusters)`, field by
field, after any sequence of adds, updates, rejections and removals."""

from __future__ import annotations

import random
from typing import Any

from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import ValidationError, parse_cluster
from binding_scheduler.scheduling.state import stores
from binding_scheduler.scheduling.state.stores import ClusterStore

GROUPS = [("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("batch/v1", "Job")]


def cluster(name: str, rng: random.Random) -> Any:
    apis: dict[str, list[dict[str, str]]] = {}
    for group_version, kind in rng.sample(GROUPS, rng.randint(0, 3)):
        apis.setdefault(group_version, []).append({"name": kind.lower() + "s", "kind": kind})
    metadata: dict[str, Any] = {"name": name, "labels": {"tier": rng.choice(["a", "b"])}}
    if rng.random() < 0.1:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return parse_cluster({
        "kind": "Cluster",
        "metadata": metadata,
        "spec": {
            "provider": rng.choice(["", "aws"]),
            "region": rng.choice(["", "r1", "r2"]),
            "zones": rng.choice([[], ["z1"]]),
            "taints": rng.choice([[], [{"key": "k", "effect": rng.choice(["NoSchedule", "NoExecute",
                                                                          "PreferNoSchedule"])}]]),
        },
        "status": {"apiEnablements": [{"groupVersion": gv, "resources": r} for gv, r in apis.items()]},
    })


def fields(snapshot: Snapshot) -> dict[str, Any]:
    """What a snapshot holds, but its caches (the estimator cache is the store's, handed on, by design)."""
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in vars(snapshot).items()
            if k not in ("_memo", "estimator")}


def test_store_knows_every_field_of_snapshot() -> None:
    assert stores._SNAPSHOT_FIELDS_KNOWN


def test_after_any_churn_snapshot_is_one_built_from_scratch() -> None:
    rng = random.Random(13)
    store = ClusterStore()
    for step in range(600):
        name = f"m{rng.randint(0, 40):02d}"
        roll = rng.random()
        if roll < 0.6:
            store.upsert(cluster(name, rng))
        elif roll < 0.7:
            store.reject(name, ValidationError("spec", "bad"))
        else:
            store.forget(name)
        if step % 7 == 0:
            expected = Snapshot(sorted((c for n in store.names() if (c := store.get(n))), key=lambda c: c.name))
            assert fields(store.snapshot()) == fields(expected), step


def test_unchanged_cluster_keeps_snapshot_and_memos() -> None:
    doc = {"kind": "Cluster", "metadata": {"name": "m1"}, "spec": {"region": "r1"}}
    store = ClusterStore()
    store.upsert(parse_cluster(doc))
    snapshot = store.snapshot()
    store.upsert(parse_cluster(doc))  # a status update that changes nothing the model reads, say
    assert store.snapshot() is snapshot
    store.upsert(parse_cluster({**doc, "spec": {"region": "r2"}}))
    assert store.snapshot() is not snapshot


def test_estimator_cache_forgets_changed_clusters() -> None:
    store = ClusterStore()
    summary = {"resourceSummary": {"allocatable": {"pods": "10"}}}
    for name in ("m1", "m2"):
        store.upsert(parse_cluster({"kind": "Cluster", "metadata": {"name": name}, "status": summary}))
    first = store.snapshot()
    for cluster in first.clusters:
        first.estimator.profile(cluster)
    store.upsert(parse_cluster({"kind": "Cluster", "metadata": {"name": "m1", "labels": {"a": "b"}},
                                "status": summary}))
    store.forget("m2")
    second = store.snapshot()
    assert second is not first and second.estimator is first.estimator
    assert sorted(second.estimator._profiles) == []
