"""The official `kubernetes` client and `kubectl` work through the kubeconfig devcluster writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from binding_scheduler.devcluster import DevCluster
from tests.devcluster.helpers import kubectl_on_path, rb_body


@pytest.fixture
def threaded() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as api:
        api.store.create("resourcebindings", rb_body("rb1"), namespace="default")
        yield api


def _api_client(kubeconfig: Path) -> k8s.ApiClient:
    return k8s_config.new_client_from_config(config_file=str(kubeconfig))


def test_kubeconfig_points_at_server(threaded: DevCluster) -> None:
    text = threaded.kubeconfig_path.read_text()
    assert f"server: {threaded.url}" in text
    assert "current-context: devcluster" in text


def test_kubernetes_client_lists_namespaces(threaded: DevCluster) -> None:
    with _api_client(threaded.kubeconfig_path) as api_client:
        names = [ns.metadata.name for ns in k8s.CoreV1Api(api_client).list_namespace().items]
    assert names == ["default", "kube-system"]


def test_kubernetes_client_lists_and_patches_custom_objects(threaded: DevCluster) -> None:
    with _api_client(threaded.kubeconfig_path) as api_client:
        custom = k8s.CustomObjectsApi(api_client)
        listed = custom.list_namespaced_custom_object("work.karmada.io", "v1alpha2", "default",
                                                      "resourcebindings")
        assert [i["metadata"]["name"] for i in listed["items"]] == ["rb1"]
        patched = custom.patch_namespaced_custom_object(
            "work.karmada.io", "v1alpha2", "default", "resourcebindings", "rb1",
            {"spec": {"clusters": [{"name": "m1", "replicas": 2}]}})
        assert patched["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]
        status = custom.patch_namespaced_custom_object_status(
            "work.karmada.io", "v1alpha2", "default", "resourcebindings", "rb1",
            {"status": {"schedulerObservedGeneration": 2}})
        assert status["status"] == {"schedulerObservedGeneration": 2}


def test_kubernetes_client_sees_conflict_as_api_exception(threaded: DevCluster) -> None:
    with _api_client(threaded.kubeconfig_path) as api_client:
        custom = k8s.CustomObjectsApi(api_client)
        with pytest.raises(k8s.ApiException) as caught:
            custom.patch_namespaced_custom_object(
                "work.karmada.io", "v1alpha2", "default", "resourcebindings", "rb1",
                {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 3}})
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["reason"] == "Conflict"


def test_kubernetes_client_creates_and_replaces_lease(threaded: DevCluster) -> None:
    with _api_client(threaded.kubeconfig_path) as api_client:
        coordination = k8s.CoordinationV1Api(api_client)
        lease = coordination.create_namespaced_lease("kube-system", k8s.V1Lease(
            metadata=k8s.V1ObjectMeta(name="leader"), spec=k8s.V1LeaseSpec(holder_identity="a")))
        lease.spec.holder_identity = "b"
        replaced = coordination.replace_namespaced_lease("leader", "kube-system", lease)
    assert replaced.spec.holder_identity == "b"
    assert int(replaced.metadata.resource_version) > int(lease.metadata.resource_version)


def test_kubectl_lists_resource_bindings(threaded: DevCluster) -> None:
    done = kubectl_on_path(threaded, "get", "resourcebindings.work.karmada.io", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert [i["metadata"]["name"] for i in json.loads(done.stdout)["items"]] == ["rb1"]


def test_kubectl_patches_resource_binding(threaded: DevCluster) -> None:
    done = kubectl_on_path(threaded, "patch", "rb", "rb1", "--type", "merge", "-p", '{"spec":{"replicas":7}}',
                    "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spec"]["replicas"] == 7
    assert threaded.store.get("rb", "rb1", "default")["spec"]["replicas"] == 7
