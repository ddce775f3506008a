"""The in-tree score plugins.

Karmada's: `pkg/scheduler/framework/plugins/clusterlocality/cluster_locality.go: ClusterLocality.Score`, and
`pkg/scheduler/framework/plugins/clusteraffinity/cluster_affinity.go: ClusterAffinity.Score` (always 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..model import Cluster
from .fleet import FleetColumns, Indices
from .plugins import AttemptContext, BatchScore, FleetScore, ScorePlugin

MAX_CLUSTER_SCORE = 100


class ClusterLocality(ScorePlugin, BatchScore, FleetScore):
    """100 for a cluster the binding already targets: stickiness to current placements."""

    name = "ClusterLocality"

    def score(self, ctx: AttemptContext, cluster: Cluster) -> int:
        return MAX_CLUSTER_SCORE if cluster.name in ctx.targets else 0

    def score_many(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        if not ctx.targets:
            return {}
        return {c.name: MAX_CLUSTER_SCORE for c in clusters if c.name in ctx.targets}

    def score_fleet(self, ctx: AttemptContext, fleet: FleetColumns, feasible: Indices) -> Mapping[str, int]:
        """Looks up the binding's few targets among the feasible clusters, not every feasible cluster."""
        if not ctx.targets:
            return {}
        return dict.fromkeys(fleet.positions_in(feasible, ctx.targets), MAX_CLUSTER_SCORE)
