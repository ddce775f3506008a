"""The binding store keeps what the scheduler reads: a real API server's managedFields are dropped, and the
placed clusters' entries are shared between bindings (TargetPool)."""

from __future__ import annotations

from binding_scheduler.model import Binding, TargetCluster, ValidationError, parse_binding
from binding_scheduler.scheduling.state.stores import BindingStore, TargetPool


def test_managed_fields_are_not_kept_and_event_body_is_untouched() -> None:
    body = {
        "kind": "ResourceBinding",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7", "generation": 2,
                     "managedFields": [{"manager": "karmada-controller-manager", "fieldsV1": {"f:spec": {}}}]},
        "spec": {"replicas": 2},
    }
    store = BindingStore()
    assert store.upsert(body) is None
    kept = store.body("default/web")
    assert kept is not None
    assert kept["metadata"] == {"name": "web", "namespace": "default", "resourceVersion": "7", "generation": 2}
    assert kept["spec"] == {"replicas": 2}
    assert "managedFields" in body["metadata"]
    assert store.upsert({**body, "metadata": {**body["metadata"], "resourceVersion": "8"}}) == kept


def _placed(name: str, clusters: list[dict[str, object]], version: str = "1") -> dict[str, object]:
    return {
        "kind": "ResourceBinding",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": version, "generation": 1},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}, "replicas": 3,
                 "clusters": clusters},
    }


def _entries(store: BindingStore, key: str) -> list[dict[str, object]]:
    body = store.body(key)
    assert body is not None
    clusters: list[dict[str, object]] = body["spec"]["clusters"]
    return clusters


def test_same_placements_share_entries_and_keep_values() -> None:
    store = BindingStore()
    store.upsert(_placed("a", [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}]))
    store.upsert(_placed("b", [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 1}]))
    a, b = _entries(store, "default/a"), _entries(store, "default/b")
    assert a == [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}]
    assert b == [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 1}]
    assert a[0] is b[0]
    assert a[1] is not b[1]


def test_no_replicas_entry_differs_from_zero() -> None:
    store = BindingStore()
    store.upsert(_placed("a", [{"name": "m1"}]))
    store.upsert(_placed("b", [{"name": "m1", "replicas": 0}]))
    assert _entries(store, "default/a") == [{"name": "m1"}]
    assert _entries(store, "default/b") == [{"name": "m1", "replicas": 0}]


def test_odd_entries_kept_as_sent_and_parse_reports_them() -> None:
    store = BindingStore()
    with_components = {"name": "m1", "replicas": 2, "components": [{"name": "web", "replicas": 2}]}
    store.upsert(_placed("a", [with_components, {"name": "m2", "replicas": True}]))
    assert _entries(store, "default/a")[0] is with_components
    error = store.parsed("default/a")
    assert isinstance(error, ValidationError)
    assert error.path == "spec.clusters[1].replicas"


def test_parsed_bindings_share_equal_target_clusters() -> None:
    store = BindingStore()
    store.upsert(_placed("a", [{"name": "m1", "replicas": 3}]))
    store.upsert(_placed("b", [{"name": "m1", "replicas": 3}]))
    a, b = store.parsed("default/a"), store.parsed("default/b")
    assert isinstance(a, Binding) and isinstance(b, Binding)
    assert a.clusters == (TargetCluster("m1", 3),)
    assert a.clusters[0] is b.clusters[0]


def test_pool_is_emptied_at_limit_and_bodies_keep_their_entries() -> None:
    pool = TargetPool(limit=4)
    store = BindingStore(pool)
    for index in range(6):
        store.upsert(_placed(f"b{index}", [{"name": f"m{index}", "replicas": 1}]))
    assert len(pool) <= 4
    assert [_entries(store, f"default/b{index}") for index in range(6)] == [
        [{"name": f"m{index}", "replicas": 1}] for index in range(6)]


def test_status_write_parses_only_metadata_and_status() -> None:
    store = BindingStore()
    first = _placed("a", [{"name": "m1", "replicas": 3}])
    store.upsert(first)
    before = store.parsed("default/a")
    assert isinstance(before, Binding)
    kept = store.body("default/a")
    assert kept is not None
    written = _placed("a", [{"name": "m1", "replicas": 3}], version="2")
    written["status"] = {"schedulerObservedGeneration": 1}

    store.upsert(written)
    after = store.parsed("default/a")

    now = store.body("default/a")
    assert now is not None and now["spec"] is kept["spec"]
    assert isinstance(after, Binding)
    assert (after.resource_version, after.status.scheduler_observed_generation) == ("2", 1)
    assert after.clusters is before.clusters
    assert after == parse_binding(written)


def test_spec_change_is_parsed_afresh() -> None:
    store = BindingStore()
    store.upsert(_placed("a", [{"name": "m1", "replicas": 3}]))
    store.parsed("default/a")
    store.upsert(_placed("a", [{"name": "m2", "replicas": 3}], version="2"))
    after = store.parsed("default/a")
    assert isinstance(after, Binding)
    assert after.clusters == (TargetCluster("m2", 3),)


def _with_placement(clusters: list[dict[str, object]], *, version: str, generation: int,
                    regions: list[str]) -> dict[str, object]:
    body = _placed("a", clusters, version=version)
    body["metadata"]["generation"] = generation  # type: ignore[index]
    body["spec"]["placement"] = {"clusterAffinity": {"clusterNames": ["m1", "m2"]},  # type: ignore[index]
                                 "spreadConstraints": [{"spreadByField": "region", "minGroups": 1}],
                                 "replicaScheduling": {"replicaSchedulingType": "Divided"},
                                 "clusterTolerations": [{"key": "k", "operator": "Exists"}],
                                 "regions": regions}
    return body


def test_spec_write_parses_only_what_it_needs() -> None:
    store = BindingStore()
    store.upsert(_with_placement([], version="1", generation=1, regions=["eu"]))
    before = store.parsed("default/a")
    written = _with_placement([{"name": "m1", "replicas": 2}, {"name": "m2"}], version="2", generation=2,
                              regions=["eu"])

    store.upsert(written)
    after = store.parsed("default/a")

    assert isinstance(before, Binding) and isinstance(after, Binding)
    assert after.clusters == (TargetCluster("m1", 2), TargetCluster("m2", 0))
    assert (after.resource_version, after.generation) == ("2", 2)
    assert after.placement is before.placement
    assert after == parse_binding(written)


def test_spec_change_beyond_clusters_is_parsed_whole() -> None:
    store = BindingStore()
    store.upsert(_with_placement([], version="1", generation=1, regions=["eu"]))
    before = store.parsed("default/a")
    changed = _with_placement([{"name": "m1", "replicas": 2}], version="2", generation=2, regions=["us"])

    store.upsert(changed)
    after = store.parsed("default/a")

    assert isinstance(before, Binding) and isinstance(after, Binding)
    assert after.placement is not before.placement
    assert after == parse_binding(changed)


def test_invalid_new_cluster_entry_names_path() -> None:
    store = BindingStore()
    store.upsert(_with_placement([], version="1", generation=1, regions=["eu"]))
    store.parsed("default/a")
    store.upsert(_with_placement([{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": -1}], version="2",
                                 generation=2, regions=["eu"]))

    error = store.parsed("default/a")

    assert isinstance(error, ValidationError)
    assert error.path == "spec.clusters[1].replicas"


def test_spec_write_after_pool_emptied_parses_entries() -> None:
    pool = TargetPool(limit=3)
    store = BindingStore(pool)
    store.upsert(_with_placement([], version="1", generation=1, regions=["eu"]))
    store.parsed("default/a")
    store.upsert(_with_placement([{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}], version="2",
                                 generation=2, regions=["eu"]))
    for index in range(4):
        store.upsert(_placed(f"other-{index}", [{"name": f"x{index}", "replicas": 1}]))

    after = store.parsed("default/a")

    assert isinstance(after, Binding)
    assert after.clusters == (TargetCluster("m1", 2), TargetCluster("m2", 1))


def _fleet(replicas: int | None, count: int = 20) -> list[dict[str, object]]:
    return [{"name": f"m{i:02d}"} if replicas is None else {"name": f"m{i:02d}", "replicas": replicas}
            for i in range(count)]


def test_alike_placements_share_one_list_and_tuple() -> None:
    store = BindingStore()
    store.upsert(_placed("a", _fleet(None)))
    store.upsert(_placed("b", _fleet(None)))
    store.upsert(_placed("c", _fleet(2)))

    a, b, c = _entries(store, "default/a"), _entries(store, "default/b"), _entries(store, "default/c")
    assert a == _fleet(None) and c == _fleet(2)
    assert a is b
    assert c is not a
    parsed_a, parsed_b = store.parsed("default/a"), store.parsed("default/b")
    assert isinstance(parsed_a, Binding) and isinstance(parsed_b, Binding)
    assert parsed_a.clusters == tuple(TargetCluster(f"m{i:02d}", 0) for i in range(20))
    assert parsed_a.clusters is parsed_b.clusters


def test_spec_write_of_shared_placement_parses_to_shared_tuple() -> None:
    store = BindingStore()
    store.upsert(_placed("a", _fleet(1)))
    first = store.parsed("default/a")
    store.upsert(_placed("b", [], version="1"))
    store.parsed("default/b")
    store.upsert(_placed("b", _fleet(1), version="2"))

    written = store.parsed("default/b")

    assert isinstance(first, Binding) and isinstance(written, Binding)
    assert written.clusters is first.clusters


def test_odd_or_small_placement_is_not_shared() -> None:
    store = BindingStore()
    odd = [*_fleet(1)[:-1], {"name": "m19", "replicas": 1, "extra": True}]
    store.upsert(_placed("a", odd))
    store.upsert(_placed("b", [dict(entry) for entry in odd]))
    store.upsert(_placed("c", _fleet(1, count=15)))
    store.upsert(_placed("d", _fleet(1, count=15)))

    assert _entries(store, "default/a") is not _entries(store, "default/b")
    assert _entries(store, "default/a") == odd
    assert _entries(store, "default/c") is not _entries(store, "default/d")
    assert _entries(store, "default/c")[0] is _entries(store, "default/d")[0]


def test_shared_lists_forgotten_at_limit_entries_kept() -> None:
    pool = TargetPool(shared_limit=50)
    store = BindingStore(pool)
    for replicas in range(1, 6):
        store.upsert(_placed(f"r{replicas}", _fleet(replicas)))

    assert pool.shared_size <= 50
    assert [_entries(store, f"default/r{replicas}") for replicas in range(1, 6)] == [
        _fleet(replicas) for replicas in range(1, 6)]
    store.upsert(_placed("again", _fleet(5)))
    assert _entries(store, "default/again") is _entries(store, "default/r5")
