"""A small synchronous client for the tests' own requests to a real API server (as a user or another
controller would send them): JSON in, JSON out, status codes returned rather than raised."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from binding_scheduler.kube.client import resource_path

PLURALS = {
    "Namespace": ("", "v1", "namespaces", False),
    "ServiceAccount": ("", "v1", "serviceaccounts", True),
    "Service": ("", "v1", "services", True),
    "ConfigMap": ("", "v1", "configmaps", True),
    "Event": ("", "v1", "events", True),
    "Lease": ("coordination.k8s.io", "v1", "leases", True),
    "ClusterRole": ("rbac.authorization.k8s.io", "v1", "clusterroles", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", False),
    "Role": ("rbac.authorization.k8s.io", "v1", "roles", True),
    "RoleBinding": ("rbac.authorization.k8s.io", "v1", "rolebindings", True),
    "Cluster": ("cluster.karmada.io", "v1alpha1", "clusters", False),
    "ResourceBinding": ("work.karmada.io", "v1alpha2", "resourcebindings", True),
    "ClusterResourceBinding": ("work.karmada.io", "v1alpha2", "clusterresourcebindings", False),
    "SchedulerConfiguration": ("config.binding-scheduler.io", "v1alpha1", "schedulerconfigurations", True),
    "Deployment": ("apps", "v1", "deployments", True),
    "PodDisruptionBudget": ("policy", "v1", "poddisruptionbudgets", True),
    "NetworkPolicy": ("networking.k8s.io", "v1", "networkpolicies", True),
    "ValidatingWebhookConfiguration": (
        "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", False,
    ),
}


def path_of(kind: str, name: str | None = None, namespace: str | None = None, subresource: str | None = None) -> str:
    """The REST path of a collection (no `name`) or of one object of `kind`."""
    group, version, plural, namespaced = PLURALS[kind]
    return resource_path(group, version, plural, namespace if namespaced else None, name, subresource)


@dataclass
class KubeClient:
    server: str
    context: ssl.SSLContext | None
    token: str | None = None

    @classmethod
    def from_kubeconfig(cls, path: Path) -> KubeClient:
        """From the first cluster and user of a kubeconfig (the real control plane's, or devcluster's)."""
        config = yaml.safe_load(path.read_text())
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        context = None
        if str(cluster["server"]).startswith("https:"):
            context = ssl.create_default_context(cafile=cluster["certificate-authority"])
            if "client-certificate" in user:
                context.load_cert_chain(user["client-certificate"], user["client-key"])
        return cls(server=cluster["server"], context=context, token=user.get("token"))

    def request(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        content_type: str | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.server + path, data=data, method=method.upper())
        if data is not None:
            default = "application/merge-patch+json" if method.upper() == "PATCH" else "application/json"
            request.add_header("Content-Type", content_type or default)
        request.add_header("Accept", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.context) as answer:
                return answer.status, _decode(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, _decode(error.read())

    def ok(self, method: str, path: str, body: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """Like `request`, but any status outside 2xx is an AssertionError naming the request and the answer."""
        status, answer = self.request(method, path, body, **kwargs)
        assert 200 <= status < 300, f"{method} {path}: {status} {answer}"
        return answer

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        status, answer = self.request("GET", path_of(kind, name, namespace))
        if status == 404:
            return None
        assert status == 200, f"GET {kind} {name}: {status} {answer}"
        return dict(answer)

    def list(self, kind: str, namespace: str | None = None, **params: str) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode(params)
        answer = self.ok("GET", path_of(kind, namespace=namespace) + (f"?{query}" if query else ""))
        return [dict(item) for item in answer["items"]]

    def create(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """Create `document` (without status), then write its status through /status as its controller would."""
        kind = str(document["kind"])
        metadata = document.get("metadata") or {}
        created = self.ok(
            "POST", path_of(kind, namespace=metadata.get("namespace")),
            {k: v for k, v in document.items() if k != "status"},
        )
        if document.get("status"):
            created = self.ok(
                "PATCH", path_of(kind, metadata["name"], metadata.get("namespace"), "status"),
                {"status": document["status"]},
            )
        return dict(created)

    def apply(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """Server-side apply of `document` by the field manager `tests`."""
        metadata = document["metadata"]
        path = path_of(str(document["kind"]), metadata["name"], metadata.get("namespace"))
        return dict(self.ok(
            "PATCH", path + "?fieldManager=tests&force=true", document, content_type="application/apply-patch+yaml",
        ))

    def patch(self, kind: str, name: str, body: Mapping[str, Any], namespace: str | None = None,
              subresource: str | None = None) -> dict[str, Any]:
        return dict(self.ok("PATCH", path_of(kind, name, namespace, subresource), body))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> int:
        status, _ = self.request("DELETE", path_of(kind, name, namespace))
        return status

    def ensure_namespace(self, name: str) -> None:
        status, answer = self.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        assert status in (201, 409), f"creating namespace {name}: {status} {answer}"

    def wait_deleted(self, kind: str, name: str, namespace: str | None = None, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.get(kind, name, namespace) is not None:
            assert time.monotonic() < deadline, f"{kind} {name} still exists after {timeout:g}s"
            time.sleep(0.1)


def _decode(raw: bytes) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return {"raw": raw.decode(errors="replace")}
