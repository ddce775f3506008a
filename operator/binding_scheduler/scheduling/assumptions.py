"""The assumption cache of overcommit protection (Karmada's `SchedulingOvercommitProtection` gate, reference
1.10): each decided workload is assumed on its clusters until the cluster reports it.

A cluster's status lags behind the decisions made for it: until the workload runs there and the cluster's
resource summary counts it, every pass would see the same free capacity. So the Reserve step records each
decided ResourceBinding's footprint per cluster (its replicas x requirements, or its component set), the
estimators deduct the footprints of the other bindings, and an assumption goes away when:

- the binding's workload on that cluster reports `Healthy` in `status.aggregatedStatus` (the cluster's
  summary counts it from then on),
- the binding is deleted,
- the decision that made it did not land (Unreserve restores what was assumed before),
- a new decision of the binding replaces it (clusters dropped from the placement are released),
- it was not refreshed for `ttl` (5 minutes, as in Karmada): expired entries are ignored at once and
  collected at most every minute.

Like Karmada, ClusterResourceBindings and non-workloads are never assumed. Each cluster has a version that
changes with every assumption added to or taken from it: a pass notes the versions when it estimates, and
Reserve refuses its decision when one of the clusters it places replicas on changed meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..algorithm.general_estimator import AssumedWorkload
from ..model import Binding, Component, Scope, TargetCluster

TTL = 300.0
GC_INTERVAL = 60.0


@dataclass(frozen=True, slots=True)
class Footprint:
    """What one binding is assumed to take, by cluster, and until when (by the cache's clock)."""

    by_cluster: Mapping[str, AssumedWorkload]
    expires: float


class AssumptionCache:
    """Assumed workloads by binding and by cluster, with a version per cluster."""

    def __init__(self, *, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._by_binding: dict[str, Footprint] = {}
        self._by_cluster: dict[str, dict[str, AssumedWorkload]] = {}
        self._versions: dict[str, int] = {}
        self._collected_at = clock()

    def __len__(self) -> int:
        return sum(len(f.by_cluster) for f in self._by_binding.values() if f.expires > self._clock())

    def others(
        self, binding: Binding, clusters: Iterable[str]
    ) -> tuple[dict[str, tuple[AssumedWorkload, ...]], dict[str, int]]:
        """What other bindings are assumed to take on each of `clusters` (expired ones left out), and each
        cluster's version now. The binding's own assumption is not deducted: its current replicas already
        count as available to it (reference 2.5)."""
        now = self._clock()
        assumed: dict[str, tuple[AssumedWorkload, ...]] = {}
        versions: dict[str, int] = {}
        for cluster in clusters:
            versions[cluster] = self._versions.get(cluster, 0)
            held = self._by_cluster.get(cluster)
            if not held:
                continue
            workloads = tuple(
                workload for key, workload in held.items()
                if key != binding.key and self._by_binding[key].expires > now
            )
            if workloads:
                assumed[cluster] = workloads
        return assumed, versions

    def unchanged(self, versions: Mapping[str, int], clusters: Iterable[str]) -> bool:
        """No assumption was added to or taken from any of `clusters` since `versions` were read."""
        return all(self._versions.get(c, 0) == versions.get(c, -1) for c in clusters)

    def assume(self, binding: Binding, result: Sequence[TargetCluster], multi_template: bool) -> Footprint | None:
        """Record the binding's footprint for `result` (replacing its previous one, which is returned)."""
        previous = self._by_binding.get(binding.key)
        if binding.scope is Scope.CLUSTER:
            return previous
        footprint = Footprint(_workloads(binding, result, multi_template), self._clock() + self.ttl)
        self._set(binding.key, footprint)
        self._collect_garbage()
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
        if footprint is None or cluster not in footprint.by_cluster:
            return
        rest = {name: w for name, w in footprint.by_cluster.items() if name != cluster}
        self._set(key, Footprint(rest, footprint.expires) if rest else None)

    def release(self, key: str) -> None:
        """The binding is gone."""
        self._set(key, None)

    def assumed_on(self, cluster: str) -> dict[str, AssumedWorkload]:
        """The unexpired assumptions on `cluster`, by binding key."""
        now = self._clock()
        held = self._by_cluster.get(cluster) or {}
        return {key: w for key, w in held.items() if self._by_binding[key].expires > now}

    def _set(self, key: str, footprint: Footprint | None) -> None:
        old = self._by_binding.pop(key, None)
        for cluster in old.by_cluster if old is not None else ():
            held = self._by_cluster[cluster]
            del held[key]
            if not held:
                del self._by_cluster[cluster]
            self._bump(cluster)
        if footprint is None or not footprint.by_cluster:
            return
        self._by_binding[key] = footprint
        for cluster, workload in footprint.by_cluster.items():
            self._by_cluster.setdefault(cluster, {})[key] = workload
            self._bump(cluster)

    def _bump(self, cluster: str) -> None:
        self._versions[cluster] = self._versions.get(cluster, 0) + 1

    def _collect_garbage(self) -> None:
        now = self._clock()
        if now - self._collected_at < GC_INTERVAL:
            return
        self._collected_at = now
        for key in [k for k, f in self._by_binding.items() if f.expires <= now]:
            self._set(key, None)


def _workloads(binding: Binding, result: Sequence[TargetCluster], multi_template: bool) -> dict[str, AssumedWorkload]:
    """Per cluster of `result`, what the binding puts there: its component set (a multi-template binding), or
    one component named after the resource with that cluster's replicas (clusters given none are skipped)."""
    namespace = binding.namespace
    if multi_template and binding.components:
        return {t.name: AssumedWorkload(namespace, binding.components) for t in result}
    requirements = binding.replica_requirements
    shared: dict[int, AssumedWorkload] = {}  # clusters given the same replicas share one object (Duplicated: all)
    out: dict[str, AssumedWorkload] = {}
    for target in result:
        if target.replicas <= 0:
            continue
        workload = shared.get(target.replicas)
        if workload is None:
            component = Component(binding.resource.name, target.replicas, requirements)
            workload = shared[target.replicas] = AssumedWorkload(namespace, (component,))
        out[target.name] = workload
    return out
