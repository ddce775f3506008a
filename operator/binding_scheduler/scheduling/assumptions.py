"""The assumption cache of overcommit protection (Karmada's `SchedulingOvercommitProtection` gate): each decided
workload is assumed on its clusters until the cluster reports it. Karmada's is
`pkg/scheduler/cache/cache.go: AssigningResourceBindingCache` (`Assume`, `GetAssumedWorkloads`, `GC`), filled by
`pkg/scheduler/scheduler.go: updateAssumptionsCache`.

A cluster's status lags behind the decisions made for it: until the workload runs there and the cluster's
resource summary counts it, every pass would see the same free capacity. So the Reserve step records each
decided ResourceBinding's footprint per cluster (its replicas x requirements, or its component set), the
estimators deduct the footprints of the other bindings, and an assumption goes away when:

- the binding's workload on that cluster reports `Healthy` in `status.aggregatedStatus` (the cluster's
  summary counts it from then on),
- the binding is deleted,
- the decision that made it did not land (Unreserve restores what was assumed before),
- a new decision of the binding replaces it (clusters dropped from the placement are released),
- it was not refreshed for `ttl` (5 minutes, as in Karmada): the first read after that drops it.

Like Karmada, ClusterResourceBindings and non-workloads are never assumed. Each cluster has a version that
changes with every assumption added to or taken from it: a pass notes the versions when it estimates, and
Reserve refuses its decision when one of the clusters it places replicas on changed meanwhile.

Cost: every pass reads the assumptions on each of its candidate clusters, and a fleet's cluster can hold
thousands. So each cluster keeps the sums of what is assumed there (`LoadTotals`), updated as assumptions come
and go, and a pass gets them per cluster in constant time; the workloads one by one are listed only for the
clusters where the caller needs them (resource models, accurate estimators).
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..algorithm.general_estimator import (
    AssumedLoad,
    AssumedProfile,
    AssumedWorkload,
    LoadTotals,
    assumed_profile,
)
from ..model import Binding, Component, Scope, TargetCluster

TTL = 300.0


@dataclass(frozen=True, slots=True)
class FootprintGroup:
    """Clusters given the same workload by one decision (a Duplicated binding's are all one group)."""

    workload: AssumedWorkload
    profile: AssumedProfile
    clusters: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Footprint:
    """What one binding is assumed to take, by cluster, and until when (by the cache's clock). Kept as groups of
    clusters sharing one workload: a Duplicated binding over 800 clusters is one workload and 800 names, not
    800 entries (at 50,000 bindings over 1,000 clusters, the assumptions were most of the scheduler's memory)."""

    groups: tuple[FootprintGroup, ...]
    expires: float

    def __len__(self) -> int:
        return sum(len(g.clusters) for g in self.groups)

    def on(self, cluster: str) -> FootprintGroup | None:
        return next((g for g in self.groups if cluster in g.clusters), None)

    def without(self, cluster: str) -> Footprint | None:
        """This footprint less `cluster`; None when nothing is left."""
        groups = []
        for group in self.groups:
            rest = tuple(c for c in group.clusters if c != cluster)
            if rest:
                groups.append(group if len(rest) == len(group.clusters) else FootprintGroup(
                    group.workload, group.profile, rest))
        return Footprint(tuple(groups), self.expires) if groups else None


@dataclass(slots=True)
class _ClusterHeld:
    """The assumptions on one cluster: each binding's workload, and their sums."""

    entries: dict[str, AssumedWorkload] = field(default_factory=dict)
    totals: LoadTotals = field(default_factory=LoadTotals)
    load: AssumedLoad | None = None
    """The sums as an `AssumedLoad` without its workloads, kept until the next change here (most passes read
    a cluster more often than the cluster's assumptions change)."""

    def add(self, key: str, workload: AssumedWorkload, profile: AssumedProfile) -> None:
        self.entries[key] = workload
        self.totals.add(profile)
        self.load = None

    def remove(self, key: str, profile: AssumedProfile) -> None:
        del self.entries[key]
        self.totals.remove(profile)
        self.load = None

    def others(self, key: str, listed: bool, own: AssumedProfile | None) -> AssumedLoad | None:
        """The load of every binding's workload here but `key`'s (whose profile here is `own`); None when there is
        none."""
        if self.totals.count - (own is not None) <= 0:
            return None
        if listed:
            workloads = tuple(w for k, w in self.entries.items() if k != key)
            return self.totals.load(workloads, without=own)
        if own is not None:
            return self.totals.load(None, without=own)
        if self.load is None:
            self.load = self.totals.load(None)
        return self.load


class AssumptionCache:
    """Assumed workloads by binding and by cluster, with a version per cluster."""

    def __init__(self, *, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._by_binding: dict[str, Footprint] = {}
        self._by_cluster: dict[str, _ClusterHeld] = {}
        self._versions: dict[str, int] = {}
        self._expiries: list[tuple[float, int, str]] = []
        self._sequence = itertools.count()

    def __len__(self) -> int:
        self._expire()
        return sum(len(f) for f in self._by_binding.values())

    def others(
        self, binding: Binding, clusters: Iterable[str], *, workloads: Callable[[str], bool] | bool = False
    ) -> tuple[dict[str, AssumedLoad], dict[str, int]]:
        """What other bindings are assumed to take on each of `clusters`, and each cluster's version now.

        The binding's own assumption is not deducted: its current replicas already count as available to it (the
        available replicas add them, as in
        `pkg/scheduler/core/spreadconstraint/group_clusters.go: generateClustersInfo`). A deliberate difference:
        Karmada's `pkg/scheduler/core/estimation.go: buildAssumedWorkloadsByCluster` passes every binding's
        assumptions, its own included. Each load carries its workloads one by one where `workloads` says so
        (True: on every cluster)."""
        self._expire()
        key = binding.key
        wanted = workloads if callable(workloads) else (lambda _: workloads)
        mine = self._by_binding.get(key)
        own: dict[str, AssumedProfile] = (
            {} if mine is None else {c: g.profile for g in mine.groups for c in g.clusters}
        )
        assumed: dict[str, AssumedLoad] = {}
        versions: dict[str, int] = {}
        for cluster in clusters:
            versions[cluster] = self._versions.get(cluster, 0)
            held = self._by_cluster.get(cluster)
            if held is None:
                continue
            load = held.others(key, wanted(cluster), own.get(cluster))
            if load is not None:
                assumed[cluster] = load
        return assumed, versions

    def unchanged(self, versions: Mapping[str, int], clusters: Iterable[str]) -> bool:
        """No assumption was added to or taken from any of `clusters` since `versions` were read."""
        return all(self._versions.get(c, 0) == versions.get(c, -1) for c in clusters)

    def assume(self, binding: Binding, result: Sequence[TargetCluster], multi_template: bool) -> Footprint | None:
        """Record the binding's footprint for `result` (replacing its previous one, which is returned)."""
        previous = self._by_binding.get(binding.key)
        if binding.scope is Scope.CLUSTER:
            return previous
        footprint = Footprint(_groups(binding, result, multi_template), self._clock() + self.ttl)
        self._set(binding.key, footprint)
        self._expire()
        return previous

    def restore(self, binding: Binding, previous: Footprint | None) -> None:
        """Undo an `assume`: the binding's footprint is what it was before."""
        self._set(binding.key, previous)

    def holds(self, key: str) -> bool:
        """Anything is assumed for this binding (cheap: intake asks it for every binding event)."""
        return key in self._by_binding

    def release_cluster(self, key: str, cluster: str) -> None:
        """The binding's workload on `cluster` is running there (Healthy): the cluster's status counts it now."""
        footprint = self._by_binding.get(key)
        if footprint is None or footprint.on(cluster) is None:
            return
        self._set(key, footprint.without(cluster))

    def release(self, key: str) -> None:
        """The binding is gone."""
        self._set(key, None)

    def assumed_on(self, cluster: str) -> dict[str, AssumedWorkload]:
        """The unexpired assumptions on `cluster`, by binding key."""
        self._expire()
        held = self._by_cluster.get(cluster)
        return {} if held is None else dict(held.entries)

    def _set(self, key: str, footprint: Footprint | None) -> None:
        old = self._by_binding.pop(key, None)
        for group in old.groups if old is not None else ():
            for cluster in group.clusters:
                held = self._by_cluster[cluster]
                held.remove(key, group.profile)
                if not held.entries:
                    del self._by_cluster[cluster]
                self._bump(cluster)
        if footprint is None or not footprint.groups:
            return
        self._by_binding[key] = footprint
        heapq.heappush(self._expiries, (footprint.expires, next(self._sequence), key))
        for group in footprint.groups:
            for cluster in group.clusters:
                on_cluster = self._by_cluster.get(cluster)
                if on_cluster is None:
                    on_cluster = self._by_cluster[cluster] = _ClusterHeld()
                on_cluster.add(key, group.workload, group.profile)
                self._bump(cluster)

    def _bump(self, cluster: str) -> None:
        self._versions[cluster] = self._versions.get(cluster, 0) + 1

    def _expire(self) -> None:
        """Drop every footprint past its expiry (each assume queues its expiry; a refreshed or released
        footprint's old entries find nothing expired to drop)."""
        now = self._clock()
        expiries = self._expiries
        while expiries and expiries[0][0] <= now:
            _, _, key = heapq.heappop(expiries)
            footprint = self._by_binding.get(key)
            if footprint is not None and footprint.expires <= now:
                self._set(key, None)
        if len(expiries) > 2 * len(self._by_binding) + 1024:
            self._expiries = [(f.expires, next(self._sequence), k) for k, f in self._by_binding.items()]
            heapq.heapify(self._expiries)


def _groups(binding: Binding, result: Sequence[TargetCluster], multi_template: bool) -> tuple[FootprintGroup, ...]:
    """What the binding puts on each cluster of `result`, grouped by workload: its component set (a
    multi-template binding), or one component named after the resource with that cluster's replicas (clusters
    given none are skipped); clusters given the same replicas share one workload object."""
    namespace = binding.namespace
    if multi_template and binding.components:
        workload = AssumedWorkload(namespace, binding.components)
        names = tuple(t.name for t in result)
        return (FootprintGroup(workload, assumed_profile(workload), names),) if names else ()
    requirements = binding.replica_requirements
    by_replicas: dict[int, list[str]] = {}
    for target in result:
        if target.replicas > 0:
            by_replicas.setdefault(target.replicas, []).append(target.name)
    groups = []
    for replicas, given in by_replicas.items():
        workload = AssumedWorkload(namespace, (Component(binding.resource.name, replicas, requirements),))
        groups.append(FootprintGroup(workload, assumed_profile(workload), tuple(given)))
    return tuple(groups)
