"""Selection by the `region` spread constraint (Karmada's
`pkg/scheduler/core/spreadconstraint/select_clusters_by_region.go: selectBestClustersByRegion`, with
`selectRegions`).

Regions are chosen by the group search; each chosen region gives its best cluster, and the rest of the
`cluster` constraint's maxGroups is filled with the best remaining clusters of those regions. Capacity is
not checked here.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from typing import cast

import numpy as np

from ...model import SpreadConstraint
from ..candidates import ClusterDetail
from ..errors import PlacementError, no_checkpoint
from .groups import ClusterGroup, Members
from .select_groups import GroupOption, select_groups

FEWER_REGIONS_THAN_MIN_GROUPS = "the number of feasible region is less than spreadConstraint.MinGroups"
NO_FEASIBLE_REGIONS = "the number of clusters is less than the cluster spreadConstraint.MinGroups"

ABSENT_CONSTRAINT = SpreadConstraint(min_groups=0, max_groups=0)
"""What a missing `cluster` constraint counts as: Go's zero value, so minGroups 0 and maxGroups 0."""


def choose_regions(
    regions: Mapping[str, ClusterGroup],
    region: SpreadConstraint,
    cluster: SpreadConstraint,
    trace: list[str] | None = None,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> list[ClusterGroup]:
    """The chosen regions, heaviest first; the cluster constraint's minGroups is the clusters to reach.

    QUIRK kept from Karmada: a region constraint without maxGroups (0) never has a feasible combination.
    """
    if len(regions) < region.min_groups:
        raise PlacementError(FEWER_REGIONS_THAN_MIN_GROUPS)
    options = [GroupOption(g.name, len(g.clusters), g.score) for g in regions.values()]
    chosen = select_groups(options, region.min_groups, region.max_groups, cluster.min_groups, trace, checkpoint)
    if not chosen:
        raise PlacementError(NO_FEASIBLE_REGIONS)
    return [regions[option.name] for option in chosen]


def select_by_region(
    regions: Mapping[str, ClusterGroup],
    region: SpreadConstraint,
    cluster: SpreadConstraint | None,
    trace: list[str] | None = None,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> list[ClusterDetail]:
    """One best cluster per chosen region, then the best of the rest up to the cluster maxGroups.

    Every chosen region keeps its cluster even when that exceeds maxGroups (without a cluster
    constraint, exactly one cluster per region).
    """
    cluster = cluster if cluster is not None else ABSENT_CONSTRAINT
    chosen = choose_regions(regions, region, cluster, trace, checkpoint)
    selected = [group.clusters[0] for group in chosen]
    rest = sum(len(group.clusters) - 1 for group in chosen)
    need_count = min(len(selected) + rest, cluster.max_groups)
    fill = need_count - len(selected)
    if fill > 0:
        selected.extend(_best_rest(chosen, fill))
    if trace is not None:
        best = ", ".join(f"{c.name} ({g.name})" for c, g in zip(selected, chosen, strict=False))
        more = (f"then {max(fill, 0)} more of the {rest} left in them, up to the cluster spread's maxGroups"
                f" ({cluster.max_groups})") if rest else "none other in them"
        trace.append(f"chosen regions {', '.join(g.name for g in chosen)}: the best cluster of each ({best}), {more}")
    return selected


def _best_rest(chosen: Sequence[ClusterGroup], count: int) -> list[ClusterDetail]:
    """The best `count` clusters after each region's first, in the order of `sort_candidates`.

    Each region's clusters are already in that order, so merging them lazily computes few sort keys; regions
    whose members are positions in one ordered list are merged by position, which is that order.
    """
    rests = [group.clusters[1:] for group in chosen]
    if rests and all(isinstance(rest, Members) for rest in rests):
        members = cast(list[Members], rests)
        base = members[0].base
        if all(rest.base is base for rest in members):
            positions = np.sort(np.concatenate([rest.position_column for rest in members]))[:count]
            return [base[position] for position in positions.tolist()]
    merged = heapq.merge(*rests, key=ClusterDetail.sort_key)
    return list(islice(merged, count))
