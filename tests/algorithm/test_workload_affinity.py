"""The WorkloadAffinity and WorkloadAntiAffinity filters (gate `WorkloadAffinity`; Karmada's
pkg/scheduler/framework/plugins/workloadaffinity/workload_affinity.go and
pkg/scheduler/framework/plugins/workloadantiaffinity/workload_anti_affinity.go: FilterWithContext), against a plain
groups view: which other ResourceBindings of the group constrain a binding, and the reasons Karmada gives."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from binding_scheduler.algorithm.errors import FitError
from binding_scheduler.algorithm.plugins import AttemptContext, GroupMember
from binding_scheduler.algorithm.registry import build_plugins, in_tree_plugins, plugin_name
from binding_scheduler.algorithm.workload_affinity import (
    AFFINITY_REASON,
    ANTI_AFFINITY_REASON,
    NO_INDEX_REASON,
    VERSION_REASON,
    WorkloadAffinityFilter,
    WorkloadAntiAffinityFilter,
    generated_binding_name,
)
from binding_scheduler.model import Binding, parse_binding
from binding_scheduler.scheduling.framework.runner import Framework
from testsupport.builders import DUPLICATED, binding, placement, snapshot

FLEET = snapshot("m1", "m2", "m3")
AFFINITY = WorkloadAffinityFilter()
ANTI = WorkloadAntiAffinityFilter()


class Groups:
    """A groups view holding the members it is given (the index keeps them by group, across namespaces)."""

    def __init__(self, *members: GroupMember) -> None:
        self.members = members

    def affinity_members(self, group: str) -> Sequence[GroupMember]:
        return [m for m in self.members if m.affinity_group == group]

    def anti_affinity_members(self, group: str) -> Sequence[GroupMember]:
        return [m for m in self.members if m.anti_affinity_group == group]


def member(name: str, *clusters: str, group: str = "g", anti: str = "", namespace: str = "default",
           comparable: bool = True) -> GroupMember:
    return GroupMember(namespace, name, group, anti, frozenset(clusters), comparable)


def anti_member(name: str, *clusters: str, group: str = "g", namespace: str = "default") -> GroupMember:
    return GroupMember(namespace, name, "", group, frozenset(clusters))


def grouped(name: str = "web", *, affinity: str = "", anti: str = "", **kwargs: Any) -> Binding:
    """A ResourceBinding named `name` whose resource is `web` (its generated name is web-deployment)."""
    doc = binding(name, **kwargs)
    doc["spec"]["resource"]["name"] = "web"
    doc["spec"]["workloadAffinityGroups"] = {"affinityGroup": affinity, "antiAffinityGroup": anti}
    return parse_binding(doc)


def failures(plugin: WorkloadAffinityFilter | WorkloadAntiAffinityFilter, rb: Binding,
             groups: Groups | None) -> dict[str, str]:
    columns = FLEET.columns
    mask = plugin.filter_mask(AttemptContext.of(rb, FLEET, groups), columns)
    return {columns.names[i]: mask.reason_at(i) for i in mask.where}


# --- WorkloadAffinity -------------------------------------------------------------------------------------------


def test_groupless_binding_passes_everywhere() -> None:
    assert failures(AFFINITY, grouped("web-deployment", affinity=""), None) == {}


def test_first_member_of_group_goes_anywhere() -> None:
    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), Groups()) == {}


def test_cluster_must_be_targeted_by_every_other_placed_member() -> None:
    groups = Groups(member("a", "m1", "m2"), member("b", "m2", "m3"))
    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), groups) == {
        "m1": AFFINITY_REASON, "m3": AFFINITY_REASON,
    }


def test_clusters_binding_already_targets_pass_affinity_filter() -> None:
    groups = Groups(member("a", "m2"))
    assert failures(AFFINITY, grouped("web-deployment", affinity="g", clusters=["m1"]), groups) == {
        "m3": AFFINITY_REASON,
    }


def test_members_in_other_namespaces_are_skipped() -> None:
    groups = Groups(member("a", "m2", namespace="shop"))
    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), groups) == {}


def test_members_without_clusters_are_skipped() -> None:
    groups = Groups(member("a"), member("b", "m3"))
    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), groups) == {
        "m1": AFFINITY_REASON, "m2": AFFINITY_REASON,
    }


def test_member_whose_copy_is_in_another_group_is_skipped() -> None:
    moved = member("a", "m2")._replace(affinity_group="h")

    class Stale(Groups):  # the index found it under g (its stored copy), its newer copy says h
        def affinity_members(self, group: str) -> Sequence[GroupMember]:
            return [moved]

    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), Stale()) == {}


def test_binding_itself_is_skipped_by_generated_name() -> None:
    groups = Groups(member("web-deployment", "m2"))
    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), groups) == {}


def test_differently_named_binding_uses_own_copy() -> None:
    """Karmada recognises itself only by the generated name: `web` (resource web, a Deployment) is not
    `web-deployment`, so its own placement on m2 keeps it off m1 and m3."""
    groups = Groups(member("web", "m2"))
    assert failures(AFFINITY, grouped("web", affinity="g"), groups) == {"m1": AFFINITY_REASON, "m3": AFFINITY_REASON}


def test_namespace_compared_is_resources() -> None:
    doc = binding("web-clusterrole", cluster_scoped=True)
    doc["spec"]["resource"].update(name="web", namespace="default")
    doc["spec"]["workloadAffinityGroups"] = {"affinityGroup": "g"}
    groups = Groups(member("a", "m2"))
    assert failures(AFFINITY, parse_binding(doc), groups) == {"m1": AFFINITY_REASON, "m3": AFFINITY_REASON}


def test_no_groups_view_fails_untargeted() -> None:
    assert failures(AFFINITY, grouped("web-deployment", affinity="g", clusters=["m1"]), None) == {
        "m2": NO_INDEX_REASON, "m3": NO_INDEX_REASON,
    }


def test_incomparable_member_fails_untargeted_clusters() -> None:
    groups = Groups(member("a", "m1", "m2", "m3", comparable=False))
    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), groups) == dict.fromkeys(
        ["m1", "m2", "m3"], VERSION_REASON)


def test_first_member_in_order_gives_reason() -> None:
    groups = Groups(member("a", "m2"), member("b", "m1", comparable=False))
    assert failures(AFFINITY, grouped("web-deployment", affinity="g"), groups) == {
        "m1": AFFINITY_REASON, "m2": VERSION_REASON, "m3": AFFINITY_REASON,
    }


# --- WorkloadAntiAffinity ---------------------------------------------------------------------------------------


def test_anti_affinity_excludes_clusters_another_member_targets() -> None:
    groups = Groups(anti_member("a", "m1"), anti_member("b", "m3"))
    assert failures(ANTI, grouped("web-deployment", anti="g"), groups) == {
        "m1": ANTI_AFFINITY_REASON, "m3": ANTI_AFFINITY_REASON,
    }


def test_anti_affinity_passes_own_targets() -> None:
    groups = Groups(anti_member("a", "m1", "m2"))
    assert failures(ANTI, grouped("web-deployment", anti="g", clusters=["m1"]), groups) == {
        "m2": ANTI_AFFINITY_REASON,
    }


def test_anti_affinity_skips_other_namespaces_and_binding_itself() -> None:
    groups = Groups(anti_member("a", "m1", namespace="shop"), anti_member("web-deployment", "m2"))
    assert failures(ANTI, grouped("web-deployment", anti="g"), groups) == {}


def test_binding_without_anti_affinity_group_passes_everywhere() -> None:
    groups = Groups(anti_member("a", "m1"))
    assert failures(ANTI, grouped("web-deployment", affinity="g"), groups) == {}


# --- the generated name -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "name", "generated"), [
    ("Deployment", "web", "web-deployment"),
    ("ClusterRole", "system:Admin", "system.admin-clusterrole"),
])
def test_generated_binding_name_is_karmadas(kind: str, name: str, generated: str) -> None:
    assert generated_binding_name(kind, name) == generated


# --- through the framework --------------------------------------------------------------------------------------


def decide(rb: Binding, groups: Groups) -> list[str]:
    framework = Framework(build_plugins(workload_affinity=True), workload_groups=groups)
    return [t.name for t in asyncio.run(framework.attempt(rb, FLEET))]


def test_fit_error_names_affinity_reason() -> None:
    rb = grouped("web-deployment", affinity="g", placement=placement(affinity={"clusterNames": ["m1", "m3"]},
                                                                      scheduling=DUPLICATED))
    with pytest.raises(FitError) as raised:
        decide(rb, Groups(member("a", "m2")))
    assert str(raised.value) == (
        "0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, "
        "2 ResourceBinding with the same affinity group does not target this cluster."
    )


def test_fit_error_names_anti_affinity_reason() -> None:
    rb = grouped("web-deployment", anti="g", placement=placement(scheduling=DUPLICATED))
    with pytest.raises(FitError) as raised:
        decide(rb, Groups(anti_member("a", "m1", "m2"), anti_member("b", "m3")))
    assert str(raised.value) == (
        "0/3 clusters are available: 3 cluster already has workload with the same anti-affinity group."
    )


def test_duplicated_binding_goes_to_clusters_group_shares() -> None:
    rb = grouped("web-deployment", affinity="g", placement=placement(scheduling=DUPLICATED))
    assert decide(rb, Groups(member("a", "m2", "m3"), member("b", "m3", "m2"))) == ["m2", "m3"]


# --- the registry -----------------------------------------------------------------------------------------------

IN_TREE = ["APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterLocality",
           "ClusterEviction"]


def names(plugins: Iterable[object]) -> list[str]:
    return [plugin_name(p) for p in plugins]


def test_with_gate_off_plugin_list_is_unchanged() -> None:
    assert names(in_tree_plugins()) == IN_TREE
    assert names(build_plugins().filters) == [
        "APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterEviction",
    ]


def test_with_gate_on_two_filters_follow_in_tree_plugins() -> None:
    assert names(in_tree_plugins(workload_affinity=True)) == [*IN_TREE, "WorkloadAffinity", "WorkloadAntiAffinity"]
    assert names(build_plugins(workload_affinity=True).filters)[-2:] == ["WorkloadAffinity", "WorkloadAntiAffinity"]


def test_gate_off_leaves_names_unknown_to_plugins() -> None:
    assert build_plugins(["*", "-WorkloadAffinity"]).unknown == ("WorkloadAffinity",)
    assert "WorkloadAffinity" not in build_plugins(["*", "-WorkloadAffinity"], workload_affinity=True).names
