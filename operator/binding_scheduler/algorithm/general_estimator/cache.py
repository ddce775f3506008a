"""The general estimator's caches: integer forms of clusters, requests and assumed workloads, and memoised answers.

Speed: the scheduler asks this for every candidate cluster of every decision (thousands per decision). An
`EstimatorCache` turns what a cluster offers into integers once per `Cluster` object, what a request asks once
per `ReplicaRequirements` / components object, and memoises the answer for a (cluster, request) pair without
assumed workloads on the cluster's entry: a repeated question costs two dictionary look-ups. Identity (not
equality) is the key on purpose: the model's frozen dataclasses do not cache their hash, and hashing a Cluster
(Fractions inside) costs more than the whole estimate. The cache holds strong references, so an `id()` is never
reused while its entry lives, and it is bounded. It is state of whoever owns it, never of this module: each
`Snapshot` carries one (the cluster store hands the same one on from snapshot to snapshot and forgets a cluster
when it changes); the estimates called without a cache use a throwaway one.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from ...model import Cluster, Component, ReplicaRequirements
from ..resource_models import CPU, replica_demand
from .assumed import AssumedProfile, AssumedWorkload, assumed_profile
from .profiles import ClusterProfile, ComponentsProfile, RequestProfile, build_cluster_profile
from .units import component_request, set_demands, set_units

_K = TypeVar("_K")
_V = TypeVar("_V")


class IdentityCache(Generic[_K, _V]):
    """A bounded memo keyed by object identity. Holds the key object, so its id cannot be reused meanwhile.

    When full it is emptied: entries are cheap to rebuild, and what matters is that a steady working set (the
    clusters of a snapshot) hits.
    """

    __slots__ = ("_build", "_entries", "_limit")

    def __init__(self, build: Callable[[_K], _V], limit: int) -> None:
        self._build = build
        self._limit = limit
        self._entries: dict[int, tuple[_K, _V]] = {}

    def get(self, key: _K) -> _V:
        entry = self._entries.get(id(key))
        if entry is not None and entry[0] is key:
            return entry[1]
        value = self._build(key)
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[id(key)] = (key, value)
        return value

    def clear(self) -> None:
        self._entries.clear()


class EstimatorCache:
    """Integer forms of clusters, requests and assumed workloads, and memoised answers (see the module)."""

    __slots__ = ("_assumed", "_component_sets", "_key_ids", "_next_key", "_profiles", "_requests")

    def __init__(self) -> None:
        self._profiles: dict[str, tuple[Cluster, ClusterProfile | None]] = {}
        self._requests: IdentityCache[ReplicaRequirements, RequestProfile] = IdentityCache(
            self._build_request_profile, 4096
        )
        self._component_sets: IdentityCache[Sequence[Component], ComponentsProfile] = IdentityCache(
            self._build_components_profile, 4096
        )
        self._assumed: IdentityCache[AssumedWorkload, AssumedProfile] = IdentityCache(
            assumed_profile, 16384
        )
        self._key_ids: dict[tuple[object, ...], int] = {}
        self._next_key = itertools.count()

    def profile(self, cluster: Cluster) -> ClusterProfile | None:
        """What `cluster` offers; rebuilt when the cluster of that name is another object."""
        entry = self._profiles.get(cluster.name)
        if entry is not None and entry[0] is cluster:
            return entry[1]
        profile = build_cluster_profile(cluster)
        self._profiles[cluster.name] = (cluster, profile)
        return profile

    def forget(self, name: str) -> None:
        """The cluster of that name changed or left."""
        self._profiles.pop(name, None)

    def request(self, requirements: ReplicaRequirements) -> RequestProfile:
        return self._requests.get(requirements)

    def component_sets(self, components: Sequence[Component]) -> ComponentsProfile:
        return self._component_sets.get(components)

    def assumed(self, workload: AssumedWorkload) -> AssumedProfile:
        return self._assumed.get(workload)

    def _key_id(self, key: tuple[object, ...]) -> int:
        found = self._key_ids.get(key)
        if found is None:
            if len(self._key_ids) >= 65536:
                self._key_ids.clear()  # ids are never reused, so forgetting only costs memo misses
            found = self._key_ids[key] = next(self._next_key)
        return found

    def _build_request_profile(self, requirements: ReplicaRequirements) -> RequestProfile:
        summary_request = tuple(
            sorted(
                (name, q.milli_value() if name == CPU else q.value())
                for name, q in requirements.resource_request.items()
                if q.value() > 0
            )
        )
        demand = replica_demand(requirements.resource_request)
        return RequestProfile(
            summary_request, demand, self._key_id(("s", summary_request)), self._key_id(("m", demand))
        )

    def _build_components_profile(self, components: Sequence[Component]) -> ComponentsProfile:
        per_set: dict[str, int] = {}
        for component in components:
            for name, q in component_request(component).items():
                per_set[name] = per_set.get(name, 0) + set_units(q) * component.replicas
        pods_per_set = sum(c.replicas for c in components)
        demands = tuple(set_demands(components))
        items = tuple(sorted(per_set.items()))
        return ComponentsProfile(pods_per_set, items, demands, self._key_id(("c", pods_per_set, items, demands)))
