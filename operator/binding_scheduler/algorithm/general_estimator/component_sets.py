"""How many more whole sets of a multi-template workload's components a cluster takes, for one cluster or many
(the general estimator's `MaxAvailableComponentSets`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...model import Cluster, Component
from .assumed import AssumedWorkload
from .cache import EstimatorCache
from .deduction import load_of, place_assumed
from .profiles import MEMO_LIMIT, ClusterProfile, ComponentsProfile
from .units import MAX_INT32


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
    return _memoised_sets(cache, profile, sets, use_resource_models)


def _memoised_sets(
    cache: EstimatorCache, profile: ClusterProfile, sets: ComponentsProfile, use_resource_models: bool
) -> int:
    """Steps 4-8 without assumed workloads, memoised per (cluster, components, gate)."""
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
        if len(profile.set_memo) >= MEMO_LIMIT:
            profile.set_memo.clear()
        profile.set_memo[key] = answer
    return answer


def _sets_with_assumed(
    cache: EstimatorCache,
    profile: ClusterProfile,
    sets: ComponentsProfile,
    assumed: Sequence[AssumedWorkload],
    use_resource_models: bool,
) -> int:
    load = load_of(cache, assumed)
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
    profile: ClusterProfile,
    sets: ComponentsProfile,
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
        bound = place_assumed(cache, profile.groups, assumed).count_sets(sets.demands, bound)
    return bound


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
