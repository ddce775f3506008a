"""The one view of a binding body the intake reads before parsing: one default per field, and no read raises."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.model.body import BindingBody

BODY: dict[str, Any] = {
    "kind": "ResourceBinding",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"l": "v"}, "annotations": {"a": "b"}},
    "spec": {
        "schedulerName": "mine",
        "suspension": {"scheduling": True},
        "schedulePriority": {"priority": 7},
        "clusters": [{"name": "m1", "replicas": 2}, {"replicas": 1}, "junk", {"name": "m2"}],
        "gracefulEvictionTasks": [{"fromCluster": "m3"}, 5],
        "workloadAffinityGroups": {"affinityGroup": "g", "antiAffinityGroup": "x"},
    },
    "status": {
        "aggregatedStatus": [{"clusterName": "m1", "health": "Healthy"}, {"clusterName": "m2", "health": "Unknown"}],
        "conditions": [{"type": "FullyApplied", "status": "True"}, {"type": "FullyApplied", "status": "False"}],
    },
}


def test_each_field_reads_as_body_holds_it() -> None:
    view = BindingBody(BODY)
    assert (view.meta.key, dict(view.labels), dict(view.annotations)) == ("shop/web", {"l": "v"}, {"a": "b"})
    assert (view.scheduler_name, view.scheduling_suspended, view.priority) == ("mine", True, 7)
    assert view.target_names == ["m1", "m2"]
    assert view.eviction_tasks == [{"fromCluster": "m3"}]
    assert view.affinity_groups == ("g", "x")
    assert view.healthy_clusters == {"m1"}
    assert view.condition_true("FullyApplied") is True  # the first of its type decides


@pytest.mark.parametrize("body", [None, {}, {"metadata": 3, "spec": [], "status": "x"},
                                  {"spec": {"clusters": {}, "schedulePriority": {"priority": True},
                                            "schedulerName": 5, "suspension": {"scheduling": "yes"}}}])
def test_absent_or_mistyped_field_takes_one_default(body: Any) -> None:
    view = BindingBody(body)
    assert (view.scheduler_name, view.scheduling_suspended, view.priority) == ("default-scheduler", False, 0)
    assert (view.target_names, view.eviction_tasks, view.affinity_groups) == ([], [], ("", ""))
    assert (dict(view.labels), dict(view.annotations), view.healthy_clusters) == ({}, {}, set())
    assert view.condition_true("FullyApplied") is False
