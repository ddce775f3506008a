"""Dynamic division: Aggregated and DynamicWeight, in Fresh or Steady mode (Karmada's
`pkg/scheduler/core/assignment.go: assignByDynamicStrategy`, with `dynamicFreshScale`, `dynamicScaleDown`,
`dynamicScaleUp` and `dynamicDivideReplicas` of `pkg/scheduler/core/division_algorithm.go`).

Sort stability: Karmada sorts the weights descending with Go's `sort.Sort`, an insertion sort (so stable)
for up to 12 elements and pattern-defeating quicksort (not stable) above. We always sort stably, which keeps
equal weights in their input order: identical to Go for <= 12 clusters and a deterministic, documented choice
where Go's order of equal weights is implementation-defined (Aggregated with more than 12 candidates).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from ..model import TargetCluster
from .candidates import ClusterDetail, OrderedCandidates, allocatable_of, names_of
from .errors import UnschedulableError
from .webster import ARRAYS_FROM, VOTES_LIMIT, allocate_webster, allocate_webster_array

SCALE_UP = "failed to scale up"
SCALE_DOWN = "failed to scale down"
FRESH_SCALE = "failed to do fresh scale"


@dataclass(frozen=True, slots=True)
class DynamicPlan:
    """What one dynamic division works from: the target, the ordered weights and the placement it adds to."""

    target: int
    weights: list[tuple[str, int]]
    scheduled: list[TargetCluster]
    error_prefix: str


def scheduled_clusters(candidates: Sequence[ClusterDetail], previous: Sequence[TargetCluster]) -> list[TargetCluster]:
    """The previous `spec.clusters` entries (in their order) that are still candidates.

    Replicas on clusters that are no longer candidates are forgotten, so they count as scale-up.
    """
    if not previous:
        return []
    names = set(names_of(candidates))
    return [target for target in previous if target.name in names]


def _descending(weights: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """By weight, largest first; `reverse=True` keeps Python's sort stable (equal weights keep input order)."""
    return sorted(weights, key=itemgetter(1), reverse=True)


def plan_dynamic(
    candidates: Sequence[ClusterDetail], replicas: int, previous: Sequence[TargetCluster], *, fresh: bool
) -> DynamicPlan | list[TargetCluster]:
    """Pick the mode; a Steady binding already at its replica count gets its placement back unchanged.

    Reads the candidates' names and allocatable replicas only (from their columns when they hold them)."""
    scheduled = scheduled_clusters(candidates, previous)
    if fresh:
        held = {target.name: target.replicas for target in scheduled}
        weights = [(name, allocatable + held.get(name, 0))
                   for name, allocatable in zip(names_of(candidates), allocatable_of(candidates), strict=True)]
        return DynamicPlan(replicas, _descending(weights), [], FRESH_SCALE)
    assigned = sum(target.replicas for target in scheduled)
    if assigned > replicas:
        # Scale down rebalances among the previous clusters only: a first schedule over them.
        weights = [(target.name, target.replicas) for target in scheduled]
        return DynamicPlan(replicas, _descending(weights), [], SCALE_DOWN)
    if assigned < replicas:
        weights = list(zip(names_of(candidates), allocatable_of(candidates), strict=True))
        return DynamicPlan(replicas - assigned, _descending(weights), scheduled, SCALE_UP)
    return scheduled


def aggregate(weights: list[tuple[str, int]], scheduled: Sequence[TargetCluster], target: int) -> list[tuple[str, int]]:
    """Previously used clusters first (relative order kept), then the shortest prefix that holds `target`."""
    used = {t.name for t in scheduled if t.replicas > 0}
    ordered = [w for w in weights if w[0] in used] + [w for w in weights if w[0] not in used]
    total = 0
    for index, (_, weight) in enumerate(ordered):
        total += weight
        if total >= target:
            return ordered[: index + 1]
    return ordered


def merge(added: Sequence[tuple[str, int]], scheduled: Sequence[TargetCluster]) -> list[TargetCluster]:
    """Add the new allocation to the previous one, per name; entries that end at 0 are left out here already.

    Names only in the previous list follow the new ones. Karmada appends them in Go map order (random); we
    append them by name ascending, so the same inputs always give the same list.
    """
    held = {target.name: target.replicas for target in scheduled}
    merged = []
    for name, seats in added:
        total = seats + held.pop(name, 0) if held else seats
        if total > 0:
            merged.append(TargetCluster(name, total))
    merged.extend(TargetCluster(name, held[name]) for name in sorted(held) if held[name] > 0)
    return merged


def _not_enough(available: int) -> UnschedulableError:
    return UnschedulableError(f"Clusters available replicas {available} are not enough to schedule.")


def divide(plan: DynamicPlan, *, aggregated: bool, descending: bool) -> list[TargetCluster]:
    """Karmada's `dynamicDivideReplicas`: check capacity, cut for Aggregated, Webster, merge."""
    available = sum(weight for _, weight in plan.weights)
    if available < plan.target:
        raise _not_enough(available)
    weights = aggregate(plan.weights, plan.scheduled, plan.target) if aggregated else plan.weights
    return merge(allocate_webster(plan.target, weights, descending=descending), plan.scheduled)


def assign_dynamic(
    candidates: Sequence[ClusterDetail],
    replicas: int,
    previous: Sequence[TargetCluster],
    *,
    aggregated: bool,
    fresh: bool,
    descending: bool,
) -> list[TargetCluster]:
    """Aggregated or DynamicWeight over the candidates; errors carry the scale-direction prefix."""
    if not aggregated and isinstance(candidates, OrderedCandidates) and len(candidates) >= ARRAYS_FROM:
        divided = _divide_on_columns(candidates, replicas, previous, fresh=fresh, descending=descending)
        if divided is not None:
            return divided
    plan = plan_dynamic(candidates, replicas, previous, fresh=fresh)
    if isinstance(plan, list):
        return plan
    try:
        return divide(plan, aggregated=aggregated, descending=descending)
    except UnschedulableError as error:
        raise error.wrapped(plan.error_prefix) from error


def _divide_on_columns(
    candidates: OrderedCandidates, replicas: int, previous: Sequence[TargetCluster], *, fresh: bool, descending: bool
) -> list[TargetCluster] | None:
    """DynamicWeight (not Aggregated), fresh or scaling up, over candidates held as columns: Webster over the
    allocatable column in name order, with no pair per candidate and no selection order. The division's result
    comes out in name order whatever the weights' order (only Aggregated reads that), and the previous clusters
    kept are all candidates, so the merge is a sum in name order. None where it does not apply (scale down,
    steady, no columns)."""
    columns = candidates.by_name_with_allocatable()
    if columns is None:
        return None
    at, allocatable = columns
    names, positions = candidates.fleet_names, at.tolist()
    held = np.zeros(len(positions), dtype=np.int64)
    assigned = 0
    for entry in previous:  # `scheduled_clusters`, found by name; the last entry of a name is the one held
        k = bisect_left(positions, entry.name, key=names.__getitem__)
        if k < len(positions) and names[positions[k]] == entry.name:
            held[k] = entry.replicas
            assigned += entry.replicas
    if not fresh and assigned >= replicas:
        return None
    votes, target, prefix = (allocatable + held, replicas, FRESH_SCALE) if fresh else (
        allocatable, replicas - assigned, SCALE_UP)
    available = int(votes.sum())
    if available < target:
        raise _not_enough(available).wrapped(prefix)
    if available >= VOTES_LIMIT:
        return None
    total = allocate_webster_array(target, votes, descending=descending)
    if not fresh:
        total += held
    kept = np.flatnonzero(total)
    return [TargetCluster(names[positions[k]], count) for k, count in zip(kept.tolist(), total[kept].tolist(),
                                                                         strict=True)]
