"""How many more replicas of one request a cluster takes, for one cluster or many (the general estimator's
`MaxAvailableReplicas`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...model import Cluster, ReplicaRequirements
from ..resource_models import total_fit
from .assumed import AssumedWorkload
from .cache import EstimatorCache
from .deduction import load_of, place_assumed
from .profiles import MEMO_LIMIT, ClusterProfile, RequestProfile
from .units import MAX_INT32


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


def _replicas(profile: ClusterProfile, request: RequestProfile | None, use_resource_models: bool) -> int:
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
    if len(memo) >= MEMO_LIMIT:
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


def _replicas_with_assumed(
    cache: EstimatorCache,
    profile: ClusterProfile,
    requirements: ReplicaRequirements | None,
    assumed: Sequence[AssumedWorkload],
    use_resource_models: bool,
) -> int:
    """Steps 2-6 with assumed workloads: not memoised, they change from one decision to the next. The summary
    path deducts the workloads' sums (an `AssumedLoad` carries them); only resource models place them one by
    one."""
    load = load_of(cache, assumed)
    allowed = profile.allowed_pods - load.pods
    if allowed <= 0:
        return 0
    if requirements is None:
        return min(allowed, MAX_INT32)
    request = cache.request(requirements)
    if use_resource_models and profile.groups is not None:
        return min(place_assumed(cache, profile.groups, assumed).fit(request.demand), allowed, MAX_INT32)
    # Integers deducted from allocating commute with the rounding up: ceil(x − n) = ceil(x) − n.
    available = dict(profile.available)
    for name, amount in load.deducted:
        if name in available:
            available[name] -= amount
    return min(_summary_replicas(available, request.summary_request, allowed), MAX_INT32)


def estimate_replicas(
    clusters: Sequence[Cluster],
    requirements: ReplicaRequirements | None,
    assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    *,
    use_resource_models: bool = True,
    cache: EstimatorCache | None = None,
) -> dict[str, int]:
    """The general estimator's answer for every candidate, by cluster name (the input of `schedule.general_column`).

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
