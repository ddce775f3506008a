"""The fleet as columns (algorithm/fleet.py) and the in-tree filters' whole-fleet verdicts: over random fleets and
bindings, the framework's runner over the feasible clusters gives each filter's whole-fleet verdict there."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm import fleet as fleet_module
from binding_scheduler.algorithm.plugins import AttemptContext, FilterMask, MaskFilter
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import Binding, TargetCluster, parse_binding, parse_cluster
from testsupport import builders

NAMES = ("b", "a", "m-10", "m-9", "Z", "é", "aa", "m-1")
APIS = (builders.DEPLOYMENT, ("batch/v1", "Job"))
TAINTS = (builders.taint("gpu"), builders.taint("maint", "NoExecute"), builders.taint("soft", "PreferNoSchedule"),
          builders.taint("gpu", value="a100"))
TOLERATIONS = (builders.toleration("gpu"), builders.toleration("gpu", "Equal", "a100", "NoSchedule"),
               builders.toleration(operator="Exists"), builders.toleration("maint", effect="NoExecute"))


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=len(NAMES), unique=True))
    return [builders.cluster(
        name,
        labels={"env": draw(st.sampled_from(["prod", "dev"]))},
        provider=draw(st.sampled_from(["", "aws"])),
        region=draw(st.sampled_from(["", "r1", "r2"])),
        zones=draw(st.sampled_from([(), ("z1",)])),
        taints=draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=lambda t: (t["key"], t["effect"]))),
        apis=draw(st.lists(st.sampled_from(APIS), max_size=2, unique=True)),
        deleting=draw(st.booleans()),
    ) for name in names]


@st.composite
def bindings(draw: st.DrawFn) -> Binding:
    affinity = draw(st.sampled_from([None, {"clusterNames": ["a", "b", "Z"]},
                                     {"labelSelector": {"matchLabels": {"env": "prod"}}}]))
    spread = draw(st.lists(st.sampled_from(["region", "zone", "provider", "cluster"]), max_size=3, unique=True))
    return parse_binding(builders.binding(
        resource=draw(st.sampled_from(APIS)),
        placement=builders.placement(
            affinity=affinity,
            tolerations=draw(st.lists(st.sampled_from(TOLERATIONS), max_size=2)),
            spread=[{"spreadByField": f, "maxGroups": 2} for f in spread],
        ),
        clusters=draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True)),
        evicting=draw(st.lists(st.sampled_from(NAMES), max_size=2, unique=True)),
    ))


MASK_FILTERS = [p for p in build_plugins().filters if isinstance(p, MaskFilter)]


def test_every_in_tree_filter_answers_for_whole_fleet() -> None:
    assert [p.name for p in MASK_FILTERS] == [p.name for p in build_plugins().filters]


@settings(max_examples=300, deadline=None)
@given(docs=clusters(), binding=bindings())
def test_feasible_verdict_equals_whole_fleet_verdict(
    docs: list[dict[str, Any]], binding: Binding
) -> None:
    snapshot = Snapshot(parse_cluster(doc) for doc in docs)
    ctx = AttemptContext.of(binding, snapshot)
    columns = snapshot.columns
    for (name, runner), plugin in zip(build_plugins().filter_runners, MASK_FILTERS, strict=True):
        whole: FilterMask = plugin.filter_mask(ctx, columns)
        among_live = runner(ctx, columns, columns.live)
        assert among_live.failed.tolist() == (whole.failed & columns.live).tolist(), name
        assert [among_live.reason_at(i) for i in among_live.where] == [whole.reason_at(i) for i in among_live.where]


def test_name_rank_orders_as_python_orders_strings() -> None:
    snapshot = Snapshot(parse_cluster(builders.cluster(name)) for name in NAMES)
    columns = snapshot.columns
    assert sorted(NAMES, key=lambda name: columns.rank[columns.index[name]]) == sorted(NAMES)


def test_live_column_leaves_out_deleting_clusters() -> None:
    snapshot = Snapshot(parse_cluster(builders.cluster(n, deleting=n == "b")) for n in ("a", "b", "c"))
    assert snapshot.columns.live.tolist() == [True, False, True]


def test_result_table_in_fleet_order() -> None:
    columns = Snapshot(parse_cluster(builders.cluster(name)) for name in ("b", "a")).columns
    assert columns.targets_of(3) == (TargetCluster("b", 3), TargetCluster("a", 3))
    assert columns.targets_of(3) is columns.targets_of(3)


def test_result_tables_start_afresh_past_their_entry_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_module, "TARGET_TABLE_ENTRIES", 4)
    columns = Snapshot(parse_cluster(builders.cluster(name)) for name in ("b", "a")).columns
    first = columns.targets_of(1)
    columns.targets_of(2)
    assert columns.targets_of(1) is first
    columns.targets_of(3)
    assert columns.targets_of(1) is not first
    assert columns.targets_of(1) == first


def test_duplicated_results_of_one_snapshot_share_their_entries() -> None:
    snapshot = Snapshot(parse_cluster(builders.cluster(f"m{i}")) for i in range(4))
    duplicated = builders.placement(scheduling={"replicaSchedulingType": "Duplicated"})
    web = parse_binding(builders.binding("web", replicas=2, placement=duplicated))
    api = parse_binding(builders.binding("api", replicas=2, placement=duplicated))
    plugins = build_plugins()
    first, second = builders.schedule(web, snapshot, plugins), builders.schedule(api, snapshot, plugins)
    assert first == [TargetCluster(f"m{i}", 2) for i in range(4)]
    assert all(a is b for a, b in zip(first, second, strict=True))
