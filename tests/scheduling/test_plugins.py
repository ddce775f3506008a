"""Out-of-tree Python plugins from the `binding_scheduler.plugins` entry-point group."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from binding_scheduler.algorithm.errors import FitError, SchedulingError, condition_for
from binding_scheduler.algorithm.plugins import AttemptContext, PluginError
from binding_scheduler.model import Cluster
from binding_scheduler.scheduling.framework import plugins as plugin_loader
from binding_scheduler.scheduling.framework.plugins import (
    ENTRY_POINT_GROUP,
    discover_plugins,
    load_plugins,
    parse_plugin_spec,
)
from testsupport.builders import make_binding, make_cluster, placement, schedule, snapshot


class OnlyEurope:
    name = "OnlyEurope"

    def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
        return None if cluster.region.startswith("eu-") else "cluster(s) are outside Europe"


class NamedLikeInTree:
    name = "ClusterAffinity"

    def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
        return None


class Broken:
    name = "Broken"

    def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
        raise KeyError("region-table")


ONLY_EUROPE_INSTANCE = OnlyEurope()


def make_only_europe() -> OnlyEurope:
    return OnlyEurope()


def entry(name: str, attribute: str) -> EntryPoint:
    return EntryPoint(name, f"{__name__}:{attribute}", ENTRY_POINT_GROUP)


def install(monkeypatch: pytest.MonkeyPatch, *entries: EntryPoint) -> list[str]:
    """Make the loader see `entries`; returns the groups it asked for."""
    asked: list[str] = []

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        asked.append(group)
        return list(entries)

    monkeypatch.setattr(plugin_loader, "entry_points", fake_entry_points)
    return asked


def test_loader_asks_plugin_group(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = install(monkeypatch)
    assert discover_plugins() == []
    assert asked == ["binding_scheduler.plugins"]


def test_class_entry_point_is_instantiated(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("only-europe", "OnlyEurope"))
    (plugin,) = discover_plugins()
    assert isinstance(plugin, OnlyEurope)


def test_object_entry_point_is_used_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("only-europe", "ONLY_EUROPE_INSTANCE"))
    assert discover_plugins() == [ONLY_EUROPE_INSTANCE]


def test_factory_entry_point_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("only-europe", "make_only_europe"))
    (plugin,) = discover_plugins()
    assert isinstance(plugin, OnlyEurope)


def test_plugin_from_entry_point_filters_clusters(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("only-europe", "OnlyEurope"))
    plugins = load_plugins("*")
    assert "OnlyEurope" in plugins.names
    rb = make_binding(placement=placement())
    clusters = snapshot(make_cluster("paris", region="eu-west"), make_cluster("ohio", region="us-east"))
    assert [t.name for t in schedule(rb, clusters, plugins)] == ["paris"]
    with pytest.raises(FitError) as caught:
        schedule(rb, snapshot(make_cluster("ohio", region="us-east")), plugins)
    assert str(caught.value) == "0/1 clusters are available: 1 cluster(s) are outside Europe."


def test_entry_point_plugin_can_be_disabled_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("only-europe", "OnlyEurope"))
    assert "OnlyEurope" not in load_plugins("*,-OnlyEurope").names


def test_entry_point_plugin_with_in_tree_name_is_error(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("impostor", "NamedLikeInTree"))
    with pytest.raises(PluginError) as caught:
        load_plugins("*")
    assert str(caught.value) == "plugin 'ClusterAffinity' is registered twice"


def test_two_entry_points_with_one_plugin_name_are_error(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("a", "OnlyEurope"), entry("b", "make_only_europe"))
    with pytest.raises(PluginError) as caught:
        load_plugins("*")
    assert str(caught.value) == "plugin 'OnlyEurope' is registered twice"


def test_entry_point_that_fails_to_load_is_plugin_error(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("broken", "DoesNotExist"))
    with pytest.raises(PluginError) as caught:
        discover_plugins()
    assert str(caught.value).startswith(f"plugin entry point 'broken' ({__name__}:DoesNotExist) failed to load: ")


def test_plugins_flag_text_is_split_on_commas() -> None:
    assert parse_plugin_spec(" *, -ClusterLocality ,,") == ["*", "-ClusterLocality"]
    assert parse_plugin_spec(["*", " -ClusterLocality "]) == ["*", "-ClusterLocality"]


def test_filter_plugin_that_raises_is_scheduling_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("broken", "Broken"))
    plugins = load_plugins("*")
    with pytest.raises(SchedulingError) as caught:
        schedule(make_binding(placement=placement()), snapshot(make_cluster("ohio")), plugins)
    assert str(caught.value) == "failed to filter clusters: plugin \"Broken\" failed with: 'region-table'"
    assert condition_for(caught.value).reason == "SchedulerError"


class ExplodingConstructor:
    name = "Exploding"

    def __init__(self) -> None:
        raise RuntimeError("needs a config file")


def test_plugin_disabled_by_name_is_not_even_constructed(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("Exploding", "ExplodingConstructor"), entry("OnlyEurope", "OnlyEurope"))
    assert "OnlyEurope" in load_plugins("*,-Exploding").names
    assert "OnlyEurope" not in load_plugins("TaintToleration").names


def test_raising_plugin_constructor_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, entry("Exploding", "ExplodingConstructor"))
    with pytest.raises(PluginError) as caught:
        load_plugins("*")
    assert str(caught.value) == (
        f"plugin entry point 'Exploding' ({__name__}:ExplodingConstructor) failed to construct: "
        "RuntimeError: needs a config file"
    )
