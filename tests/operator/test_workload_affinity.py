"""The real operator against devcluster with gate `WorkloadAffinity`: the bindings of one affinity group end on one
cluster, those of one anti-affinity group on different clusters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    request,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)

ONE_CLUSTER = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
RESOURCE_BINDINGS = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings"


@pytest.fixture
def gated(tmp_path: Path) -> Path:
    return write_config(tmp_path / "config.yaml", config_spec(featureGates={"WorkloadAffinity": True}))


def member(resource: str, groups: dict[str, str], clusters: list[str] | None = None) -> dict[str, Any]:
    """The binding Karmada's detector makes for Deployment `resource` (named `<resource>-deployment`): one replica,
    on the cluster with the most room (`clusters`: among those only)."""
    placement: dict[str, Any] = dict(ONE_CLUSTER)
    if clusters is not None:
        placement["clusterAffinity"] = {"clusterNames": clusters}
    doc = binding_doc(f"{resource}-deployment", replicas=1, placement=placement)
    doc["spec"]["resource"]["name"] = resource
    doc["spec"]["workloadAffinityGroups"] = groups
    return doc


def create_and_wait(api: DevCluster, doc: dict[str, Any]) -> list[str]:
    status, answer = request(api, "POST", RESOURCE_BINDINGS, doc)
    assert status == 201, answer
    name = doc["metadata"]["name"]
    body = wait_until(lambda: scheduled(api, name), what=f"{name} to be scheduled")
    return [t["name"] for t in body["spec"]["clusters"]]


def test_two_bindings_of_one_affinity_group_end_on_same_cluster(api: DevCluster, gated: Path) -> None:
    # m1 has the most room: a binding free to go anywhere would go there.
    apply(api, cluster_doc("m1", pods=300), cluster_doc("m2", pods=200), cluster_doc("m3", pods=100))
    with running_operator(api, gated):
        first = create_and_wait(api, member("cart", {"affinityGroup": "app=shop"}, clusters=["m2", "m3"]))
        second = create_and_wait(api, member("checkout", {"affinityGroup": "app=shop"}))
    assert (first, second) == (["m2"], ["m2"])


def test_anti_affinity_group_ends_apart(api: DevCluster, gated: Path) -> None:
    apply(api, cluster_doc("m1", pods=300), cluster_doc("m2", pods=200), cluster_doc("m3", pods=100))
    with running_operator(api, gated):
        first = create_and_wait(api, member("db-a", {"antiAffinityGroup": "app=db"}))
        second = create_and_wait(api, member("db-b", {"antiAffinityGroup": "app=db"}))
    assert (first, second) == (["m1"], ["m2"])
