"""`ClusterStore.places_only_known`: whether a stored binding is placed only on clusters the store knows, kept for
a shared placement until a cluster joins or leaves."""

from __future__ import annotations

from binding_scheduler.model import ValidationError, parse_cluster
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster

NAMES = [f"m{i:02d}" for i in range(20)]  # past TargetPool.SHARED_FROM: the store shares such lists


def store_of(names: list[str]) -> ClusterStore:
    clusters = ClusterStore()
    for name in names:
        clusters.upsert(parse_cluster(cluster(name)))
    return clusters


def stored(name: str, placed_on: list[str]) -> dict:
    bindings = BindingStore()
    bindings.upsert(binding(name, clusters={n: 1 for n in placed_on}))
    body = bindings.body(f"default/{name}")
    assert body is not None
    return dict(body)


def test_placement_on_known_clusters_is_known() -> None:
    assert store_of(NAMES).places_only_known(stored("web", NAMES))


def test_placement_on_an_unknown_cluster_is_not() -> None:
    assert not store_of(NAMES[:-1]).places_only_known(stored("web", NAMES))


def test_short_placement_is_checked_too() -> None:
    clusters = store_of(["m00"])
    assert clusters.places_only_known(stored("a", ["m00"]))
    assert not clusters.places_only_known(stored("b", ["m00", "m01"]))


def test_cluster_leaving_changes_kept_answer() -> None:
    clusters, body = store_of(NAMES), stored("web", NAMES)
    assert clusters.places_only_known(body)
    clusters.forget("m07")
    assert not clusters.places_only_known(body)


def test_cluster_joining_changes_kept_answer() -> None:
    clusters, body = store_of(NAMES[:-1]), stored("web", NAMES)
    assert not clusters.places_only_known(body)
    clusters.upsert(parse_cluster(cluster(NAMES[-1])))
    assert clusters.places_only_known(body)


def test_invalid_cluster_is_not_known() -> None:
    clusters, body = store_of(NAMES), stored("web", NAMES)
    assert clusters.places_only_known(body)
    clusters.reject("m03", ValidationError("spec.syncMode", "is not one of Push, Pull"))
    assert not clusters.places_only_known(body)
