"""The operator against the real control plane: its identity, its journal (the audit log), the test's objects."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testsupport.operator.harness import OperatorThread, config_spec, wait_until, write_config
from testsupport.realcluster import audit
from testsupport.realcluster.audit import AuditEntry
from testsupport.realcluster.controlplane import SCHEDULER_NAMESPACE, ControlPlane
from testsupport.realcluster.kube import KubeClient


@dataclass(frozen=True)
class OperatorIdentity:
    """What OperatorThread needs of an API server: the kubeconfig of the scheduler's ServiceAccount."""

    kubeconfig_path: Path


class Journal:
    """The audit log from the moment this journal was made, synchronised by a marker request."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.since = time.time()

    def entries(self) -> list[AuditEntry]:
        """Every request answered since `since`, up to a marker sent now: the marker logged and every request
        received before it answered (a watch counts once its response has started), so nothing is missing
        however late the server logs it."""
        marker = f"audit-marker-{uuid.uuid4().hex[:10]}"
        self.plane.admin().request("GET", f"/api/v1/namespaces/{marker}")

        def logged() -> list[AuditEntry] | None:
            log = audit.read_log(self.plane.audit_log)
            marked = [e for e in log.entries if e.name == marker]
            if not marked or any(e.received <= marked[0].received for e in log.pending):
                return None
            return log.entries

        entries = wait_until(logged, 10, "the marker and every request before it answered in the audit log")
        return [e for e in entries if e.received >= self.since]

    def operator(self) -> list[AuditEntry]:
        """The scheduler's own requests (its ServiceAccount's)."""
        return [e for e in self.entries() if e.user == self.plane.operator_user]

    def operator_writes(self, path_pattern: str = "") -> list[AuditEntry]:
        return [e for e in self.operator() if e.is_write and path_pattern in e.uri]


class Objects:
    """The test's objects on the shared control plane; deleted (in reverse order) when the test ends."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self._made: list[tuple[str, str, str | None]] = []

    def create(self, *documents: Mapping[str, Any]) -> list[dict[str, Any]]:
        made = []
        for document in documents:
            metadata = document["metadata"]
            if document["kind"] != "Namespace" or self.kube.get("Namespace", metadata["name"]) is None:
                made.append(self.kube.create(document))
                self._made.append((str(document["kind"]), metadata["name"], metadata.get("namespace")))
        return made

    def cleanup(self) -> None:
        for kind, name, namespace in reversed(self._made):
            if kind != "Namespace":  # a namespace is never finalised here (no controller-manager runs)
                self.kube.delete(kind, name, namespace)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def e2e_config(path: Path, scheduler_name: str, **spec: Any) -> Path:
    """A configuration file for one test's scheduler: its own name and Lease (tests share the plane)."""
    lease = {"leaseName": scheduler_name, "leaseNamespace": SCHEDULER_NAMESPACE, **spec.pop("leaderElection", {})}
    return write_config(path, config_spec(schedulerName=scheduler_name, leaderElection=lease, **spec))


def start_operator(plane: ControlPlane, config: Path | None, **kwargs: Any) -> OperatorThread:
    return OperatorThread(
        OperatorIdentity(plane.operator_kubeconfig_path), config, namespace=SCHEDULER_NAMESPACE, **kwargs
    ).start()


def condition(body: Mapping[str, Any] | None, type_: str = "Scheduled") -> dict[str, Any] | None:
    for item in ((body or {}).get("status") or {}).get("conditions") or []:
        if item.get("type") == type_:
            return dict(item)
    return None


def wait_scheduled(kube: KubeClient, kind: str, name: str, namespace: str | None = None,
                   timeout: float = 30.0) -> dict[str, Any]:
    """The binding once it has a Scheduled condition (when True: for its current generation)."""
    def done() -> dict[str, Any] | None:
        body = kube.get(kind, name, namespace)
        scheduled = condition(body)
        if body is None or scheduled is None:
            return None
        observed = (body.get("status") or {}).get("schedulerObservedGeneration")
        return body if scheduled["status"] != "True" or observed == body["metadata"]["generation"] else None
    return wait_until(done, timeout, f"{kind} {namespace}/{name} to be scheduled")


def decide_again_alike(kube: KubeClient, kind: str, name: str, namespace: str | None = None,
                       timeout: float = 30.0) -> None:
    """Make the scheduler decide `name` again with the same result (a toleration added to its placement
    changes the placement, not where it fits), and wait until the repeated success Event has been counted on
    the first one (count 2: a PATCH of our Event, as client-go's correlator writes a repeat)."""
    body = kube.get(kind, name, namespace)
    assert body is not None, f"{kind} {namespace}/{name} is gone"
    placement = dict(body["spec"].get("placement") or {})
    placement["clusterTolerations"] = [{"key": "e2e.example/repeat", "operator": "Exists", "effect": "NoSchedule"}]
    kube.patch(kind, name, {"spec": {"placement": placement}}, namespace)
    events_namespace = namespace or "default"

    def counted() -> bool:
        events = kube.ok("GET", f"/api/v1/namespaces/{events_namespace}/events")["items"]
        return any(e["involvedObject"].get("name") == name and e["involvedObject"].get("kind") == kind
                   and e.get("reason") == "ScheduleBindingSucceed" and e.get("count", 1) >= 2 for e in events)
    wait_until(counted, timeout, f"the repeated success Event of {kind} {namespace}/{name} counted")


def with_scheduler(documents: Iterable[Mapping[str, Any]], scheduler_name: str) -> list[dict[str, Any]]:
    """Bindings handed to `scheduler_name` (other documents unchanged)."""
    out = []
    for original in documents:
        document = dict(original)
        if document.get("kind") in ("ResourceBinding", "ClusterResourceBinding"):
            document["spec"] = {**document["spec"], "schedulerName": scheduler_name}
        out.append(document)
    return out
