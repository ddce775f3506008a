"""Spread-constraint selection: grouping, group scores, cluster and region selection (Karmada's
`pkg/scheduler/core/spreadconstraint/group_clusters.go: GroupClustersWithScore` and
`pkg/scheduler/core/spreadconstraint/select_clusters.go: SelectBestClusters`)."""

from .by_cluster import IGNORE_CAPACITY, select_by_cluster
from .by_region import select_by_region
from .groups import (
    WEIGHT_UNIT,
    ClusterGroup,
    ClusterGroups,
    group_clusters,
    group_score,
    spread_ignored_for_static_weight,
    topology_ignored,
)
from .select import capacity_ignored, every_candidate_selected, every_selected_note, select_best_clusters
from .select_groups import GroupOption, GroupPath, choose_path, feasible_paths, select_groups

__all__ = [
    "IGNORE_CAPACITY",
    "WEIGHT_UNIT",
    "ClusterGroup",
    "ClusterGroups",
    "GroupOption",
    "GroupPath",
    "capacity_ignored",
    "choose_path",
    "every_candidate_selected",
    "every_selected_note",
    "feasible_paths",
    "group_clusters",
    "group_score",
    "select_best_clusters",
    "select_by_cluster",
    "select_by_region",
    "select_groups",
    "spread_ignored_for_static_weight",
    "topology_ignored",
]
