"""Out-of-tree Python plugins, found through the `binding_scheduler.plugins` entry-point group."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points

from ..algorithm.plugins import PluginError
from ..algorithm.registry import PluginSet, build_plugins

ENTRY_POINT_GROUP = "binding_scheduler.plugins"
logger = logging.getLogger(__name__)


def _instantiate(entry: EntryPoint) -> object:
    try:
        loaded = entry.load()
    except Exception as error:
        raise PluginError(f"plugin entry point {entry.name!r} ({entry.value}) failed to load: {error}") from error
    if isinstance(loaded, type):
        return loaded()
    if getattr(loaded, "name", None) is None and callable(loaded):
        return loaded()
    return loaded


def discover_plugins(group: str = ENTRY_POINT_GROUP) -> list[object]:
    """Every plugin other packages registered; an entry point may name a plugin object, class or factory."""
    found = []
    for entry in sorted(entry_points(group=group), key=lambda e: e.name):
        plugin = _instantiate(entry)
        logger.info("loaded scheduling plugin %s from %s", getattr(plugin, "name", "?"), entry.value)
        found.append(plugin)
    return found


def parse_plugin_spec(spec: str | Sequence[str]) -> list[str]:
    """`"*,-ClusterLocality"` or `["*", "-ClusterLocality"]` into the list Karmada's `--plugins` takes."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    return [item.strip() for item in items if item.strip()]


def load_plugins(spec: str | Sequence[str] = "*", extra: Sequence[object] = ()) -> PluginSet:
    return build_plugins(parse_plugin_spec(spec), [*discover_plugins(), *extra])
