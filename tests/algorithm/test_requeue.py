"""Which events concern the scheduler: the binding filter and cluster-change requeues (Karmada's
pkg/scheduler/event_handler.go: resourceBindingEventFilter, enqueueAffectedBindings)."""

from __future__ import annotations

from typing import Any

from binding_scheduler.algorithm.requeue import affected_by_cluster, cluster_change_requeues, passes_event_filter
from binding_scheduler.model import parse_binding
from testsupport.builders import binding, make_cluster, names, placement, term

POLICY = {"propagationpolicy.karmada.io/permanent-id": "p-1"}


def labelled(body: dict[str, Any], labels: dict[str, str] = POLICY) -> dict[str, Any]:
    body["metadata"]["labels"] = labels
    return body


def test_policy_labelled_binding_of_ours_passes_filter() -> None:
    assert passes_event_filter(labelled(binding()), "default-scheduler")


def test_empty_scheduler_name_means_default_scheduler() -> None:
    body = labelled(binding())
    body["spec"]["schedulerName"] = ""
    assert passes_event_filter(body, "default-scheduler")


def test_another_schedulers_binding_is_filtered_out() -> None:
    body = labelled(binding())
    body["spec"]["schedulerName"] = "other"
    assert not passes_event_filter(body, "default-scheduler")


def test_suspended_scheduling_is_filtered_out() -> None:
    body = labelled(binding())
    body["spec"]["suspension"] = {"scheduling": True}
    assert not passes_event_filter(body, "default-scheduler")


def test_binding_without_policy_labels_is_filtered_out() -> None:
    assert not passes_event_filter(labelled(binding(), {"app": "web"}), "default-scheduler")


def test_empty_policy_label_does_not_count() -> None:
    assert not passes_event_filter(labelled(binding(), {"binding.karmada.io/managed-by": ""}), "default-scheduler")


def test_each_policy_label_counts() -> None:
    for label in (
        "propagationpolicy.karmada.io/permanent-id",
        "clusterpropagationpolicy.karmada.io/permanent-id",
        "binding.karmada.io/managed-by",
    ):
        assert passes_event_filter(labelled(binding(), {label: "x"}), "default-scheduler")


def test_new_cluster_requeues_nothing() -> None:
    assert cluster_change_requeues(None, make_cluster("m1")) == []


def test_status_only_cluster_change_requeues_nothing() -> None:
    old, new = make_cluster("m1", allocatable={"pods": "10"}), make_cluster("m1", allocatable={"pods": "20"})
    assert cluster_change_requeues(old, new) == []


def test_label_change_requeues_for_old_and_new_cluster() -> None:
    old, new = make_cluster("m1", labels={"tier": "a"}), make_cluster("m1", labels={"tier": "b"})
    assert cluster_change_requeues(old, new) == [old, new]


def test_deletion_starting_requeues_for_new_cluster_only() -> None:
    old, new = make_cluster("m1"), make_cluster("m1", deleting=True)
    assert cluster_change_requeues(old, new) == [new]


def test_binding_without_affinity_is_affected_by_any_cluster() -> None:
    rb = parse_binding(binding(placement=placement()))
    assert affected_by_cluster(rb, make_cluster("m9"), "default-scheduler")


def test_binding_is_affected_only_by_clusters_affinity_matches() -> None:
    rb = parse_binding(binding(placement=placement(affinity=names("m1"))))
    assert affected_by_cluster(rb, make_cluster("m1"), "default-scheduler")
    assert not affected_by_cluster(rb, make_cluster("m2"), "default-scheduler")


def test_foreign_or_unplaced_binding_unaffected() -> None:
    assert not affected_by_cluster(parse_binding(binding()), make_cluster("m1"), "default-scheduler")
    rb = parse_binding(binding(placement=placement()))
    assert not affected_by_cluster(rb, make_cluster("m1"), "other-scheduler")


def test_unobserved_affinity_terms_requeue() -> None:
    rb = parse_binding(binding(placement=placement(affinities=[term("a", "m1")]), generation=2))
    assert affected_by_cluster(rb, make_cluster("m7"), "default-scheduler")


def test_only_observed_terms_own_affinity_requeues_not_overflow() -> None:
    body = binding(
        placement=placement(
            affinities=[term("a", "m1"), term("b", "m2", overflow=[{"affinityName": "o", **names("m3")}])]
        ),
        observed_affinity="b",
    )
    body["status"]["schedulerObservedGeneration"] = 1
    rb = parse_binding(body)
    assert affected_by_cluster(rb, make_cluster("m2"), "default-scheduler")
    assert not affected_by_cluster(rb, make_cluster("m1"), "default-scheduler")
    assert not affected_by_cluster(rb, make_cluster("m3"), "default-scheduler")
