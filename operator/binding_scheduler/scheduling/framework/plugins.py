"""Out-of-tree Python plugins, found through the `binding_scheduler.plugins` entry-point group."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points

from ...algorithm.plugins import PluginError
from ...algorithm.registry import PluginSet, build_plugins

ENTRY_POINT_GROUP = "binding_scheduler.plugins"
logger = logging.getLogger(__name__)


def _instantiate(entry: EntryPoint) -> object:
    try:
        loaded = entry.load()
    except Exception as error:
        raise PluginError(f"plugin entry point {entry.name!r} ({entry.value}) failed to load: {error}") from error
    if isinstance(loaded, type) or (getattr(loaded, "name", None) is None and callable(loaded)):
        try:
            return loaded()
        except Exception as error:
            raise PluginError(
                f"plugin entry point {entry.name!r} ({entry.value}) failed to construct: {type(error).__name__}: "
                f"{error}"
            ) from error
    return loaded


def _wanted(entry: EntryPoint, spec: Sequence[str] | None) -> bool:
    """Is the plugin this entry point names enabled by `spec`? Entry points are named after their plugin, so
    one left out (`-Name`, or not listed without `*`) is not even imported."""
    if spec is None:
        return True
    if f"-{entry.name}" in spec:
        return False
    return "*" in spec or entry.name in spec


def discover_plugins(group: str = ENTRY_POINT_GROUP, spec: Sequence[str] | None = None) -> list[object]:
    """Every plugin other packages registered (that `spec` enables); an entry point may name a plugin object,
    class or factory."""
    found = []
    for entry in sorted(entry_points(group=group), key=lambda e: e.name):
        if not _wanted(entry, spec):
            logger.info("scheduling plugin %s is disabled: not loaded", entry.name)
            continue
        plugin = _instantiate(entry)
        logger.info("loaded scheduling plugin %s from %s", getattr(plugin, "name", "?"), entry.value)
        found.append(plugin)
    return found


def parse_plugin_spec(spec: str | Sequence[str]) -> list[str]:
    """`"*,-ClusterLocality"` or `["*", "-ClusterLocality"]` into the list Karmada's `--plugins` takes."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    return [item.strip() for item in items if item.strip()]


class UnknownPlugins(PluginError):
    """`plugins` names a plugin that does not exist (and unknown names are not allowed); `field` is where."""

    def __init__(self, field: str, plugins: PluginSet) -> None:
        names = ", ".join(repr(name) for name in plugins.unknown)
        one = len(plugins.unknown) == 1
        super().__init__(
            f"names {names}, which {'is' if one else 'are'} no plugin (known: {', '.join(plugins.known)}); Karmada "
            f"ignores {'such a name' if one else 'such names'}, so a misspelt '-Name' leaves that plugin on and a "
            "list of misspelt names leaves every filter off: fix the spelling, or set allowUnknownPlugins "
            "(--allow-unknown-plugins) to ignore unknown names as Karmada does")
        self.field = field
        self.message = str(self)


def load_plugins(
    spec: str | Sequence[str] = "*",
    extra: Sequence[object] = (),
    *,
    workload_affinity: bool = False,
    allow_unknown: bool = False,
) -> PluginSet:
    """The plugins `spec` enables. A name no plugin has raises `UnknownPlugins`; with `allow_unknown` it is left
    in `unknown` and ignored, as Karmada ignores it (silently: a typo in `-Name` would leave that plugin on, in a
    list without `*` every filter off; the callers say so). `workload_affinity`: gate `WorkloadAffinity`, which
    registers Karmada's two workload affinity filters."""
    enabled = parse_plugin_spec(spec)
    installed = [entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)]
    plugins = build_plugins(enabled, [*discover_plugins(spec=enabled), *extra], also_known=installed,
                            workload_affinity=workload_affinity)
    if plugins.unknown and not allow_unknown:
        raise UnknownPlugins("spec.plugins", plugins)
    return plugins


def plugin_warnings(source: str, plugins: PluginSet) -> list[str]:
    """What to tell the user about the plugins `source` (`--plugins`, `spec.plugins`) chose: names no plugin has
    (ignored, with the names there are), and a choice that leaves no filter on. That is what Karmada's syntax
    means for a list without `*` (each name enables one plugin), so it stands, but it lets every cluster pass."""
    lines = [f"{source} names {name!r}, which is no plugin: ignored (known: {', '.join(plugins.known)})"
             for name in plugins.unknown]
    if not plugins.filters:
        lines.append(f"{source} enables no filter plugin: every cluster passes the filters ('*' enables every "
                     "plugin, '-Name' then disables one)")
    return lines
