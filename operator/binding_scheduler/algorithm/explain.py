"""Every verdict for every cluster, not only the first: what `explain` shows when a binding lands unexpectedly."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model import Binding, Cluster, SpreadField, TargetCluster
from .candidates import ClusterDetail
from .plugins import AttemptContext, FilterMask
from .registry import PluginSet


@dataclass(slots=True)
class ClusterVerdicts:
    """One cluster in one attempt: each filter's verdict (None = passed), each score, each estimate."""

    cluster: Cluster
    filters: list[tuple[str, str | None]] = field(default_factory=list)
    scores: list[tuple[str, int | str]] = field(default_factory=list)
    estimates: dict[str, int | str] = field(default_factory=dict)
    detail: ClusterDetail | None = None
    selected: bool = False
    replicas: int | None = None

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def feasible(self) -> bool:
        return not self.cluster.deleting and all(reason is None for _, reason in self.filters)


FleetVerdict = tuple[str, FilterMask | str]
"""One filter's verdict over the whole fleet (its mask), or why the plugin failed."""


def fleet_filter_verdicts(ctx: AttemptContext, plugins: PluginSet) -> list[FleetVerdict]:
    """Every filter over every cluster of the snapshot, through the runners a pass uses (no short circuit); a
    plugin that raises is reported with its error."""
    fleet = ctx.snapshot.columns
    everything = ~fleet.nothing
    verdicts: list[FleetVerdict] = []
    for name, runner in plugins.filter_runners:
        try:
            verdicts.append((name, runner(ctx, fleet, everything)))
        except Exception as error:
            verdicts.append((name, f"plugin failed: {error}"))
    return verdicts


def cluster_filter_verdicts(verdicts: Sequence[FleetVerdict], index: int) -> list[tuple[str, str | None]]:
    """Each filter's reason for the cluster at fleet `index` (None: it passes)."""
    found: list[tuple[str, str | None]] = []
    for name, verdict in verdicts:
        if isinstance(verdict, str):
            found.append((name, verdict))
        else:
            found.append((name, verdict.reason_at(index) if verdict.failed[index] else None))
    return found


def all_scores(ctx: AttemptContext, plugins: PluginSet, cluster: Cluster) -> list[tuple[str, int | str]]:
    """Every score; a plugin that raises is reported with its error (the pass itself fails on it)."""
    scores: list[tuple[str, int | str]] = []
    for plugin in plugins.scores:
        try:
            scores.append((plugin.name, plugin.score(ctx, cluster)))
        except Exception as error:
            scores.append((plugin.name, f"plugin failed: {error}"))
    return scores


def cluster_verdicts(ctx: AttemptContext, plugins: PluginSet) -> list[ClusterVerdicts]:
    """Verdicts for every cluster of the snapshot, in name order."""
    verdicts = []
    by_fleet = fleet_filter_verdicts(ctx, plugins)
    index = ctx.snapshot.columns.index
    for cluster in sorted(ctx.snapshot.clusters, key=lambda c: c.name):
        entry = ClusterVerdicts(cluster=cluster, filters=cluster_filter_verdicts(by_fleet, index[cluster.name]))
        if entry.feasible:
            entry.scores = all_scores(ctx, plugins, cluster)
        verdicts.append(entry)
    return verdicts


def mark_result(
    verdicts: list[ClusterVerdicts], selected: list[ClusterDetail], result: list[TargetCluster]
) -> None:
    chosen = {d.name for d in selected}
    assigned = {t.name: t.replicas for t in result}
    for entry in verdicts:
        entry.selected = entry.name in chosen
        entry.replicas = assigned.get(entry.name)


def why_not_selected(binding: Binding, cluster: Cluster, selected: Sequence[ClusterDetail]) -> str:
    """Why a feasible cluster was left out of the selection, by the spread constraint that decided."""
    placement = binding.placement
    region = placement.spread(SpreadField.REGION) if placement is not None else None
    if region is not None:
        chosen = {detail.cluster.region for detail in selected}
        if cluster.region not in chosen:
            return f"its region {cluster.region or '(none)'} was not chosen"
        return "its region was chosen, but the cluster spread's maxGroups was reached with better clusters"
    constraint = placement.spread(SpreadField.CLUSTER) if placement is not None else None
    if constraint is not None:
        return (f"not among the best {constraint.max_groups} by score (the cluster spread's maxGroups), after "
                "swaps for room")
    return "the selection stopped before it"
