"""The plugin registry and `--plugins` (Karmada's pkg/scheduler/framework/runtime/registry.go: Registry.Filter;
TestRegistry_Filter)."""

from __future__ import annotations

import pytest

from binding_scheduler.algorithm.plugins import AttemptContext, PluginError
from binding_scheduler.algorithm.registry import build_plugins, enabled_names, registry
from binding_scheduler.model import Cluster

ALL = ["APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterLocality", "ClusterEviction"]


@pytest.mark.parametrize(
    ("spec", "enabled"),
    [
        (["*"], ALL),
        (["*", "-ClusterLocality"], [n for n in ALL if n != "ClusterLocality"]),
        (["-ClusterLocality", "*"], [n for n in ALL if n != "ClusterLocality"]),
        (["-ClusterLocality"], []),
        (["ClusterAffinity", "TaintToleration"], ["TaintToleration", "ClusterAffinity"]),
        (["ClusterAffinity", "-ClusterAffinity"], []),
        (["-ClusterAffinity", "ClusterAffinity"], ["ClusterAffinity"]),
        (["ClusterAffinity", "-TaintToleration"], ["ClusterAffinity"]),
        (["Unknown"], []),
        (["*", "Unknown", "-Unknown"], ALL),
        ([], []),
    ],
)
def test_plugins_flag(spec: list[str], enabled: list[str]) -> None:
    assert enabled_names(spec, ALL) == enabled


def test_default_is_every_plugin() -> None:
    assert set(build_plugins().names) == set(ALL)


def test_filters_and_scores_are_told_apart_by_their_methods() -> None:
    plugins = build_plugins()
    assert [p.name for p in plugins.filters] == [
        "APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterEviction",
    ]
    assert [p.name for p in plugins.scores] == ["ClusterAffinity", "ClusterLocality"]


def test_lone_removal_leaves_no_plugins() -> None:
    plugins = build_plugins(["-ClusterLocality"])
    assert (plugins.filters, plugins.scores) == ((), ())


class OnlyEurope:
    name = "OnlyEurope"

    def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
        return None if cluster.region.startswith("eu-") else "cluster(s) are outside Europe"


def test_out_of_tree_plugins_follow_in_tree_ones() -> None:
    plugins = build_plugins(extra=[OnlyEurope()])
    assert [p.name for p in plugins.filters][-1] == "OnlyEurope"


def test_out_of_tree_plugins_obey_flag() -> None:
    assert "OnlyEurope" not in build_plugins(["*", "-OnlyEurope"], extra=[OnlyEurope()]).names
    assert build_plugins(["OnlyEurope"], extra=[OnlyEurope()]).names == ("OnlyEurope",)


def test_duplicate_name_is_error() -> None:
    class Impostor:
        name = "TaintToleration"

        def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
            return None

    with pytest.raises(PluginError) as caught:
        registry([Impostor()])
    assert str(caught.value) == "plugin 'TaintToleration' is registered twice"


def test_plugin_needs_name() -> None:
    class Nameless:
        def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
            return None

    with pytest.raises(PluginError, match="has no name"):
        registry([Nameless()])


def test_plugin_needs_extension_point() -> None:
    class Idle:
        name = "Idle"

    with pytest.raises(PluginError) as caught:
        registry([Idle()])
    assert str(caught.value) == (
        "plugin 'Idle' implements no extension point (a method among filter, filter_mask, score, estimate, select, "
        "assign, reserve, bound)"
    )
