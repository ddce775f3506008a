"""The general estimator: how many replicas (or component sets) a cluster still takes, from its status alone
(Karmada's `general-estimator`: `pkg/estimator/client/general.go: GeneralEstimator`).

Two answers per cluster, both pure functions of the `Cluster` snapshot:

* `max_available_replicas` for single-template workloads;
* `max_available_component_sets` for multi-template workloads.

Speed: the scheduler asks this for every candidate cluster of every decision (thousands per decision). An
`EstimatorCache` turns what a cluster offers into integers once per `Cluster` object, what a request asks once
per `ReplicaRequirements` / components object, and memoises the answer for a (cluster, request) pair without
assumed workloads on the cluster's entry: a repeated question costs two dictionary look-ups. Identity (not
equality) is the key on purpose: the model's frozen dataclasses do not cache their hash, and hashing a Cluster
(Fractions inside) costs more than the whole estimate. The cache holds strong references, so an `id()` is never
reused while its entry lives, and it is bounded. It is state of whoever owns it, never of this module: each
`Snapshot` carries one (the cluster store hands the same one on from snapshot to snapshot and forgets a cluster
when it changes); the functions below without a cache use a throwaway one.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Generic, TypeVar, overload

from ..model import Cluster, Component, Quantity, ReplicaRequirements
from ..model.cluster import ResourceSummary
from .resource_models import (
    CPU,
    PODS,
    Demand,
    FirstFit,
    ModelError,
    NodeGroups,
    node_groups,
    replica_demand,
    total_fit,
)

MAX_INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class AssumedWorkload:
    """Capacity a binding was just given on a cluster but that the cluster's status may not show yet.

    The `SchedulingOvercommitProtection` assumption cache records one per (binding, cluster) after a successful
    result patch; a single-template workload is one component named after the resource, with that cluster's
    replicas (Karmada's `pkg/scheduler/scheduler.go: updateAssumptionsCache` and `singleTemplateAsComponents`).
    The estimators deduct these before answering, so that concurrent decisions do not hand the same capacity out
    twice. Pass them only when that gate is on.
    """

    namespace: str
    components: tuple[Component, ...]


class AssumedLoad(Sequence[AssumedWorkload]):
    """The workloads assumed on one cluster, with what they take together kept as sums.

    The summary estimates only need the sums (pods, and each resource's amount), which the assumption cache
    keeps as assumptions come and go, so a pass pays per cluster, not per assumption there. The workloads one
    by one (first-fit on resource models, the accurate estimators' `assumedWorkloads`) are carried only when
    the caller asked for them (`workloads`); reading them otherwise is an error, never an empty answer."""

    __slots__ = ("_count", "_workloads", "deducted", "pods", "set_deducted", "set_pods")

    def __init__(
        self,
        count: int,
        pods: int,
        deducted: Mapping[str, int],
        set_pods: int,
        set_deducted: Mapping[str, int],
        workloads: tuple[AssumedWorkload, ...] | None = None,
    ) -> None:
        self._count = count
        self.pods = pods
        self.deducted = tuple(deducted.items())
        """Added to allocating for replicas: cpu milli × replicas, others Value() × replicas, summed."""
        self.set_pods = set_pods
        self.set_deducted = tuple(set_deducted.items())
        """Deducted for component sets, in the component-set units (QUIRK), summed."""
        self._workloads = workloads

    @property
    def workloads(self) -> tuple[AssumedWorkload, ...]:
        if self._workloads is None:
            raise LookupError(f"the {self._count} workloads of this assumed load were not asked for")
        return self._workloads

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[AssumedWorkload]:
        return iter(self.workloads)

    @overload
    def __getitem__(self, index: int) -> AssumedWorkload: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[AssumedWorkload]: ...
    def __getitem__(self, index: int | slice) -> AssumedWorkload | Sequence[AssumedWorkload]:
        return self.workloads[index]

    def __repr__(self) -> str:
        return f"AssumedLoad(count={self._count}, pods={self.pods}, deducted={self.deducted})"


@dataclass(slots=True)
class LoadTotals:
    """Running sums of assumed profiles (the assumption cache keeps one per cluster)."""

    count: int = 0
    pods: int = 0
    deducted: dict[str, int] = field(default_factory=dict)
    set_pods: int = 0
    set_deducted: dict[str, int] = field(default_factory=dict)

    def add(self, profile: AssumedProfile, sign: int = 1) -> None:
        self.count += sign
        self.pods += sign * profile.pods
        self.set_pods += sign * profile.set_pods
        for totals, amounts in ((self.deducted, profile.deducted), (self.set_deducted, profile.set_deducted)):
            for name, amount in amounts:
                left = totals.get(name, 0) + sign * amount
                if left or sign > 0:
                    totals[name] = left
                else:
                    del totals[name]

    def remove(self, profile: AssumedProfile) -> None:
        self.add(profile, -1)

    def load(self, workloads: tuple[AssumedWorkload, ...] | None, without: AssumedProfile | None = None) -> AssumedLoad:
        """The sums now as an `AssumedLoad`, less `without` (a binding's own workload there)."""
        if without is None:
            return AssumedLoad(self.count, self.pods, self.deducted, self.set_pods, self.set_deducted, workloads)
        deducted = dict(self.deducted)
        set_deducted = dict(self.set_deducted)
        for name, amount in without.deducted:
            deducted[name] -= amount
        for name, amount in without.set_deducted:
            set_deducted[name] -= amount
        return AssumedLoad(
            self.count - 1, self.pods - without.pods, deducted, self.set_pods - without.set_pods, set_deducted,
            workloads,
        )


# --------------------------------------------------------------------------------------------- caches

_K = TypeVar("_K")
_V = TypeVar("_V")


class _IdentityCache(Generic[_K, _V]):
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


_MEMO_LIMIT = 64


@dataclass(slots=True)
class _ClusterProfile:
    """Everything a Cluster offers, as integers."""

    summary: ResourceSummary
    allowed_pods: int
    """allocatable − allocated − allocating pods, each rounded up first; may be ≤ 0."""
    available: dict[str, int]
    """Per resource in `allocatable`: allocatable − allocated − allocating, cpu in milli, others whole units."""
    set_available: dict[str, int]
    """The same, in the component-set units (see the QUIRK in `max_available_component_sets`)."""
    groups: NodeGroups | None
    """The virtual nodes, or None when the model path does not apply (no modelings, or the models are broken)."""
    replica_memo: dict[int, int] = field(default_factory=dict)
    set_memo: dict[int, int] = field(default_factory=dict)


def _value(resources: Mapping[str, Quantity], name: str) -> int:
    quantity = resources.get(name)
    return 0 if quantity is None else quantity.value()


def _set_units(quantity: Quantity) -> int:
    """Karmada's `quantityAsInt64`: milli-units for decimal quantities, whole units for binary (Ki, Mi, ...)."""
    return quantity.value() if quantity.binary else quantity.milli_value()


def _ceil(value: Fraction, scale: int = 1) -> int:
    """ceil(value × scale) in integers (Fraction multiplication is slow)."""
    return -((-value.numerator * scale) // value.denominator)


def _build_cluster_profile(cluster: Cluster) -> _ClusterProfile | None:
    summary = cluster.resource_summary
    if summary is None:
        return None
    allowed_pods = (
        _value(summary.allocatable, PODS) - _value(summary.allocated, PODS) - _value(summary.allocating, PODS)
    )
    available: dict[str, int] = {}
    set_available: dict[str, int] = {}
    for name, allocatable in summary.allocatable.items():
        amount = allocatable.amount
        used = summary.allocated.get(name)
        if used is not None:
            amount -= used.amount
        used = summary.allocating.get(name)
        if used is not None:
            amount -= used.amount
        whole, milli = _ceil(amount), _ceil(amount, 1000)
        available[name] = milli if name == CPU else whole
        # The difference keeps the format of the allocatable quantity.
        set_available[name] = whole if allocatable.binary else milli
    groups: NodeGroups | None = None
    if summary.allocatable_modelings:
        try:
            groups = node_groups(cluster)
        except ModelError:
            groups = None
    return _ClusterProfile(summary, allowed_pods, available, set_available, groups)



@dataclass(frozen=True, slots=True)
class _RequestProfile:
    """One replica's request, as integers."""

    summary_request: tuple[tuple[str, int], ...]
    """Resources with `Value() > 0`: cpu in milli, others whole units; sorted by name."""
    demand: Demand
    """The same request on a virtual node (modelled resources only)."""
    summary_key: int
    model_key: int
    """Memo keys: small ints shared by equal requests (tuples do not cache their hash; ints hash for free)."""


class EstimatorCache:
    """Integer forms of clusters, requests and assumed workloads, and memoised answers (see the module)."""

    __slots__ = ("_assumed", "_component_sets", "_key_ids", "_next_key", "_profiles", "_requests")

    def __init__(self) -> None:
        self._profiles: dict[str, tuple[Cluster, _ClusterProfile | None]] = {}
        self._requests: _IdentityCache[ReplicaRequirements, _RequestProfile] = _IdentityCache(
            self._build_request_profile, 4096
        )
        self._component_sets: _IdentityCache[Sequence[Component], _ComponentsProfile] = _IdentityCache(
            self._build_components_profile, 4096
        )
        self._assumed: _IdentityCache[AssumedWorkload, AssumedProfile] = _IdentityCache(
            assumed_profile, 16384
        )
        self._key_ids: dict[tuple[object, ...], int] = {}
        self._next_key = itertools.count()

    def profile(self, cluster: Cluster) -> _ClusterProfile | None:
        """What `cluster` offers; rebuilt when the cluster of that name is another object."""
        entry = self._profiles.get(cluster.name)
        if entry is not None and entry[0] is cluster:
            return entry[1]
        profile = _build_cluster_profile(cluster)
        self._profiles[cluster.name] = (cluster, profile)
        return profile

    def forget(self, name: str) -> None:
        """The cluster of that name changed or left."""
        self._profiles.pop(name, None)

    def request(self, requirements: ReplicaRequirements) -> _RequestProfile:
        return self._requests.get(requirements)

    def component_sets(self, components: Sequence[Component]) -> _ComponentsProfile:
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

    def _build_request_profile(self, requirements: ReplicaRequirements) -> _RequestProfile:
        summary_request = tuple(
            sorted(
                (name, q.milli_value() if name == CPU else q.value())
                for name, q in requirements.resource_request.items()
                if q.value() > 0
            )
        )
        demand = replica_demand(requirements.resource_request)
        return _RequestProfile(
            summary_request, demand, self._key_id(("s", summary_request)), self._key_id(("m", demand))
        )

    def _build_components_profile(self, components: Sequence[Component]) -> _ComponentsProfile:
        per_set: dict[str, int] = {}
        for component in components:
            for name, q in _component_request(component).items():
                per_set[name] = per_set.get(name, 0) + _set_units(q) * component.replicas
        pods_per_set = sum(c.replicas for c in components)
        demands = tuple(_set_demands(components))
        items = tuple(sorted(per_set.items()))
        return _ComponentsProfile(pods_per_set, items, demands, self._key_id(("c", pods_per_set, items, demands)))


# --------------------------------------------------------------------------------------------- replicas


def max_available_replicas(
    cluster: Cluster,
    requirements: ReplicaRequirements | None,
    assumed: Sequence[AssumedWorkload] = (),
    *,
    use_resource_models: bool = True,
    cache: EstimatorCache | None = None,
) -> int:
    """How many more replicas of `requirements` the cluster takes (Karmada's general `MaxAvailableReplicas`).

    1. No resource summary: 0.
    2. `assumed` workloads are added to `allocating` first: pods += replicas; cpu += milli × replicas; any other
       requested resource += Value() × replicas. Components with replicas ≤ 0 are skipped.
    3. `allowedPods` = allocatable − allocated − allocating pods (missing counts as 0); ≤ 0 gives 0.
    4. No requirements: `allowedPods`.
    5. Resource models (`use_resource_models`, the `CustomizedClusterResourceModeling` gate, on by default, and
       non-empty `allocatableModelings`): place the assumed workloads first-fit on the virtual nodes, then count
       how many 1-pod units still fit; the answer is `min(that, allowedPods)`, returned directly. When the models
       cannot be built (none defined, a negative count) fall through to 6.
    6. Cluster summary: for each requested resource with Value() > 0 — absent from allocatable gives 0; available
       (allocatable − allocated − allocating) ≤ 0 gives 0; otherwise `floor(available / request)`, cpu in
       milli-units, others in whole units. The answer is the minimum of those and `allowedPods`.

    The answer is capped at MaxInt32 (Go's int32 result). For many clusters at once use `estimate_replicas`.
    """
    cache = cache or EstimatorCache()
    profile = cache.profile(cluster)
    if profile is None:
        return 0
    if assumed:
        return _replicas_with_assumed(cache, profile, requirements, assumed, use_resource_models)
    return _replicas(profile, None if requirements is None else cache.request(requirements), use_resource_models)


def _replicas(profile: _ClusterProfile, request: _RequestProfile | None, use_resource_models: bool) -> int:
    """Steps 3-6 without assumed workloads, memoised per (cluster, request, gate)."""
    allowed = profile.allowed_pods
    if allowed <= 0:
        return 0
    if request is None:
        return allowed if allowed < MAX_INT32 else MAX_INT32
    groups = profile.groups if use_resource_models else None
    key = request.summary_key if groups is None else request.model_key
    memo = profile.replica_memo
    answer = memo.get(key)
    if answer is not None:
        return answer
    if groups is not None:
        answer = total_fit(groups, request.demand)
        answer = min(answer, allowed)
    else:
        answer = _summary_replicas(profile.available, request.summary_request, allowed)
    answer = min(answer, MAX_INT32)
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = answer
    return answer


def _summary_replicas(available: Mapping[str, int], request: tuple[tuple[str, int], ...], bound: int) -> int:
    for name, amount in request:
        left = available.get(name)
        if left is None or left <= 0:
            return 0
        fits = left // amount
        if fits < bound:  # noqa: PLR1730 (hot loop: no call)
            bound = fits
    return bound


def _component_request(component: Component) -> Mapping[str, Quantity]:
    requirements = component.requirements
    return {} if requirements is None else requirements.resource_request


@dataclass(frozen=True, slots=True)
class AssumedProfile:
    """What one assumed workload takes, as integers, in the units of each estimate."""

    pods: int
    """Pods deducted for replicas: components with replicas ≤ 0 are skipped."""
    deducted: tuple[tuple[str, int], ...]
    """Added to allocating for replicas: cpu milli × replicas, others Value() × replicas."""
    set_pods: int
    """Pods deducted for component sets: every component's replicas, as Karmada sums them."""
    set_deducted: tuple[tuple[str, int], ...]
    """Deducted for component sets, in the component-set units (QUIRK)."""
    demands: tuple[tuple[Demand, int], ...]
    """The workload as one set on the virtual nodes."""


def assumed_profile(workload: AssumedWorkload) -> AssumedProfile:
    """What `workload` takes, as integers (pure: the caches memoise it by identity)."""
    pods = 0
    deducted: dict[str, int] = {}
    set_deducted: dict[str, int] = {}
    for component in workload.components:
        replicas = component.replicas
        request = _component_request(component)
        for name, q in request.items():
            set_deducted[name] = set_deducted.get(name, 0) + _set_units(q) * replicas
        if replicas <= 0:
            continue
        pods += replicas
        for name, q in request.items():
            per_replica = q.milli_value() if name == CPU else q.value()
            deducted[name] = deducted.get(name, 0) + per_replica * replicas
    return AssumedProfile(
        pods=pods,
        deducted=tuple(deducted.items()),
        set_pods=sum(c.replicas for c in workload.components),
        set_deducted=tuple(set_deducted.items()),
        demands=tuple(_set_demands(workload.components)),
    )


def _place_assumed(cache: EstimatorCache, groups: NodeGroups, assumed: Sequence[AssumedWorkload]) -> FirstFit:
    """Virtual nodes after first-fit of each assumed workload as one set (what does not fit stays placed)."""
    simulator = FirstFit(groups)
    for workload in assumed.workloads if isinstance(assumed, AssumedLoad) else assumed:
        simulator.place_set(cache.assumed(workload).demands)
    return simulator


def _replicas_with_assumed(
    cache: EstimatorCache,
    profile: _ClusterProfile,
    requirements: ReplicaRequirements | None,
    assumed: Sequence[AssumedWorkload],
    use_resource_models: bool,
) -> int:
    """Steps 2-6 with assumed workloads: not memoised, they change from one decision to the next. The summary
    path deducts the workloads' sums (an `AssumedLoad` carries them); only resource models place them one by
    one."""
    load = _load_of(cache, assumed)
    allowed = profile.allowed_pods - load.pods
    if allowed <= 0:
        return 0
    if requirements is None:
        return min(allowed, MAX_INT32)
    request = cache.request(requirements)
    if use_resource_models and profile.groups is not None:
        return min(_place_assumed(cache, profile.groups, assumed).fit(request.demand), allowed, MAX_INT32)
    # Integers deducted from allocating commute with the rounding up: ceil(x − n) = ceil(x) − n.
    available = dict(profile.available)
    for name, amount in load.deducted:
        if name in available:
            available[name] -= amount
    return min(_summary_replicas(available, request.summary_request, allowed), MAX_INT32)


def _load_of(cache: EstimatorCache, assumed: Sequence[AssumedWorkload]) -> AssumedLoad:
    if isinstance(assumed, AssumedLoad):
        return assumed
    totals = LoadTotals()
    for workload in assumed:
        totals.add(cache.assumed(workload))
    return totals.load(None)


def _set_demands(components: Sequence[Component]) -> list[tuple[Demand, int]]:
    return [(replica_demand(_component_request(c)), c.replicas) for c in components]


# --------------------------------------------------------------------------------------------- component sets


@dataclass(frozen=True, slots=True)
class _ComponentsProfile:
    pods_per_set: int
    per_set: tuple[tuple[str, int], ...]
    """Σ request × replicas per resource, in the component-set units (QUIRK), sorted by name."""
    demands: tuple[tuple[Demand, int], ...]
    """Each component's per-pod demand on a virtual node, with its replicas, in the given order."""
    key: int
    """Memo key shared by equal component lists."""


def max_available_component_sets(
    cluster: Cluster,
    components: Sequence[Component],
    assumed: Sequence[AssumedWorkload] = (),
    *,
    use_resource_models: bool = True,
    cache: EstimatorCache | None = None,
) -> int:
    """How many more whole sets of `components` the cluster takes (Karmada's general `MaxAvailableComponentSets`).

    1. No summary, or `allowedPods` ≤ 0: 0.
    2. `available[r]` = allocatable − allocated − allocating, as an integer (units below).
    3. `assumed` workloads are deducted: pods and Σ request × replicas per resource; pods left ≤ 0 gives 0.
    4. `podsPerSet` = Σ component replicas; ≤ 0 gives the pods left.
    5. `podBound` = pods left // podsPerSet.
    6. `perSet[r]` = Σ request × replicas; when every value is 0, the answer is `podBound`.
    7. For each r with `perSet[r]` > 0: `available[r]` ≤ 0 (or absent) gives 0; else bound by
       `available[r] // perSet[r]`.
    8. With resource models (as for replicas), also bound by a first-fit simulation of whole sets over the
       virtual nodes, after placing the assumed workloads (here virtual-node units are consistent: cpu milli,
       others whole units).

    **QUIRK (reproduced on purpose, it changes decisions):** in steps 2, 3, 6 and 7 each quantity becomes an
    integer in the unit of *its own* format: decimal quantities (`4`, `500M`, `1G`, `250m`, `1e3`) in
    milli-units, binary ones (`1Gi`, `512Mi`) in whole units. `available` takes the format of the allocatable
    quantity. When the cluster reports memory in binary units (as kubelets do) and the request is decimal
    (`500M`), the request looks 1000× bigger than it is and the answer is usually 0; the reverse mix overstates
    capacity 1000×. cpu is consistent in practice since both sides are decimal. `max_available_replicas` has no
    such problem (it uses Value(), or milli for cpu).

    `components` should not change after the call (pass a tuple, as `Binding.components` is): its integer form
    is cached by identity.
    """
    cache = cache or EstimatorCache()
    profile = cache.profile(cluster)
    if profile is None or profile.allowed_pods <= 0:
        return 0
    sets = cache.component_sets(components)
    if assumed:
        return _sets_with_assumed(cache, profile, sets, assumed, use_resource_models)
    key = sets.key * 2 + int(use_resource_models)
    answer = profile.set_memo.get(key)
    if answer is None:
        answer = _sets(
            cache,
            profile,
            sets,
            allowed=profile.allowed_pods,
            available=profile.set_available,
            assumed=(),
            use_resource_models=use_resource_models,
        )
        if len(profile.set_memo) >= _MEMO_LIMIT:
            profile.set_memo.clear()
        profile.set_memo[key] = answer
    return answer


def _sets_with_assumed(
    cache: EstimatorCache,
    profile: _ClusterProfile,
    sets: _ComponentsProfile,
    assumed: Sequence[AssumedWorkload],
    use_resource_models: bool,
) -> int:
    load = _load_of(cache, assumed)
    allowed = profile.allowed_pods - load.set_pods
    available = dict(profile.set_available)
    for name, amount in load.set_deducted:
        available[name] = available.get(name, 0) - amount
    if allowed <= 0:
        return 0
    return _sets(
        cache, profile, sets, allowed=allowed, available=available, assumed=assumed,
        use_resource_models=use_resource_models,
    )


def _sets(
    cache: EstimatorCache,
    profile: _ClusterProfile,
    sets: _ComponentsProfile,
    *,
    allowed: int,
    available: Mapping[str, int],
    assumed: Sequence[AssumedWorkload],
    use_resource_models: bool,
) -> int:
    if sets.pods_per_set <= 0:
        return min(allowed, MAX_INT32)
    bound = min(allowed // sets.pods_per_set, MAX_INT32)
    if all(amount == 0 for _, amount in sets.per_set):
        return bound
    for name, amount in sets.per_set:
        if amount <= 0:
            continue
        left = available.get(name, 0)
        if left <= 0:
            return 0
        bound = min(bound, left // amount)
    if use_resource_models and profile.groups is not None:
        bound = _place_assumed(cache, profile.groups, assumed).count_sets(sets.demands, bound)
    return bound


# --------------------------------------------------------------------------------------------- many clusters


def estimate_replicas(
    clusters: Sequence[Cluster],
    requirements: ReplicaRequirements | None,
    assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    *,
    use_resource_models: bool = True,
    cache: EstimatorCache | None = None,
) -> dict[str, int]:
    """The general estimator's answer for every candidate, by cluster name (the input of `merge_estimates`).

    The same as `max_available_replicas` per cluster, with the per-request work done once.
    """
    cache = cache or EstimatorCache()
    request = None if requirements is None else cache.request(requirements)
    profile_of = cache.profile
    answers: dict[str, int] = {}
    for cluster in clusters:
        profile = profile_of(cluster)
        if profile is None:
            answers[cluster.name] = 0
            continue
        workloads = assumed.get(cluster.name) if assumed else None
        if workloads:
            answers[cluster.name] = _replicas_with_assumed(
                cache, profile, requirements, workloads, use_resource_models
            )
        else:
            answers[cluster.name] = _replicas(profile, request, use_resource_models)
    return answers


def estimate_component_sets(
    clusters: Sequence[Cluster],
    components: Sequence[Component],
    assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    *,
    use_resource_models: bool = True,
    cache: EstimatorCache | None = None,
) -> dict[str, int]:
    """`max_available_component_sets` for every candidate, by cluster name."""
    assumed = assumed or {}
    cache = cache or EstimatorCache()
    return {
        c.name: max_available_component_sets(
            c, components, assumed.get(c.name, ()), use_resource_models=use_resource_models, cache=cache
        )
        for c in clusters
    }
