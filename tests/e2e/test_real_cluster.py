"""End to end against a real Karmada control plane, when one is configured.

Set BINDING_SCHEDULER_E2E_KUBECONFIG to a kubeconfig of a Karmada API server (with Karmada's CRDs and at
least one joined Cluster); otherwise these tests are skipped. They create their objects in a namespace of
their own and delete it afterwards, and run the scheduler under a scheduler name of their own, so a Karmada
scheduler running beside them is not disturbed.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.e2e

KUBECONFIG = os.environ.get("BINDING_SCHEDULER_E2E_KUBECONFIG", "")
if not KUBECONFIG:
    pytest.skip("no real cluster configured (BINDING_SCHEDULER_E2E_KUBECONFIG)", allow_module_level=True)

kubernetes = pytest.importorskip("kubernetes")

from tests.operator.harness import OperatorThread, config_spec, write_config  # noqa: E402

SCHEDULER = "binding-scheduler-e2e"


@pytest.fixture
def api() -> Any:
    client = kubernetes.config.new_client_from_config(config_file=KUBECONFIG)
    return kubernetes.client.CustomObjectsApi(client), kubernetes.client.CoreV1Api(client)


@pytest.fixture
def namespace(api: Any) -> Iterator[str]:
    _, core = api
    name = f"bs-e2e-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


def test_a_binding_is_scheduled_on_a_real_control_plane(api: Any, namespace: str, tmp_path: Path) -> None:
    custom, _ = api
    clusters = custom.list_cluster_custom_object("cluster.karmada.io", "v1alpha1", "clusters")["items"]
    assert clusters, "the control plane has no Cluster"
    target = clusters[0]["metadata"]["name"]
    binding = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "e2e", "namespace": namespace,
                     "labels": {"propagationpolicy.karmada.io/permanent-id": "e2e"}},
        "spec": {
            "schedulerName": SCHEDULER,
            "resource": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": namespace, "name": "e2e"},
            "placement": {"clusterAffinity": {"clusterNames": [target]}},
        },
    }
    custom.create_namespaced_custom_object("work.karmada.io", "v1alpha2", namespace, "resourcebindings", binding)
    spec = config_spec(schedulerName=SCHEDULER, leaderElection={"leaseName": SCHEDULER, "leaseNamespace": namespace})
    config = write_config(tmp_path / "config.yaml", spec)
    operator = OperatorThread(RealControlPlane(Path(KUBECONFIG)), config, namespace=namespace).start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            body = custom.get_namespaced_custom_object(
                "work.karmada.io", "v1alpha2", namespace, "resourcebindings", "e2e"
            )
            if any(c.get("type") == "Scheduled" for c in (body.get("status") or {}).get("conditions") or []):
                break
            time.sleep(0.5)
    finally:
        assert operator.stop() == 0
    assert body["spec"]["clusters"] == [{"name": target}]
    print(yaml.safe_dump(body["status"]))


@dataclass(frozen=True)
class RealControlPlane:
    kubeconfig_path: Path
