"""The in-tree filter plugins of Karmada's `pkg/scheduler/framework/plugins/` (each plugin's `Filter`), with their
exact unschedulable reasons.

Each answers for the whole fleet at once (`filter_mask`, over the snapshot's columns); the per-cluster `filter` is the
contract of out-of-tree plugins only. They run in one fixed order (`registry.in_tree_plugins`); the first failing
one gives a cluster's reason in the FitError
message (Karmada runs them in random map order, since `pkg/scheduler/framework/runtime/framework.go: NewFramework`
ranges over the registry map, which makes that message unpredictable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from ..model import Cluster, Toleration
from .fleet import FleetColumns, Indices
from .plugins import AttemptContext, BatchScore, FilterMask, FleetScore, MaskFilter, ScorePlugin

API_REASON = "cluster(s) did not have the API resource"
AFFINITY_REASON = "cluster(s) did not match the placement cluster affinity constraint"
EVICTION_REASON = "cluster(s) is in the process of eviction"
SPREAD_REASONS: Mapping[str, str] = MappingProxyType({
    "provider": "cluster(s) did not have provider property",
    "region": "cluster(s) did not have region property",
    "zone": "cluster(s) did not have zones property",
})


class APIEnablement(MaskFilter):
    """The cluster serves the resource's group/version and kind (already-targeted clusters pass).

    `pkg/scheduler/framework/plugins/apienablement/api_enablement.go: APIEnablement.Filter`."""

    name = "APIEnablement"

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        resource = ctx.binding.resource
        enabled = fleet.api_enabled(resource.api_version, resource.kind)
        return FilterMask(~enabled & ~fleet.targeted(ctx.targets), API_REASON)


class TaintToleration(MaskFilter):
    """The first NoSchedule/NoExecute taint no placement toleration tolerates fails the cluster.

    `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go: TaintToleration.Filter`."""

    name = "TaintToleration"

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        tolerations = _tolerations(ctx)
        untolerated = fleet.untolerated(tolerations, lambda cluster: _untolerated_taint(tolerations, cluster))
        return FilterMask(untolerated.mask & ~fleet.targeted(ctx.targets), untolerated.reasons.__getitem__)


def _tolerations(ctx: AttemptContext) -> tuple[Toleration, ...]:
    placement = ctx.binding.placement
    return placement.cluster_tolerations if placement is not None else ()


def _untolerated_taint(tolerations: tuple[Toleration, ...], cluster: Cluster) -> str | None:
    """The reason for the cluster's first NoSchedule/NoExecute taint no toleration tolerates, or None."""
    for taint in cluster.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return f"cluster(s) had untolerated taint {{{taint}}}"
    return None


class ClusterAffinityFilter(ScorePlugin, BatchScore, FleetScore, MaskFilter):
    """The cluster matches clusterAffinity, or the observed term's affinity or overflow affinities.

    `pkg/scheduler/framework/plugins/clusteraffinity/cluster_affinity.go: ClusterAffinity.Filter`."""

    name = "ClusterAffinity"

    def score(self, ctx: AttemptContext, cluster: Cluster) -> int:
        return 0

    def score_many(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        return {}

    def score_fleet(self, ctx: AttemptContext, fleet: FleetColumns, feasible: Indices) -> Mapping[str, int]:
        return {}

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        if not ctx.affinities:
            return FilterMask(fleet.nothing, AFFINITY_REASON)
        return FilterMask(~fleet.matching(ctx.affinities), AFFINITY_REASON)


class SpreadConstraintFilter(MaskFilter):
    """A spread by provider, region or zone needs the cluster to have that property.

    `pkg/scheduler/framework/plugins/spreadconstraint/spread_constraint.go: SpreadConstraint.Filter`."""

    name = "SpreadConstraint"

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        placement = ctx.binding.placement
        fields = [] if placement is None else list(dict.fromkeys(
            c.spread_by_field for c in placement.spread_constraints if c.spread_by_field in SPREAD_REASONS))
        failed = fleet.nothing
        for field in fields:
            failed = failed | fleet.without[field]

        def reason(index: int) -> str:
            return next(SPREAD_REASONS[f] for f in fields if fleet.without[f][index])

        return FilterMask(failed, reason)


class ClusterEviction(MaskFilter):
    """A cluster the binding is being evicted from is not a candidate (targeted or not).

    `pkg/scheduler/framework/plugins/clustereviction/cluster_eviction.go: ClusterEviction.Filter`."""

    name = "ClusterEviction"

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        evicted = ctx.binding.eviction_clusters
        return FilterMask(fleet.of_names(evicted) if evicted else fleet.nothing, EVICTION_REASON)
