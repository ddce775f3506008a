"""The assumption cache of overcommit protection (Karmada's pkg/scheduler/cache/cache.go:
AssigningResourceBindingCache): what is assumed where, for how long, and when it is released."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.model import Binding, Component, TargetCluster, parse_binding
from binding_scheduler.scheduling.state.assumptions import TTL, AssumptionCache
from testsupport.builders import binding, make_binding, snapshot

REQUESTS = {"cpu": "500m"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def rb(name: str, **kwargs: object) -> Binding:
    return make_binding(name, namespace="shop", replicas=4, requests=REQUESTS, **kwargs)


def held(cache: AssumptionCache, cluster: str) -> dict[str, int]:
    """Replicas assumed on `cluster`, by binding key."""
    return {key: sum(c.replicas for c in w.components) for key, w in cache.assumed_on(cluster).items()}


def test_decision_assumed_as_one_component() -> None:
    cache = AssumptionCache()
    web = rb("web")
    cache.assume(web, [TargetCluster("m1", 3), TargetCluster("m2", 1)], multi_template=False)
    workload = cache.assumed_on("m1")["shop/web"]
    assert workload == AssumedWorkload("shop", (Component("web", 3, web.replica_requirements),))
    assert (held(cache, "m1"), held(cache, "m2")) == ({"shop/web": 3}, {"shop/web": 1})


def test_clusters_given_no_replicas_are_not_assumed() -> None:
    cache = AssumptionCache()
    cache.assume(rb("web"), [TargetCluster("m1", 4), TargetCluster("m2", 0)], multi_template=False)
    assert (held(cache, "m1"), held(cache, "m2")) == ({"shop/web": 4}, {})


def test_multi_template_binding_is_assumed_as_component_set() -> None:
    cache = AssumptionCache()
    body = binding("job", namespace="shop")
    body["spec"]["components"] = [{"name": "leader", "replicas": 1}, {"name": "worker", "replicas": 3}]
    job = parse_binding(body)
    cache.assume(job, [TargetCluster("m1")], multi_template=True)
    assert cache.assumed_on("m1")["shop/job"] == AssumedWorkload("shop", job.components)
    assert [c.name for c in job.components] == ["leader", "worker"]


def test_cluster_resource_bindings_are_never_assumed() -> None:
    cache = AssumptionCache()
    cache.assume(make_binding("web", cluster_scoped=True, replicas=2, requests=REQUESTS),
                 [TargetCluster("m1", 2)], multi_template=False)
    assert held(cache, "m1") == {}


def test_new_decision_releases_dropped_clusters() -> None:
    cache = AssumptionCache()
    web = rb("web")
    cache.assume(web, [TargetCluster("m1", 2), TargetCluster("m2", 2)], multi_template=False)
    cache.assume(web, [TargetCluster("m2", 4)], multi_template=False)
    assert (held(cache, "m1"), held(cache, "m2")) == ({}, {"shop/web": 4})


def test_binding_estimates_with_others_assumptions_not_own() -> None:
    cache = AssumptionCache()
    cache.assume(rb("web"), [TargetCluster("m1", 2)], multi_template=False)
    cache.assume(rb("api"), [TargetCluster("m1", 3)], multi_template=False)
    assumed, _ = cache.others(rb("web"), ["m1", "m2"], workloads=True)
    assert {c: [w.components[0].name for w in ws] for c, ws in assumed.items()} == {"m1": ["api"]}


def test_cluster_load_sums_others_without_listing() -> None:
    cache = AssumptionCache()
    cache.assume(rb("web"), [TargetCluster("m1", 2)], multi_template=False)
    cache.assume(rb("api"), [TargetCluster("m1", 3)], multi_template=False)
    cache.assume(rb("db"), [TargetCluster("m1", 1), TargetCluster("m2", 4)], multi_template=False)
    assumed, _ = cache.others(rb("web"), ["m1", "m2"], workloads=lambda cluster: cluster == "m2")
    m1, m2 = assumed["m1"], assumed["m2"]
    assert (len(m1), m1.pods, m1.deducted) == (2, 4, (("cpu", 2000),))
    assert (len(m2), m2.pods, m2.deducted, [w.components[0].name for w in m2]) == (1, 4, (("cpu", 2000),), ["db"])
    with pytest.raises(LookupError, match="not asked for"):
        list(m1)


def test_cluster_load_forgets_what_was_released_there() -> None:
    cache = AssumptionCache()
    cache.assume(rb("api"), [TargetCluster("m1", 3)], multi_template=False)
    cache.assume(rb("db"), [TargetCluster("m1", 1)], multi_template=False)
    assert cache.others(rb("web"), ["m1"])[0]["m1"].pods == 4
    cache.release_cluster("shop/db", "m1")
    load = cache.others(rb("web"), ["m1"])[0]["m1"]
    assert (len(load), load.pods, load.deducted) == (1, 3, (("cpu", 1500),))
    cache.release("shop/api")
    assert cache.others(rb("web"), ["m1"])[0] == {}


def test_unreserve_restores_what_was_assumed_before() -> None:
    cache = AssumptionCache()
    web = rb("web")
    cache.assume(web, [TargetCluster("m1", 2)], multi_template=False)
    previous = cache.assume(web, [TargetCluster("m2", 4)], multi_template=False)
    cache.restore(web, previous)
    assert (held(cache, "m1"), held(cache, "m2")) == ({"shop/web": 2}, {})


def test_undone_pass_of_deleted_binding_restores_nothing() -> None:
    cache = AssumptionCache()
    web = rb("web")
    cache.assume(web, [TargetCluster("m1", 2)], multi_template=False)
    previous = cache.assume(web, [TargetCluster("m2", 4)], multi_template=False)  # a pass in flight reserved
    cache.release("shop/web")  # the binding is deleted; the pass's write then finds it gone
    cache.restore(web, previous)
    assert (held(cache, "m1"), held(cache, "m2")) == ({}, {})


def test_recreated_binding_restored_as_any() -> None:
    cache = AssumptionCache()
    web = rb("web")
    cache.release("shop/web")
    cache.assume(web, [TargetCluster("m1", 2)], multi_template=False)
    previous = cache.assume(web, [TargetCluster("m2", 4)], multi_template=False)
    cache.restore(web, previous)
    assert (held(cache, "m1"), held(cache, "m2")) == ({"shop/web": 2}, {})


def test_healthy_workload_releases_cluster_only() -> None:
    cache = AssumptionCache()
    cache.assume(rb("web"), [TargetCluster("m1", 2), TargetCluster("m2", 2)], multi_template=False)
    cache.release_cluster("shop/web", "m1")
    assert (held(cache, "m1"), held(cache, "m2")) == ({}, {"shop/web": 2})


def test_deleted_binding_releases_everything() -> None:
    cache = AssumptionCache()
    cache.assume(rb("web"), [TargetCluster("m1", 2), TargetCluster("m2", 2)], multi_template=False)
    cache.release("shop/web")
    assert (held(cache, "m1"), held(cache, "m2"), len(cache)) == ({}, {}, 0)


def test_assumption_expires_after_ttl() -> None:
    clock = Clock()
    cache = AssumptionCache(clock=clock)
    cache.assume(rb("web"), [TargetCluster("m1", 2)], multi_template=False)
    clock.now += TTL - 1
    cache.assume(rb("web"), [TargetCluster("m1", 3)], multi_template=False)
    clock.now += TTL - 1
    assert held(cache, "m1") == {"shop/web": 3}
    clock.now += 1
    assert held(cache, "m1") == {}
    assert cache.others(rb("api"), ["m1"])[0] == {}


def test_expired_assumption_dropped_by_next_read() -> None:
    clock = Clock()
    cache = AssumptionCache(clock=clock)
    cache.assume(rb("old"), [TargetCluster("m1", 1)], multi_template=False)
    _, before = cache.others(rb("web"), ["m1"])
    clock.now += TTL
    assert cache.others(rb("web"), ["m1"])[0] == {}
    assert (cache.holds("shop/old"), cache.unchanged(before, ["m1"])) == (False, False)


def test_cluster_version_moves_with_its_assumptions() -> None:
    cache = AssumptionCache()
    _, before = cache.others(rb("web"), ["m1", "m2"])
    cache.assume(rb("api"), [TargetCluster("m1", 1)], multi_template=False)
    assert not cache.unchanged(before, ["m1"])
    assert cache.unchanged(before, ["m2"])
    _, now = cache.others(rb("web"), ["m1"])
    cache.release("shop/api")
    assert not cache.unchanged(now, ["m1"])


def test_clusters_given_same_replicas_share_one_assumed_workload() -> None:
    """A Duplicated binding over a large fleet holds one workload object, not one per cluster."""
    cache = AssumptionCache()
    cache.assume(rb("web"), [TargetCluster(f"m{i}", 4) for i in range(100)], multi_template=False)
    assert len({id(cache.assumed_on(f"m{i}")["shop/web"]) for i in range(100)}) == 1


def test_duplicated_releases_healthy_cluster_only() -> None:
    cache = AssumptionCache()
    cache.assume(rb("web"), [TargetCluster(f"m{i}", 4) for i in range(3)] + [TargetCluster("m9", 1)],
                 multi_template=False)
    cache.release_cluster("shop/web", "m1")
    assert [held(cache, c) for c in ("m0", "m1", "m2", "m9")] == [
        {"shop/web": 4}, {}, {"shop/web": 4}, {"shop/web": 1}]
    assert len(cache) == 3


def test_cluster_listing_cached_until_something_changes() -> None:
    cache = AssumptionCache()
    cache.assume(rb("api"), [TargetCluster("m1", 3), TargetCluster("m2", 1)], multi_template=False)
    cache.assume(rb("db"), [TargetCluster("m1", 1)], multi_template=False)
    first = cache.others(rb("web"), ["m1", "m2"], workloads=True)[0]["m1"]
    again = cache.others(rb("cache"), ["m1"], workloads=True)[0]["m1"]
    assert again is first and [w.components[0].name for w in first] == ["api", "db"]
    cache.assume(rb("web"), [TargetCluster("m2", 2)], multi_template=False)
    assert cache.others(rb("cache"), ["m1"], workloads=True)[0]["m1"] is first
    cache.release("shop/db")
    after = cache.others(rb("cache"), ["m1"], workloads=True)[0]["m1"]
    assert after is not first and [w.components[0].name for w in after] == ["api"]


def test_cluster_listing_leaves_out_own_workload() -> None:
    cache = AssumptionCache()
    cache.assume(rb("api"), [TargetCluster("m1", 3)], multi_template=False)
    cache.assume(rb("db"), [TargetCluster("m1", 1)], multi_template=False)
    shared = cache.others(rb("web"), ["m1"], workloads=True)[0]["m1"]
    mine = cache.others(rb("db"), ["m1"], workloads=True)[0]["m1"]
    assert ([w.components[0].name for w in shared], [w.components[0].name for w in mine]) == (["api", "db"], ["api"])
    assert (mine.pods, shared.pods) == (3, 4)


def test_workloads_listed_in_order_last_assumed() -> None:
    cache = AssumptionCache()
    for name in ("web", "api", "db"):
        cache.assume(rb(name), [TargetCluster("m1", 1), TargetCluster("m2", 1)], multi_template=False)
    assert cache.others(rb("x"), ["m1"])[0]["m1"].pods == 3
    cache.assume(rb("web"), [TargetCluster("m1", 2)], multi_template=False)
    assert list(cache.assumed_on("m1")) == ["shop/api", "shop/db", "shop/web"]
    assert list(cache.assumed_on("m2")) == ["shop/api", "shop/db"]
    cache.release("shop/api")
    cache.assume(rb("cache"), [TargetCluster("m2", 1)], multi_template=False)
    assert (list(cache.assumed_on("m1")), list(cache.assumed_on("m2"))) == (
        ["shop/db", "shop/web"], ["shop/db", "shop/cache"])
    listed = cache.others(rb("x"), ["m2"], workloads=True)[0]["m2"]
    assert [w.components[0].name for w in listed] == ["db", "cache"]


def read_fleet(cache: AssumptionCache, deciding: Binding) -> Mapping[str, int]:
    """The versions (and what had been added) a pass deciding `deciding` reads over m1 and m2."""
    fleet = snapshot("m1", "m2").columns
    return cache.at(deciding, fleet, np.arange(len(fleet)), workloads=False).versions


def test_assumed_since_read_takes_at_most_its_share() -> None:
    cache = AssumptionCache()
    deciding = make_binding("d", namespace="shop", replicas=1, requests={"cpu": "500m", "memory": "1Gi"})
    cache.assume(make_binding("before", namespace="shop", replicas=9, requests={"cpu": "1"}),
                 [TargetCluster("m1", 9)], multi_template=False)
    read = read_fleet(cache, deciding)
    cache.assume(make_binding("since", namespace="shop", replicas=2, requests={"cpu": "1", "memory": "1Gi"}),
                 [TargetCluster("m1", 2)], multi_template=False)
    cache.release("before")  # what goes away frees nothing here

    # 2 pods + 2 cpu / 500m + 2Gi / 1Gi
    assert cache.taken_since(read, ["m1", "m2"]) == {"m1": 2 + 4 + 2, "m2": 0}


def test_replica_share_rounds_down_once() -> None:
    cache = AssumptionCache()
    deciding = make_binding("d", namespace="shop", replicas=1, requests={"cpu": "300m", "memory": "3Gi"})
    read = read_fleet(cache, deciding)
    cache.assume(make_binding("since", namespace="shop", replicas=1, requests={"cpu": "200m", "memory": "2Gi"}),
                 [TargetCluster("m1", 1)], multi_template=False)

    # 1 pod + 2/3 + 2/3: 2.33..., not 1 + 0 + 0
    assert cache.taken_since(read, ["m1"]) == {"m1": 2}


def test_unread_versions_cannot_tell_taken() -> None:
    cache = AssumptionCache()
    deciding = rb("d")
    _, versions = cache.others(deciding, ["m1"])
    assert cache.taken_since(versions, ["m1"]) is None
