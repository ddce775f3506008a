"""Paths, bodies and the kubectl on PATH, for the devcluster tests."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster, resource_path

RB_API = "work.karmada.io/v1alpha2"
CLUSTER_API = "cluster.karmada.io/v1alpha1"


def rb_path(name: str | None = None, namespace: str | None = "default", sub: str | None = None) -> str:
    return resource_path(RB_API, "resourcebindings", namespace, name, sub)


def cluster_path(name: str | None = None, sub: str | None = None) -> str:
    return resource_path(CLUSTER_API, "clusters", None, name, sub)


def rb_body(name: str | None = "rb1", **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name} if name else {}
    return {
        "apiVersion": RB_API,
        "kind": "ResourceBinding",
        "metadata": metadata,
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, **spec},
    }


def status_of(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    }
    if details is not None:
        body["details"] = details
    return body


def kubectl_on_path(api: DevCluster, *args: str) -> subprocess.CompletedProcess[str]:
    """`kubectl` (the one on PATH; the test is skipped without one) against `api`."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not on PATH")
    return subprocess.run([kubectl, "--kubeconfig", str(api.kubeconfig_path), *args],
                          capture_output=True, text=True, timeout=60, check=False)
