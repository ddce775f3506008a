"""Our estimator client against Karmada's own karmada-scheduler-estimator v1.18.2 (built from its Go module by
tools/karmada/build.sh), side by side with Karmada's own client (pkg/estimator/client, through our small Go
program tools/karmada/estimator-client): the same requests get the same answers.

The real control plane plays the member cluster: Nodes with allocatable resources, labels, taints and a
Ready condition (status written through /status, as a kubelet would), Pods bound to them with spec.nodeName and
Running, and a Deployment with its ReplicaSet and Pods the scheduler could not place (GetUnschedulableReplicas).
The requests carry resource quantities in several units, node selectors, required node affinity, tolerations,
and components (MaxAvailableComponentSets, which v1.18.2's estimator serves).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from typing import Any

import grpc.aio
import pytest

from binding_scheduler.estimation import AccurateEstimator, EstimatorSettings
from binding_scheduler.estimation.wire import (
    GET_UNSCHEDULABLE_REPLICAS,
    read_count,
    serialize,
    unschedulable_replicas_request,
)
from binding_scheduler.model import ObjectReference, parse_binding, parse_cluster
from tests.e2e.harness import unique
from testsupport.realcluster.controlplane import ControlPlane, go_available
from testsupport.realcluster.karmada import (
    Estimator,
    KarmadaError,
    ask_with_karmadas_client,
    binaries,
    estimator_client,
)
from testsupport.realcluster.kube import KubeClient

GPU_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
# name -> labels, allocatable, taints
NODES: dict[str, tuple[dict[str, str], dict[str, str], list[dict[str, str]]]] = {
    "small": ({"zone": "a", "disk": "ssd"},
              {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "50Gi", "pods": "20"}, []),
    "large": ({"zone": "b", "disk": "hdd"},
              {"cpu": "8", "memory": "16Gi", "ephemeral-storage": "100Gi", "pods": "30"}, []),
    "gpu": ({"zone": "b", "accelerator": "nvidia"},
            {"cpu": "16", "memory": "64Gi", "ephemeral-storage": "200Gi", "pods": "40"}, [GPU_TAINT]),
}
# Pods already running: node -> requests of each
RUNNING: dict[str, list[dict[str, str]]] = {
    "small": [{"cpu": "1500m", "memory": "1Gi"}],
    "large": [{"cpu": "2", "memory": "4Gi", "ephemeral-storage": "10Gi"}, {"cpu": "250m", "memory": "256Mi"}],
}

# MaxAvailableReplicas: replicaRequirements as in a ResourceBinding (None: a binding without requirements)
REPLICA_CASES: dict[str, dict[str, Any] | None] = {
    "units": {"resourceRequest": {"cpu": "1500m", "memory": "1.5Gi"}},
    "ephemeral-storage and a node selector": {
        "resourceRequest": {"cpu": "0.5", "memory": "512Mi", "ephemeral-storage": "5Gi"},
        "nodeClaim": {"nodeSelector": {"disk": "ssd"}},
    },
    "node affinity and a toleration": {
        "resourceRequest": {"cpu": "1", "memory": "2Gi"},
        "nodeClaim": {
            "hardNodeAffinity": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        },
    },
    "tolerate everything, not the ssd": {
        "resourceRequest": {"cpu": "250m", "memory": "1536Mi"},
        "nodeClaim": {
            "hardNodeAffinity": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["ssd"]}]},
                {"matchExpressions": [{"key": "accelerator", "operator": "Exists"}]}]},
            "tolerations": [{"operator": "Exists"}],
        },
    },
    "no requirements": None,
}
COMPONENTS = [
    {"name": "leader", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "2", "memory": "4Gi"}}},
    {"name": "worker", "replicas": 3, "replicaRequirements": {
        "resourceRequest": {"cpu": "1500m", "memory": "1.5Gi", "ephemeral-storage": "1Gi"},
        "nodeClaim": {"nodeSelector": {"zone": "b"},
                      "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]}}},
]


def _node(name: str) -> str:
    return f"est-{name}"


class Member:
    """The control plane as a member cluster: its nodes, a namespace with running and unschedulable pods."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self.namespace = unique("est")
        self.cleanup: list[str] = []

    def create(self, path: str, body: Mapping[str, Any], status: Mapping[str, Any] | None = None) -> dict[str, Any]:
        created = dict(self.kube.ok("POST", path, body))
        self.cleanup.append(f"{path}/{body['metadata']['name']}")
        if status is not None:
            created = dict(self.kube.ok("PATCH", f"{path}/{body['metadata']['name']}/status", {"status": status}))
        return created

    def build(self) -> None:
        namespaced = f"/api/v1/namespaces/{self.namespace}"
        self.kube.ensure_namespace(self.namespace)
        # No controller-manager: the ServiceAccount admission needs the namespace's default account to exist.
        self.kube.ok("POST", f"{namespaced}/serviceaccounts", {"metadata": {"name": "default"}})
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for name, (labels, allocatable, taints) in NODES.items():
            self.create("/api/v1/nodes", {"metadata": {"name": _node(name), "labels": labels}}, {
                "capacity": allocatable, "allocatable": allocatable,
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "lastHeartbeatTime": now, "lastTransitionTime": now}],
            })
            # The TaintNodesByCondition admission taints a new node not-ready until the node lifecycle controller
            # sees it Ready; there is none here, so do what it would.
            self.kube.ok("PATCH", f"/api/v1/nodes/{_node(name)}", {"spec": {"taints": taints or None}})
        for node, pods in RUNNING.items():
            for i, requests in enumerate(pods):
                self.create(f"{namespaced}/pods", pod(f"{node}-{i}", requests, node=_node(node)), {"phase": "Running"})
        self.create(f"{namespaced}/pods", pod("done", {"cpu": "4"}, node=_node("large")), {"phase": "Succeeded"})
        self.unschedulable_workload()

    def unschedulable_workload(self) -> None:
        """Deployment `web`, its ReplicaSet, and pods of it: two unschedulable for 10 minutes, one just now, one
        running (GetUnschedulableReplicas counts the first two with a 60 s threshold)."""
        namespaced = f"/apis/apps/v1/namespaces/{self.namespace}"
        template = {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "web:1",
                                             "resources": {"requests": {"cpu": "1"}}}]}}
        deployment = self.create(f"{namespaced}/deployments", {
            "metadata": {"name": "web"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}, "template": template},
        })
        hashed = {"app": "web", "pod-template-hash": "5d9c7b8f6"}
        owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                 "uid": deployment["metadata"]["uid"], "controller": True}
        replica_set = self.create(f"{namespaced}/replicasets", {
            "metadata": {"name": "web-5d9c7b8f6", "labels": hashed, "ownerReferences": [owner]},
            "spec": {"replicas": 4, "selector": {"matchLabels": hashed},
                     "template": {**template, "metadata": {"labels": hashed}}},
        })
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": replica_set["metadata"]["name"],
                 "uid": replica_set["metadata"]["uid"], "controller": True}
        now = datetime.datetime.now(datetime.UTC)
        for name, since in (("web-a", 600), ("web-b", 600), ("web-c", 0)):
            at = (now - datetime.timedelta(seconds=since)).strftime("%Y-%m-%dT%H:%M:%SZ")
            self.create(f"/api/v1/namespaces/{self.namespace}/pods",
                        pod(name, {"cpu": "1"}, labels=hashed, owner=owner),
                        {"phase": "Pending", "conditions": [
                            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                             "message": "0/3 nodes are available", "lastTransitionTime": at}]})
        self.create(f"/api/v1/namespaces/{self.namespace}/pods",
                    pod("web-d", {"cpu": "1"}, labels=hashed, owner=owner, node=_node("large")), {"phase": "Running"})

    def delete(self) -> None:
        for path in reversed(self.cleanup):
            self.kube.request("DELETE", path + ("?gracePeriodSeconds=0" if "/pods/" in path else ""))


def pod(name: str, requests: Mapping[str, str], *, node: str | None = None, labels: Mapping[str, str] | None = None,
        owner: Mapping[str, Any] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": dict(labels or {})}
    if owner is not None:
        metadata["ownerReferences"] = [dict(owner)]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": dict(requests)}}]}
    if node is not None:
        spec["nodeName"] = node
    return {"metadata": metadata, "spec": spec}


@pytest.fixture(scope="module")
def member(control_plane: ControlPlane) -> Iterator[Member]:
    made = Member(control_plane.admin())
    try:
        made.build()
        yield made
    finally:
        made.delete()


@pytest.fixture(scope="module")
def estimator(
    control_plane: ControlPlane, member: Member, tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Estimator]:
    """Karmada's estimator for cluster `member-1`, the control plane being that cluster; serving once it sees
    every node and pod of `member`."""
    if not go_available():
        pytest.skip("Karmada's estimator: Go is not installed, so it cannot be built")
    try:
        binaries()
        estimator_client()
    except KarmadaError as error:
        pytest.fail(f"Karmada's binaries could not be built: {error}", pytrace=False)
    log = tmp_path_factory.mktemp("estimator") / "karmada-scheduler-estimator.log"
    started = Estimator(control_plane.kubeconfig_path, "member-1", log)
    try:
        started.wait_serving()
        yield started
    finally:
        started.process.stop()


def binding(requirements: Mapping[str, Any] | None = None, components: list[dict[str, Any]] | None = None,
            namespace: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                         "namespace": namespace}}
    if requirements is not None:
        spec["replicaRequirements"] = dict(requirements)
    if components is not None:
        spec["components"] = components
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": "web", "namespace": namespace}, "spec": spec}


async def ours(estimator: Estimator, ask: str, legacy: bool = True, **kwargs: Any) -> int:
    """Our AccurateEstimator's answer, with the estimator as a static endpoint; `legacy`: also fill the fields
    estimators up to v1.17 read (Karmada's client fills both too)."""
    client = AccurateEstimator(EstimatorSettings(endpoints={estimator.cluster_name: estimator.address}, timeout=5,
                                                 send_legacy_fields=legacy))
    cluster = parse_cluster({"kind": "Cluster", "metadata": {"name": estimator.cluster_name}})
    try:
        answer = await getattr(client, ask)([cluster], **kwargs)
    finally:
        await client.close()
    assert dict(answer.failures) == {}
    return int(answer.replicas[estimator.cluster_name])


def test_estimator_sees_member_cluster(estimator: Estimator) -> None:
    assert estimator.healthy()


@pytest.mark.parametrize("legacy", [True, False], ids=["with-legacy-fields", "bytes-only"])
@pytest.mark.parametrize("case", list(REPLICA_CASES))
async def test_max_available_replicas_as_karmadas_client_gets_it(estimator: Estimator, member: Member, case: str,
                                                                  legacy: bool) -> None:
    requirements = REPLICA_CASES[case]
    karmada = ask_with_karmadas_client(estimator.address, [{
        "cluster": estimator.cluster_name, "object": f"kind=Deployment, name={member.namespace}/web",
        "maxAvailableReplicas": {"replicaRequirements": requirements}}])
    parsed = parse_binding(binding(requirements)).replica_requirements
    got = await ours(estimator, "max_available_replicas", legacy, requirements=parsed,
                     resource=ObjectReference("apps/v1", "Deployment", "web", member.namespace))
    assert karmada == [{"maxReplicas": got}]
    assert got > 0  # a request every node refuses would compare nothing


async def test_max_available_component_sets_as_karmadas_client_gets_it(estimator: Estimator, member: Member) -> None:
    karmada = ask_with_karmadas_client(estimator.address, [{
        "cluster": estimator.cluster_name,
        "maxAvailableComponentSets": {"namespace": member.namespace, "components": COMPONENTS}}])
    components = parse_binding(binding(components=COMPONENTS)).components
    got = await ours(estimator, "max_available_component_sets", components=components, namespace=member.namespace)
    assert karmada == [{"maxSets": got}]
    assert got > 0


async def test_unschedulable_replicas_as_karmadas_client_gets_them(estimator: Estimator, member: Member) -> None:
    """Karmada's scheduler never asks this (its descheduler does): our wire module builds the request."""
    reference = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": member.namespace, "name": "web"}
    for threshold, expected in ((60, 2), (0, 3)):
        karmada = ask_with_karmadas_client(estimator.address, [{
            "cluster": estimator.cluster_name,
            "getUnschedulableReplicas": {"resource": reference, "threshold": f"{threshold}s"}}])
        request = unschedulable_replicas_request(
            estimator.cluster_name, ObjectReference("apps/v1", "Deployment", "web", member.namespace), threshold)
        async with grpc.aio.insecure_channel(estimator.address) as channel:
            call = channel.unary_unary(GET_UNSCHEDULABLE_REPLICAS, request_serializer=serialize,
                                       response_deserializer=None)
            got = read_count(await call(request, timeout=5))
        assert karmada == [{"unschedulableReplicas": got}], threshold
        assert got == expected, threshold


async def test_request_for_another_cluster_fails_for_both(estimator: Estimator) -> None:
    karmada = ask_with_karmadas_client(estimator.address, [{
        "cluster": "elsewhere", "maxAvailableReplicas": {"replicaRequirements": None}}])
    client = AccurateEstimator(EstimatorSettings(endpoints={"elsewhere": estimator.address}, timeout=5))
    try:
        answer = await client.max_available_replicas([parse_cluster({"metadata": {"name": "elsewhere"}})], None)
    finally:
        await client.close()
    refusal = "cluster name does not match, got: elsewhere, desire: member-1"
    assert refusal in karmada[0]["error"]
    assert dict(answer.replicas) == {}
    assert refusal in answer.failures["elsewhere"]
