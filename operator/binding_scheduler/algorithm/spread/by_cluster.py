"""Selection by the `cluster` spread constraint alone (Karmada's
`pkg/scheduler/core/spreadconstraint/select_clusters_by_cluster.go: selectBestClustersByCluster`, with
`selectClustersByAvailableResource` for the capacity swap)."""

from __future__ import annotations

from collections.abc import Sequence

from ...model import SpreadConstraint
from ..candidates import ClusterDetail
from ..errors import NotEnoughResources, PlacementError

IGNORE_CAPACITY = -1
"""`need_replicas` meaning "capacity does not matter" (Karmada's InvalidReplicas)."""

FEWER_CLUSTERS_THAN_MIN_GROUPS = "the number of feasible clusters is less than spreadConstraint.MinGroups"


def not_enough_resource(need_count: int) -> str:
    return f"no enough resource when selecting {need_count} clusters"


def _total_available(clusters: Sequence[ClusterDetail]) -> int:
    return sum(c.available for c in clusters)


def _roomiest_above(reserve: Sequence[ClusterDetail], floor: int) -> int | None:
    """Index of the reserve cluster with the most available replicas, strictly above `floor`; first wins ties."""
    best: int | None = None
    most = floor
    for index, cluster in enumerate(reserve):
        if cluster.available > most:
            best, most = index, cluster.available
    return best


def swap_for_capacity(
    selected: list[ClusterDetail],
    reserve: list[ClusterDetail],
    need_replicas: int,
    trace: list[str] | None = None,
) -> bool:
    """Trade the weakest selected clusters for roomier reserve ones until `need_replicas` fit.

    Positions are visited from the last (least preferred) backwards, each once. A swapped-out cluster
    goes into the reserve where the swapped-in one was, so it may come back at an earlier position.
    Both lists are changed in place; the answer is whether the selection now has room enough.
    """
    position = len(selected) - 1
    while position >= 0 and _total_available(selected) < need_replicas:
        index = _roomiest_above(reserve, selected[position].available)
        if index is not None:
            outgoing = selected[position]
            selected[position], reserve[index] = reserve[index], outgoing
            if trace is not None:
                trace.append(
                    f"not room enough for {need_replicas} replicas: {outgoing.name} (room for {outgoing.available})"
                    f" gives its place to {selected[position].name} (room for {selected[position].available})"
                )
        position -= 1
    return _total_available(selected) >= need_replicas


def select_by_cluster(
    constraint: SpreadConstraint,
    ordered: Sequence[ClusterDetail],
    need_replicas: int,
    trace: list[str] | None = None,
) -> list[ClusterDetail]:
    """The best `maxGroups` clusters, traded for roomier ones when capacity counts.

    QUIRK kept from Karmada: maxGroups 0 (unset) selects no cluster at all; with capacity counted that
    is the error `no enough resource when selecting 0 clusters`.
    """
    if len(ordered) < constraint.min_groups:
        raise PlacementError(FEWER_CLUSTERS_THAN_MIN_GROUPS)
    need_count = min(len(ordered), constraint.max_groups)
    if trace is not None:
        trace.append(
            f"cluster spread: the best {need_count} of {len(ordered)} clusters by score"
            f" (minGroups {constraint.min_groups}, maxGroups {constraint.max_groups})"
        )
    if need_replicas == IGNORE_CAPACITY:
        return list(ordered[:need_count])
    selected = list(ordered[:need_count])
    reserve = list(ordered[need_count:])
    if not swap_for_capacity(selected, reserve, need_replicas, trace) or not selected:
        raise NotEnoughResources(not_enough_resource(need_count))
    return selected
