"""The spread-constraint selection step: which candidate clusters go on to replica assignment (Karmada's
`pkg/scheduler/core/spreadconstraint/select_clusters.go: SelectBestClusters`).

The caller passes candidates in any order, already carrying score and estimates, and prefixes any error
with `failed to select clusters: `.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...model import Binding, Placement, ReplicaSchedulingType, SpreadField
from ..candidates import ClusterDetail
from ..errors import PlacementError, no_checkpoint
from .by_cluster import IGNORE_CAPACITY, select_by_cluster
from .by_region import select_by_region
from .groups import WEIGHT_UNIT, ClusterGroup, OrderedClusters, group_ordered, spread_ignored_for_static_weight

UNSUPPORTED_CONSTRAINTS = "just support cluster and region spread constraint"


def capacity_ignored(placement: Placement) -> bool:
    """Duplicated placements (or none at all) put every replica everywhere: capacity does not pick clusters."""
    strategy = placement.replica_scheduling
    return strategy is None or strategy.type is ReplicaSchedulingType.DUPLICATED


def every_candidate_selected(placement: Placement) -> str | None:
    """Why selection keeps every candidate, best first (no spread constraint applies), or None when one does."""
    if not placement.spread_constraints:
        return "no spread constraints"
    if spread_ignored_for_static_weight(placement):
        return "static weights decide"
    return None


def every_selected_note(reason: str, count: int) -> str:
    """The trace's line when selection keeps every candidate."""
    clusters = f"all {count} feasible clusters" if count != 1 else "the one feasible cluster"
    return f"{reason}: {clusters} selected"


def select_best_clusters(
    binding: Binding,
    candidates: Sequence[ClusterDetail],
    need_replicas: int,
    trace: list[str] | None = None,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> list[ClusterDetail]:
    """Karmada's `SelectBestClusters`: the clusters the spread constraints allow, in selection order.

    With no constraint to apply every candidate is returned, best first. A `region` constraint drives
    region selection, else a `cluster` constraint drives cluster selection; any other constraint set
    (spreadByLabel, zone or provider only) is a `SchedulingError`. `need_replicas` is what the selection
    must be able to hold (cluster selection only); it is ignored for Duplicated placements. Human-readable
    notes on each step are appended to `trace` when one is given.
    """
    return select_ordered(binding, OrderedClusters.of_details(candidates), need_replicas, trace, checkpoint)


def select_ordered(
    binding: Binding,
    ordered: OrderedClusters,
    need_replicas: int,
    trace: list[str] | None = None,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> list[ClusterDetail]:
    """`select_best_clusters` over candidates already in order (their objects read only where selection looks)."""
    placement = binding.placement or Placement()
    reason = every_candidate_selected(placement)
    if reason is not None:
        if trace is not None:
            trace.append(every_selected_note(reason, len(ordered.clusters)))
        return list(ordered.clusters)
    if capacity_ignored(placement):
        need_replicas = IGNORE_CAPACITY
    groups = group_ordered(binding, ordered)
    if trace is not None:
        duplicated = placement.scheduling_type is ReplicaSchedulingType.DUPLICATED
        _trace_groups(trace, groups.zones, "zone", duplicated)
        _trace_groups(trace, groups.regions, "region", duplicated)
        _trace_groups(trace, groups.providers, "provider", duplicated)
    region = placement.spread(SpreadField.REGION)
    cluster = placement.spread(SpreadField.CLUSTER)
    if region is not None:
        selected = select_by_region(groups.regions, region, cluster, trace, checkpoint)
    elif cluster is not None:
        selected = select_by_cluster(cluster, groups.clusters, need_replicas, trace)
    else:
        raise PlacementError(UNSUPPORTED_CONSTRAINTS)
    if trace is not None:
        trace.append(f"selected: {', '.join(c.name for c in selected) or 'no cluster'}")
    return selected


def _trace_groups(trace: list[str], groups: Mapping[str, ClusterGroup], kind: str, duplicated: bool) -> None:
    for group in groups.values():
        count = len(group.clusters)
        trace.append(
            f"{kind} {group.name}: {count} cluster{'' if count == 1 else 's'}"
            f" ({', '.join(c.name for c in group.clusters)}), room for {group.available} replicas,"
            f" score {group.score} ({score_parts(group.score, duplicated)})"
        )


def score_parts(score: int, duplicated: bool) -> str:
    """A group score in the terms it is made of (Karmada's `calcGroupScore`): a count in thousands, then the mean
    of its clusters' scores (0 to 100)."""
    units, mean = divmod(score, WEIGHT_UNIT)
    counted = ("clusters that can hold every replica" if duplicated
               else "replicas of its share (the replicas over minGroups) it can take")
    return f"{units} {counted} x {WEIGHT_UNIT} + its clusters' mean score {mean}"
