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

Cost: every pass reads the assumptions on each of its candidate clusters, a fleet's cluster can hold thousands
and a Duplicated footprint covers hundreds of clusters. So the sums of what is assumed on each cluster are
columns (`assumed_columns.AssumedColumns`, one slot per cluster), changed by a few array operations per
footprint group; a decision reads them at its candidates as columns (`at`), and the workloads one by one are
listed only for the clusters where the caller needs them (resource models, accurate estimators).
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ...algorithm.fleet import FleetColumns, Indices, Mask
from ...algorithm.general_estimator import AssumedLoad, AssumedProfile, AssumedWorkload, assumed_profile, replica_units
from ...algorithm.general_estimator.columns import AssumedAt, Column
from ...model import Binding, Component, Scope, TargetCluster
from .assumed_columns import SAFE, AddedAt, AssumedColumns, HeldSlots

TTL = 300.0
GONE_KEPT = 4_096
"""Deleted bindings remembered so that a pass still in flight for one cannot restore its footprint (a pass lasts
seconds; this many deletions in that time is far beyond any fleet's churn)."""


@dataclass(frozen=True, slots=True)
class FootprintGroup:
    """Clusters given the same workload by one decision (a Duplicated binding's are all one group), as their
    slots in the cache's columns (`AssumedColumns.names` names them)."""

    workload: AssumedWorkload
    profile: AssumedProfile
    slots: HeldSlots = field(compare=False)


@dataclass(frozen=True, slots=True)
class Footprint:
    """What one binding is assumed to take, by cluster, and until when (by the cache's clock). Kept as groups of
    clusters sharing one workload: a Duplicated binding over 800 clusters is one workload and 800 names, not
    800 entries (at 50,000 bindings over 1,000 clusters, the assumptions were most of the scheduler's memory)."""

    groups: tuple[FootprintGroup, ...]
    expires: float

    def __len__(self) -> int:
        return sum(len(g.slots) for g in self.groups)

    def on(self, slot: int) -> FootprintGroup | None:
        return next((g for g in self.groups if bool((g.slots == slot).any())), None)

    def without(self, slot: int) -> Footprint | None:
        """This footprint less the cluster at `slot`; None when nothing is left."""
        groups = []
        for group in self.groups:
            keep = group.slots != slot
            if keep.all():
                groups.append(group)
            elif keep.any():
                groups.append(FootprintGroup(group.workload, group.profile, group.slots[keep]))
        return Footprint(tuple(groups), self.expires) if groups else None


class AssumptionCache:
    """Assumed workloads by binding and by cluster, with a version per cluster."""

    def __init__(self, *, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._by_binding: dict[str, Footprint] = {}
        self._by_cluster: dict[str, dict[str, AssumedWorkload]] | None = None
        """The workloads on each cluster by binding key, kept only once something lists them (accurate
        estimators, resource models): a Duplicated footprint would otherwise cost an entry on each of its
        hundreds of clusters, and the sums are the columns."""
        self._loads: dict[str, tuple[int, AssumedLoad]] = {}
        """Each cluster's load without a deciding binding's own, by the cluster's version when it was read
        (most passes read a cluster more often than its assumptions change)."""
        self._listed: dict[str, tuple[int, AssumedLoad]] = {}
        """The same with its workloads listed: one tuple while nothing there changes, so the estimators'
        requests reuse its encoding."""
        self._columns = AssumedColumns()
        self._gone: dict[str, None] = {}
        """Bindings released as deleted, oldest first (at most `GONE_KEPT`): `restore` leaves them released."""
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
        own = self._own_profiles(key)
        assumed: dict[str, AssumedLoad] = {}
        versions: dict[str, int] = {}
        version = self._columns.version
        for cluster in clusters:
            versions[cluster] = version(cluster)
            load = self._load_on(cluster, key, wanted(cluster), own.get(cluster))
            if load is not None:
                assumed[cluster] = load
        return assumed, versions

    def at(
        self, binding: Binding, fleet: FleetColumns, indices: Indices, *, workloads: Callable[[str], bool] | bool
    ) -> AssumedAtCandidates:
        """`others` for a decision's candidates (the fleet `indices`), as columns: what the general estimate
        deducts, the loads one by one on demand, and every fleet cluster's version now."""
        self._expire()
        key = binding.key
        columns = self._columns
        fleet_slots = columns.fleet_slots(fleet.names)
        slots = fleet_slots[indices]
        own_at = _OwnAt(self._by_binding.get(key), fleet, indices, columns.names_of)
        count = columns.count.values[slots] - own_at.count()
        own = self._own_profiles(key)
        wanted = workloads if callable(workloads) else (lambda _: workloads)

        def deducted(resource: str) -> Column:
            sums = columns.deducted.get(resource)
            at = np.zeros(len(slots), dtype=np.int64) if sums is None else sums.values[slots]
            return at - own_at.amount(resource)

        def load(cluster: str) -> AssumedLoad | None:
            return self._load_on(cluster, key, wanted(cluster), own.get(cluster))

        held = count > 0
        added = columns.added_at(fleet_slots, replica_units(binding.replica_requirements))
        return AssumedAtCandidates(
            AssumedAt(held, columns.pods.values[slots] - own_at.pods(), deducted, load),
            fleet, indices, Versions(fleet, columns.versions[fleet_slots], added),
        )

    def unchanged(self, versions: Mapping[str, int], clusters: Iterable[str]) -> bool:
        """No assumption was added to or taken from any of `clusters` since `versions` were read."""
        return not self.changed(versions, clusters)

    def changed(self, versions: Mapping[str, int], clusters: Iterable[str]) -> list[str]:
        """Those of `clusters` that gained or lost an assumption since `versions` were read."""
        version = self._columns.version
        return [c for c in clusters if version(c) != versions.get(c, -1)]

    def taken_since(self, read: Mapping[str, int], clusters: Sequence[str]) -> dict[str, int] | None:
        """For each of `clusters`: the most replicas of the binding that read `read` (a decision's `Versions`) the
        workloads assumed there since can take from the room its estimates gave it, or None when `read` cannot
        say.

        A pod of an assumed workload lands on one node, where it takes one pod slot and, of each resource `k` the
        binding requests (`r_k` a replica), `w_k`: at most `max(1, max_k ceil(w_k / r_k)) <= 1 + sum_k w_k / r_k`
        replicas' room. So `n` pods taking `W_k` in all take at most `floor(n + sum_k W_k / r_k)`, computed in
        integers as `n + sum_k W_k // r_k + max(0, m - 1)` (`m` the resources with a remainder: their fractions
        add up to less than `m`). Only what was added counts (what was taken away is capacity the cluster may
        still be using: it frees nothing here)."""
        if not isinstance(read, Versions) or read.added is None:
            return None
        then = read.added
        positions = [read.position(cluster) for cluster in clusters]
        slots = [self._columns.known(cluster) for cluster in clusters]
        if None in positions or None in slots:
            return None
        at, now = np.array(positions, dtype=np.intp), np.array(slots, dtype=np.intp)
        columns = self._columns
        pods = columns.added_pods.values[now] - then.pods[at]
        whole: Column = pods
        remainders: Column = np.zeros(len(at), dtype=np.int64)
        for name, per_replica in then.request.items():
            added = columns.added.get(name)
            amount = (0 if added is None else added.values[now]) - then.resources[name][at]
            whole = whole + amount // per_replica
            remainders = remainders + (amount % per_replica != 0)
        taken = whole + np.maximum(remainders - 1, 0)
        return dict(zip(clusters, taken.tolist(), strict=True))

    def assume(self, binding: Binding, result: Sequence[TargetCluster], multi_template: bool) -> Footprint | None:
        """Record the binding's footprint for `result` (replacing its previous one, which is returned)."""
        previous = self._by_binding.get(binding.key)
        if binding.scope is Scope.CLUSTER:
            return previous
        self._gone.pop(binding.key, None)
        groups = _groups(binding, result, multi_template, self._columns.held_slots)
        self._set(binding.key, Footprint(groups, self._clock() + self.ttl))
        self._expire()
        return previous

    def restore(self, binding: Binding, previous: Footprint | None) -> None:
        """Undo an `assume`: the binding's footprint is what it was before, unless the binding was deleted since
        (a pass whose write then found it gone must not bring back the footprint its deletion released)."""
        self._set(binding.key, None if binding.key in self._gone else previous)

    def holds(self, key: str) -> bool:
        """Anything is assumed for this binding (cheap: intake asks it for every binding event)."""
        return key in self._by_binding

    def release_cluster(self, key: str, cluster: str) -> None:
        """The binding's workload on `cluster` is running there (Healthy): the cluster's status counts it now."""
        footprint = self._by_binding.get(key)
        slot = self._columns.known(cluster)
        if footprint is None or slot is None or footprint.on(slot) is None:
            return
        self._set(key, footprint.without(slot))

    def release(self, key: str) -> None:
        """The binding is gone."""
        self._set(key, None)
        self._gone[key] = None
        if len(self._gone) > GONE_KEPT:
            del self._gone[next(iter(self._gone))]

    def assumed_on(self, cluster: str) -> dict[str, AssumedWorkload]:
        """The unexpired assumptions on `cluster`, by binding key."""
        self._expire()
        return dict(self._index().get(cluster) or {})

    def _own_profiles(self, key: str) -> dict[str, AssumedProfile]:
        mine = self._by_binding.get(key)
        names = self._columns.names_of
        return {} if mine is None else {c: g.profile for g in mine.groups for c in names(g.slots)}

    def _load_on(self, cluster: str, key: str, listed: bool, own: AssumedProfile | None) -> AssumedLoad | None:
        """The load of every binding's workload on `cluster` but `key`'s (whose profile there is `own`); None when
        there is none."""
        columns = self._columns
        slot = columns.known(cluster)
        if slot is None or int(columns.count.values[slot]) - (own is not None) <= 0:
            return None
        if own is not None:
            workloads = None
            if listed:
                workloads = tuple(w for k, w in self._index()[cluster].items() if k != key)
            return columns.load(slot, workloads, own)
        cached = self._listed if listed else self._loads
        version = int(columns.versions[slot])
        entry = cached.get(cluster)
        if entry is None or entry[0] != version:
            load = columns.load(slot, tuple(self._index()[cluster].values()) if listed else None, None)
            entry = cached[cluster] = (version, load)
        return entry[1]

    def _index(self) -> dict[str, dict[str, AssumedWorkload]]:
        """`_by_cluster`, built from the footprints on first use (in the order their bindings were last
        assumed, the order it keeps from then on)."""
        if self._by_cluster is None:
            index: dict[str, dict[str, AssumedWorkload]] = {}
            names = self._columns.names_of
            for key, footprint in self._by_binding.items():
                for group in footprint.groups:
                    for cluster in names(group.slots):
                        index.setdefault(cluster, {})[key] = group.workload
            self._by_cluster = index
        return self._by_cluster

    def _set(self, key: str, footprint: Footprint | None) -> None:
        old = self._by_binding.pop(key, None)
        by_cluster = self._by_cluster
        names = self._columns.names_of
        for group in old.groups if old is not None else ():
            if by_cluster is not None:
                for cluster in names(group.slots):
                    held = by_cluster[cluster]
                    del held[key]
                    if not held:
                        del by_cluster[cluster]
            self._columns.add(group.slots, group.profile, -1)
        if footprint is None or not footprint.groups:
            return
        self._by_binding[key] = footprint
        heapq.heappush(self._expiries, (footprint.expires, next(self._sequence), key))
        for group in footprint.groups:
            if by_cluster is not None:
                workload = group.workload
                for cluster in names(group.slots):
                    by_cluster.setdefault(cluster, {})[key] = workload
            self._columns.add(group.slots, group.profile, 1)

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


class _OwnAt:
    """The binding's own footprint at its candidates, as columns (what `others` leaves out)."""

    def __init__(self, footprint: Footprint | None, fleet: FleetColumns, indices: Indices,
                 names_of: Callable[[HeldSlots], list[str]]) -> None:
        self._groups: list[tuple[AssumedProfile, Indices]] = []
        self._length = len(indices)
        if footprint is None:
            return
        where = np.full(len(fleet), -1, dtype=np.intp)
        where[indices] = np.arange(len(indices), dtype=np.intp)
        index = fleet.index
        for group in footprint.groups:
            at = where[[index[c] for c in names_of(group.slots) if c in index]]
            at = at[at >= 0]
            if len(at):
                self._groups.append((group.profile, at))

    def _column(self, amount: Callable[[AssumedProfile], int]) -> Column | int:
        if not self._groups:
            return 0
        values = [(at, amount(profile)) for profile, at in self._groups]
        wide = any(not -SAFE < value < SAFE for _, value in values)
        column: Column = np.zeros(self._length, dtype=object if wide else np.int64)
        for at, value in values:
            column[at] = value
        return column

    def count(self) -> Column | int:
        return self._column(lambda _: 1)

    def pods(self) -> Column | int:
        return self._column(lambda p: p.pods)

    def amount(self, resource: str) -> Column | int:
        return self._column(lambda p: dict(p.deducted).get(resource, 0))


class Versions(Mapping[str, int]):
    """Every fleet cluster's assumption version when a decision read them (what Reserve compares), and what had
    been added there by then (`added`, what `AssumptionCache.taken_since` weighs)."""

    __slots__ = ("_fleet", "_values", "added")

    def __init__(self, fleet: FleetColumns, values: npt.NDArray[np.int64], added: AddedAt | None = None) -> None:
        self._fleet = fleet
        self._values = values
        self.added = added

    def position(self, cluster: str) -> int | None:
        return self._fleet.index.get(cluster)

    def __getitem__(self, cluster: str) -> int:
        return int(self._values[self._fleet.index[cluster]])

    def __iter__(self) -> Iterator[str]:
        return iter(self._fleet.names)

    def __len__(self) -> int:
        return len(self._fleet)


class AssumedLoads(Mapping[str, AssumedLoad]):
    """The loads of a decision's candidates where other bindings hold assumptions, each read on first use (the
    `CycleState.assumed` of a pass: what the estimators are sent and plugins may read)."""

    __slots__ = ("_fleet", "_held", "_indices", "_load", "_loads", "_names")

    def __init__(self, fleet: FleetColumns, indices: Indices, held: Mask,
                 load: Callable[[str], AssumedLoad | None]) -> None:
        self._fleet = fleet
        self._indices = indices
        self._held = held
        self._load = load
        self._loads: dict[str, AssumedLoad | None] = {}
        self._names: list[str] | None = None

    def _held_names(self) -> list[str]:
        if self._names is None:
            names = self._fleet.names
            self._names = [names[i] for i in self._indices[self._held].tolist()]
        return self._names

    def __getitem__(self, cluster: str) -> AssumedLoad:
        if cluster not in self._loads:
            index = self._fleet.index.get(cluster)
            self._loads[cluster] = None if index is None else self._load(cluster)
        load = self._loads[cluster]
        if load is None:
            raise KeyError(cluster)
        return load

    def __iter__(self) -> Iterator[str]:
        return iter(self._held_names())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._held))


@dataclass(frozen=True, slots=True)
class AssumedAtCandidates:
    """What `AssumptionCache.at` answers: the columns the general estimate deducts, and the pass's loads and
    versions (its `CycleState.assumed` and `.versions`)."""

    columns: AssumedAt
    fleet: FleetColumns
    indices: Indices
    versions: Versions

    @property
    def loads(self) -> AssumedLoads:
        return AssumedLoads(self.fleet, self.indices, self.columns.held, self.columns.load)


def _groups(
    binding: Binding, result: Sequence[TargetCluster], multi_template: bool,
    slots: Callable[[Iterable[str]], HeldSlots],
) -> tuple[FootprintGroup, ...]:
    """What the binding puts on each cluster of `result`, grouped by workload: its component set (a
    multi-template binding), or one component named after the resource with that cluster's replicas (clusters
    given none are skipped); clusters given the same replicas share one workload object."""
    namespace = binding.namespace
    if multi_template and binding.components:
        workload = AssumedWorkload(namespace, binding.components)
        names = tuple(t.name for t in result)
        return (FootprintGroup(workload, assumed_profile(workload), slots(names)),) if names else ()
    requirements = binding.replica_requirements
    by_replicas: dict[int, list[str]] = {}
    for target in result:
        if target.replicas > 0:
            by_replicas.setdefault(target.replicas, []).append(target.name)
    groups = []
    for replicas, given in by_replicas.items():
        workload = AssumedWorkload(namespace, (Component(binding.resource.name, replicas, requirements),))
        groups.append(FootprintGroup(workload, assumed_profile(workload), slots(given)))
    return tuple(groups)
