"""Cluster changes (Karmada's pkg/scheduler/event_handler.go: updateCluster, enqueueAffectedBindings): label or
generation changes and a starting deletion requeue the affected bindings; status-only changes do not."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    DUPLICATED,
    apply,
    at_rest,
    binding_doc,
    binding_writes,
    cluster_doc,
    cluster_path,
    get,
    metric,
    patch,
    request,
    running_operator,
    scheduled,
    wait_until,
)

PROD_ONLY = {**DUPLICATED, "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}}


def clusters_of(api: DevCluster, name: str) -> object:
    body = get(api, "resourcebindings", name, "default")
    return None if body is None else body["spec"].get("clusters")


def test_cluster_label_change_requeues_bindings_it_now_matches(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1", labels={"env": "prod"}), cluster_doc("m2", labels={"env": "dev"}),
          binding_doc("web", replicas=2, placement=PROD_ONLY))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        assert clusters_of(api, "web") == [{"name": "m1", "replicas": 2}]
        patch(api, cluster_path("m2"), {"metadata": {"labels": {"env": "prod"}}})
        wait_until(lambda: clusters_of(api, "web") == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}],
                   what="the requeued binding to take m2")
        at_rest(api, operator)
        requeued = metric(operator, "karmada_scheduler_queue_incoming_bindings_total", event="ClusterChanged")
    assert requeued == 1
    assert len(binding_writes(api, "web")) == 4


def test_cluster_label_change_does_not_move_divided_binding(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1", labels={"env": "prod"}), cluster_doc("m2", labels={"env": "dev"}),
          binding_doc("web", replicas=2))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        patch(api, cluster_path("m2"), {"metadata": {"labels": {"env": "prod"}}})
        wait_until(lambda: metric(operator, "karmada_scheduler_queue_incoming_bindings_total", event="ClusterChanged"),
                   what="the requeue")
        at_rest(api, operator)
    assert len(binding_writes(api, "web")) == 2


def test_status_only_cluster_change_requeues_nothing(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=2, placement=DUPLICATED))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        patch(api, cluster_path("m2") + "/status", {"status": {"resourceSummary": {"allocatable": {"pods": "7"}}}})
        at_rest(api, operator)
        requeued = metric(operator, "karmada_scheduler_queue_incoming_bindings_total", event="ClusterChanged")
    assert requeued == 0
    # a Duplicated binding is rescheduled on every pass: no write proves there was no pass
    assert len(binding_writes(api, "web")) == 2


def test_terminating_target_cluster_moves_divided_binding_off_it(api: DevCluster, config_file: Path) -> None:
    m2 = cluster_doc("m2")
    m2["metadata"]["finalizers"] = ["karmada.io/cluster-controller"]
    apply(api, cluster_doc("m1"), m2, binding_doc("web", replicas=3))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        assert [c["name"] for c in clusters_of(api, "web")] == ["m1", "m2"]  # type: ignore[attr-defined]
        at_rest(api, operator)
        status, _ = request(api, "DELETE", cluster_path("m2"))
        assert status == 200
        wait_until(lambda: clusters_of(api, "web") == [{"name": "m1", "replicas": 3}], what="web to leave m2")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert len(writes) == 4
    assert writes[2].body["spec"] == {"clusters": [{"name": "m1", "replicas": 3}]}
    assert set(writes[3].body["status"]) == {"schedulerObservedGeneration", "lastScheduledTime"}  # condition unchanged


def test_cluster_gaining_api_gets_unfit_binding(
    api: DevCluster, config_file: Path
) -> None:
    """`kubectl apply` of a Cluster leaves its status empty (status is a subresource): a binding decided then
    fits nowhere. When the cluster's status later lists the binding's API, the binding is scheduled (Karmada
    would wait for the binding's own next change)."""
    bare = cluster_doc("m1")
    bare["status"] = {"resourceSummary": {"allocatable": {"pods": "100"}}}
    apply(api, bare, binding_doc("web", replicas=2))
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, "web"), what="web to fit nowhere")
        assert body["status"]["conditions"][0]["reason"] == "NoClusterFit"
        patch(api, cluster_path("m1") + "/status", {"status": cluster_doc("m1")["status"]})
        wait_until(lambda: clusters_of(api, "web") == [{"name": "m1", "replicas": 2}],
                   what="web to be scheduled once m1 reports its API")
        requeued = metric(operator, "karmada_scheduler_queue_incoming_bindings_total", event="ClusterChanged")
    assert requeued == 1


def test_status_change_without_api_requeues_no_unfit(
    api: DevCluster, config_file: Path
) -> None:
    bare = cluster_doc("m1")
    bare["status"] = {"resourceSummary": {"allocatable": {"pods": "100"}}}
    apply(api, bare, binding_doc("web", replicas=2))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web"), what="web to fit nowhere")
        patch(api, cluster_path("m1") + "/status", {"status": {"resourceSummary": {"allocatable": {"pods": "7"}}}})
        at_rest(api, operator)
        requeued = metric(operator, "karmada_scheduler_queue_incoming_bindings_total", event="ClusterChanged")
    assert requeued == 0
