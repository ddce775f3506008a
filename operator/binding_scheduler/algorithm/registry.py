"""The plugin registry and Karmada's `--plugins` syntax (reference 2.2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .filters import APIEnablement, ClusterAffinityFilter, ClusterEviction, SpreadConstraintFilter, TaintToleration
from .plugins import FilterPlugin, PluginError, ScorePlugin
from .scores import ClusterLocality


def in_tree_plugins() -> list[object]:
    """Karmada's in-tree plugins, in the fixed order their filters run."""
    return [
        APIEnablement(),
        TaintToleration(),
        ClusterAffinityFilter(),
        SpreadConstraintFilter(),
        ClusterLocality(),
        ClusterEviction(),
    ]


@dataclass(frozen=True, slots=True)
class PluginSet:
    """The enabled plugins: filters in run order, and scores."""

    filters: tuple[FilterPlugin, ...]
    scores: tuple[ScorePlugin, ...]

    @property
    def names(self) -> tuple[str, ...]:
        names = [p.name for p in self.filters] + [p.name for p in self.scores]
        return tuple(dict.fromkeys(names))


def plugin_name(plugin: object) -> str:
    name = getattr(plugin, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginError(f"plugin {plugin!r} has no name")
    if not isinstance(plugin, FilterPlugin | ScorePlugin):
        raise PluginError(f"plugin {name!r} has neither a filter nor a score method")
    return name


def registry(extra: Sequence[object] = ()) -> dict[str, object]:
    """In-tree plugins followed by out-of-tree ones; a duplicate name is an error."""
    plugins: dict[str, object] = {}
    for plugin in (*in_tree_plugins(), *extra):
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


def build_plugins(spec: Sequence[str] = ("*",), extra: Sequence[object] = ()) -> PluginSet:
    plugins = registry(extra)
    chosen = [plugins[name] for name in enabled_names(spec, list(plugins))]
    return PluginSet(
        filters=tuple(p for p in chosen if isinstance(p, FilterPlugin)),
        scores=tuple(p for p in chosen if isinstance(p, ScorePlugin)),
    )
