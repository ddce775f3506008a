"""First schedule of each replica scheduling strategy: the exact spec and status writes, fenced."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from binding_scheduler.devcluster import DevCluster
from testsupport.fencing import fence
from testsupport.operator.harness import (
    apply,
    at_rest,
    binding_writes,
    cluster_doc,
    crb_doc,
    crb_scheduled,
    our_writes,
    running_operator,
    scheduled,
    wait_until,
)
from testsupport.operator.harness import binding_doc as rb_doc


def schedule_one(api: DevCluster, config_file: Path, *docs: Mapping[str, Any], name: str = "web") -> dict[str, Any]:
    apply(api, *docs)
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, name), what=f"{name} to be scheduled")
        at_rest(api, operator)
    return body


def assert_first_schedule(api: DevCluster, body: Mapping[str, Any], placement: Mapping[str, Any],
                          clusters: list[dict[str, Any]], name: str = "web") -> None:
    spec_write, status_write = binding_writes(api, name)[:2]
    assert spec_write.method == "PATCH" and not spec_write.path.endswith("/status")
    annotation = spec_write.body["metadata"]["annotations"]["policy.karmada.io/applied-placement"]
    assert json.loads(annotation) == placement
    assert spec_write.body == {
        "metadata": {"resourceVersion": fence(spec_write.body, spec_write),
                     "annotations": {"policy.karmada.io/applied-placement": annotation}},
        "spec": {"clusters": clusters},
    }
    assert status_write.path.endswith("/status")
    status = status_write.body["status"]
    assert set(status) == {"conditions", "schedulerObservedGeneration", "lastScheduledTime"}
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("Scheduled", "True", "Success", "Binding has been scheduled successfully.")
    ]
    assert status["schedulerObservedGeneration"] == body["metadata"]["generation"]
    assert body["spec"]["clusters"] == clusters


def test_duplicated_gets_all_replicas_on_every_cluster(api: DevCluster, config_file: Path) -> None:
    placement = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
    body = schedule_one(api, config_file, cluster_doc("m1"), cluster_doc("m2"),
                        rb_doc("web", replicas=3, placement=placement))
    assert_first_schedule(api, body, placement, [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}])


def test_static_weight_divides_by_weight_list(api: DevCluster, config_file: Path) -> None:
    placement = {"replicaScheduling": {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": [
            {"targetCluster": {"clusterNames": ["m1"]}, "weight": 1},
            {"targetCluster": {"clusterNames": ["m2"]}, "weight": 2},
        ]},
    }}
    body = schedule_one(api, config_file, cluster_doc("m1"), cluster_doc("m2"),
                        rb_doc("web", replicas=3, placement=placement))
    assert_first_schedule(api, body, placement, [{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": 2}])


def test_dynamic_weight_divides_by_available_replicas(api: DevCluster, config_file: Path) -> None:
    placement = {"replicaScheduling": {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"},
    }}
    body = schedule_one(api, config_file, cluster_doc("m1", pods=60), cluster_doc("m2", pods=30),
                        rb_doc("web", replicas=6, placement=placement))
    assert_first_schedule(api, body, placement, [{"name": "m1", "replicas": 4}, {"name": "m2", "replicas": 2}])


def test_aggregated_packs_replicas_into_fewest_clusters(api: DevCluster, config_file: Path) -> None:
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
    body = schedule_one(api, config_file, cluster_doc("m1", pods=10), cluster_doc("m2", pods=100),
                        rb_doc("web", replicas=5, placement=placement))
    assert_first_schedule(api, body, placement, [{"name": "m2", "replicas": 5}])


def test_non_workload_goes_to_every_cluster(api: DevCluster, config_file: Path) -> None:
    body = schedule_one(api, config_file, cluster_doc("m1"), cluster_doc("m2"),
                        rb_doc("cfg", replicas=0, placement={}), name="cfg")
    assert_first_schedule(api, body, {}, [{"name": "m1"}, {"name": "m2"}], name="cfg")


def test_crb_scheduled_with_two_fenced_writes(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), crb_doc("role"))
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: crb_scheduled(api, "role"), what="the CRB to be scheduled")
        at_rest(api, operator)
    writes = our_writes(api, r"/clusterresourcebindings/role")
    spec_write, status_write = writes[0], writes[1]
    assert spec_write.path == "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/role"
    assert spec_write.body["spec"] == {"clusters": [{"name": "m1"}, {"name": "m2"}]}
    assert spec_write.body["metadata"]["annotations"] == {"policy.karmada.io/applied-placement": "{}"}
    assert status_write.path == "/apis/work.karmada.io/v1alpha2/clusterresourcebindings/role/status"
    assert fence(status_write.body, status_write) != fence(spec_write.body, spec_write)
    assert body["spec"]["clusters"] == [{"name": "m1"}, {"name": "m2"}]
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]
