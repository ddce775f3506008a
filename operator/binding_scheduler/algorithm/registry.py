"""The plugin registry and Karmada's `--plugins` syntax.

Karmada's: `pkg/scheduler/framework/plugins/registry.go: NewInTreeRegistry` and
`pkg/scheduler/framework/runtime/registry.go: Registry.Filter` (and `Registry.Merge` for out-of-tree plugins).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Cluster
from .filters import APIEnablement, ClusterAffinityFilter, ClusterEviction, SpreadConstraintFilter, TaintToleration
from .fleet import FleetColumns, Indices, Mask
from .plugins import (
    EXTENSION_METHODS,
    AssignPlugin,
    AttemptContext,
    BatchFilter,
    BatchScore,
    BindPlugin,
    EstimatePlugin,
    FilterMask,
    FilterPlugin,
    FleetScore,
    MaskFilter,
    PluginError,
    ReservePlugin,
    ScorePlugin,
    SelectPlugin,
)
from .scores import ClusterLocality
from .workload_affinity import WorkloadAffinityFilter, WorkloadAntiAffinityFilter

Filter = FilterPlugin | MaskFilter
"""A filter plugin: per cluster (`filter`, the out-of-tree contract) or for the whole fleet (`filter_mask`, every
in-tree filter)."""

InTreePlugin = MaskFilter | ScorePlugin
"""Karmada's in-tree plugins filter, score, or both; each class declares the Protocols it implements, so the
type checker holds it to their signatures (Karmada asserts `var _ framework.FilterPlugin = &APIEnablement{}`)."""


def in_tree_plugins(*, workload_affinity: bool = False) -> list[InTreePlugin]:
    """Karmada's in-tree plugins, in the fixed order their filters run; with gate `WorkloadAffinity`, also its
    two filters (Karmada registers them only then)."""
    plugins: list[InTreePlugin] = [
        APIEnablement(),
        TaintToleration(),
        ClusterAffinityFilter(),
        SpreadConstraintFilter(),
        ClusterLocality(),
        ClusterEviction(),
    ]
    if workload_affinity:
        plugins += [WorkloadAffinityFilter(), WorkloadAntiAffinityFilter()]
    return plugins


FilterRunner = Callable[[AttemptContext, FleetColumns, Mask], FilterMask]
"""A filter over the clusters still feasible (`remaining`, a mask over the fleet): the ones it fails among them."""
ScoreRunner = Callable[[AttemptContext, FleetColumns, Indices], Mapping[str, int]]
"""A score over the feasible clusters (fleet indices, ascending): the non-zero scores by name."""


def _filter_runner(plugin: Filter) -> FilterRunner:
    if isinstance(plugin, MaskFilter):
        verdict = plugin.filter_mask

        def masked(ctx: AttemptContext, fleet: FleetColumns, remaining: Mask) -> FilterMask:
            answer = verdict(ctx, fleet)
            if answer.failed is fleet.nothing:
                return answer
            return FilterMask(answer.failed & remaining, answer.reason)

        return masked
    if isinstance(plugin, BatchFilter):
        many = plugin.filter_many
    else:
        def many(ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, str]:
            return {c.name: reason for c in clusters if (reason := plugin.filter(ctx, c)) is not None}

    def by_cluster(ctx: AttemptContext, fleet: FleetColumns, remaining: Mask) -> FilterMask:
        failures = many(ctx, fleet.clusters_at(np.flatnonzero(remaining).tolist()))
        names = fleet.names
        return FilterMask(fleet.of_names(failures) & remaining, lambda index: failures[names[index]])

    return by_cluster


def _score_runner(plugin: ScorePlugin) -> ScoreRunner:
    if isinstance(plugin, FleetScore):
        return plugin.score_fleet
    if isinstance(plugin, BatchScore):
        many = plugin.score_many

        def batch(ctx: AttemptContext, fleet: FleetColumns, feasible: Indices) -> Mapping[str, int]:
            return many(ctx, fleet.clusters_at(feasible.tolist()))

        return batch

    def run(ctx: AttemptContext, fleet: FleetColumns, feasible: Indices) -> Mapping[str, int]:
        return {c.name: plugin.score(ctx, c) for c in fleet.clusters_at(feasible.tolist())}

    return run


@dataclass(frozen=True, slots=True)
class PluginSet:
    """The enabled plugins of each extension point: filters in run order, scores, estimators, at most one
    selector and one assigner (None: Karmada's own), reservers and binders.

    `filter_runners` answer for the whole fleet as a mask (the plugin's `filter_mask`, else its batch method or
    a loop over its per-cluster one, over the clusters still feasible) and `score_runners` for many clusters at
    once; both are resolved once here rather than on every pass.
    """

    filters: tuple[Filter, ...]
    scores: tuple[ScorePlugin, ...]
    unknown: tuple[str, ...] = ()
    estimators: tuple[EstimatePlugin, ...] = ()
    selector: SelectPlugin | None = None
    assigner: AssignPlugin | None = None
    reservers: tuple[ReservePlugin, ...] = ()
    binders: tuple[BindPlugin, ...] = ()
    known: tuple[str, ...] = ()
    """Every plugin name there is, enabled or not (in-tree, then out-of-tree); `unknown` holds the names
    `--plugins` gave that none has: ignored, as Karmada ignores them (a likely typo)."""
    filter_runners: tuple[tuple[str, FilterRunner], ...] = field(init=False, repr=False, compare=False)
    score_runners: tuple[tuple[str, ScoreRunner], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "filter_runners", tuple((p.name, _filter_runner(p)) for p in self.filters))
        object.__setattr__(self, "score_runners", tuple((p.name, _score_runner(p)) for p in self.scores))

    @property
    def names(self) -> tuple[str, ...]:
        names = [p.name for p in self.filters] + [p.name for p in self.scores]
        names += [p.name for p in self.estimators] + [p.name for p in self.reservers] + [p.name for p in self.binders]
        names += [p.name for p in (self.selector, self.assigner) if p is not None]
        return tuple(dict.fromkeys(names))


def plugin_name(plugin: object) -> str:
    name = getattr(plugin, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginError(f"plugin {plugin!r} has no name")
    if not any(callable(getattr(plugin, method, None)) for method in EXTENSION_METHODS):
        methods = ", ".join(EXTENSION_METHODS)
        raise PluginError(f"plugin {name!r} implements no extension point (a method among {methods})")
    if callable(getattr(plugin, "reserve", None)) != callable(getattr(plugin, "unreserve", None)):
        raise PluginError(f"plugin {name!r} must implement both reserve and unreserve")
    return name


def registry(extra: Sequence[object] = (), *, workload_affinity: bool = False) -> dict[str, object]:
    """In-tree plugins followed by out-of-tree ones; a duplicate name is an error."""
    plugins: dict[str, object] = {}
    for plugin in (*in_tree_plugins(workload_affinity=workload_affinity), *extra):
        name = plugin_name(plugin)
        if name in plugins:
            raise PluginError(f"plugin {name!r} is registered twice")
        plugins[name] = plugin
    return plugins


def enabled_names(spec: Sequence[str], available: Sequence[str]) -> list[str]:
    """Apply `--plugins`: `*` enables all, `name` enables one, `-name` removes one (only once something is
    enabled), unknown names are ignored. The result keeps the registry's order."""
    known = set(available)
    enabled: set[str] = set(available) if "*" in spec else set()
    for entry in spec:
        if entry == "*":
            continue
        if entry.startswith("-"):
            if enabled:
                enabled.discard(entry[1:])
        elif entry in known:
            enabled.add(entry)
    return [name for name in available if name in enabled]


def unknown_names(spec: Sequence[str], known: Sequence[str]) -> list[str]:
    """The names in `spec` (`name` or `-name`) that are not in `known`, in spec order, once each."""
    names = [entry.removeprefix("-") for entry in spec if entry != "*"]
    return list(dict.fromkeys(name for name in names if name not in set(known)))


def build_plugins(
    spec: Sequence[str] = ("*",),
    extra: Sequence[object] = (),
    *,
    also_known: Sequence[str] = (),
    workload_affinity: bool = False,
) -> PluginSet:
    """The plugins `spec` enables. `also_known`: names of plugins that exist but were not loaded (out-of-tree
    ones `spec` leaves out), which are therefore not unknown. `workload_affinity`: gate `WorkloadAffinity`."""
    plugins = registry(extra, workload_affinity=workload_affinity)
    chosen = [plugins[name] for name in enabled_names(spec, list(plugins))]
    return PluginSet(
        filters=tuple(p for p in chosen if isinstance(p, FilterPlugin | MaskFilter)),
        scores=tuple(p for p in chosen if isinstance(p, ScorePlugin)),
        unknown=tuple(unknown_names(spec, [*plugins, *also_known])),
        estimators=tuple(p for p in chosen if isinstance(p, EstimatePlugin)),
        selector=_one("select", [p for p in chosen if isinstance(p, SelectPlugin)]),
        assigner=_one("assign", [p for p in chosen if isinstance(p, AssignPlugin)]),
        reservers=tuple(p for p in chosen if isinstance(p, ReservePlugin)),
        binders=tuple(p for p in chosen if isinstance(p, BindPlugin)),
        known=tuple(dict.fromkeys([*plugins, *also_known])),
    )


def _one(method: str, plugins: Sequence[SelectPlugin] | Sequence[AssignPlugin]) -> Any:
    """Select and Assign have one implementation: Karmada's, or one enabled plugin's."""
    if len(plugins) > 1:
        names = ", ".join(p.name for p in plugins)
        raise PluginError(f"plugins {names} all implement {method}: enable at most one of them")
    return plugins[0] if plugins else None
