"""Binding priority preemption on a real Karmada: the flow of karmada-io/karmada PR #7832's e2e test
(test/e2e/suites/base/binding_preemption_test.go), ported, with Karmada's own controllers doing their part.

    1. two low-priority Deployments ("older", then "newer"; no priority: 0) are propagated by PropagationPolicies
       onto member1, 2 replicas of one CPU each: its two kwok Nodes of 2 CPUs are full;
    2. a high-priority binding ("high", priority 1000, `PreemptLowerPriority`) asks for 2 replicas of one CPU
       on member1 alone: it fits nowhere, so binding-scheduler preempts there the minimal set, "newer" alone
       (the older is spared first; either frees enough), with a `BindingPreempted` graceful eviction task,
       fenced, and writes `Scheduled=False`, reason `Preempting`;
    3. Karmada's graceful-eviction controller ends the task once its grace period is over, its binding
       controller deletes the victim's Work on member1, member1's pods go, and Karmada's cluster-status
       controller shows the freed CPU in member1's resource summary;
    4. the preemptor runs again and lands on member1: its pods run there.

The preemptor's binding is written by this test, as PR #7832's detector would write it (v1.18.2's detector
knows no `preemptionPolicy`, and its mutating webhook drops the field on create: the test sets it with a
patch after the binding exists). The binding CRDs carry the field (manifests.with_preemption_policy)."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from binding_scheduler.estimation import AccurateEstimator, EstimatorSettings
from binding_scheduler.model import ReplicaRequirements, parse_cluster
from binding_scheduler.model.quantity import parse_resource_list
from testsupport.karmada.plane import ESTIMATOR_PORT, KarmadaError, KarmadaPlane, Processes, wait_for
from testsupport.karmada.restart import deployment
from testsupport.realcluster import audit

MEMBER = "member1"
SPARED, VICTIM, PREEMPTOR = "older", "newer", "high"
REPLICAS = 2
"""Of each workload. Two replicas of one CPU are what member1 holds when empty as the general estimator counts
it: Karmada's default resource models put a Node of 2 CPUs and 8 Gi in grade 1, which guarantees 1 CPU."""
PREEMPTOR_PRIORITY = 1000
REQUEST = {"cpu": "1", "memory": "64Mi"}
DEPLOYMENTS = "/apis/apps/v1/namespaces/{namespace}/deployments"
POLICIES = "/apis/policy.karmada.io/v1alpha1/namespaces/{namespace}/propagationpolicies"
BINDINGS = "/apis/work.karmada.io/v1alpha2/namespaces/{namespace}/resourcebindings"
TIMEOUT = 180.0


@dataclass
class PreemptionReport:
    preemptor_reasons: list[str] = field(default_factory=list)  # its Scheduled reasons, as the scheduler wrote them
    eviction_tasks: list[dict[str, Any]] = field(default_factory=list)  # what the scheduler wrote on the victim
    eviction_fenced: bool = False  # that write named the resourceVersion it was made from
    tasks_ended_by: list[str] = field(default_factory=list)  # the programs whose writes emptied the victim's tasks
    victim_events: dict[str, list[str]] = field(default_factory=dict)  # reason: messages, on the victim binding
    spared_events: dict[str, list[str]] = field(default_factory=dict)
    preemptor_clusters: list[dict[str, Any]] = field(default_factory=list)
    spared_clusters: list[dict[str, Any]] = field(default_factory=list)
    victim_clusters: list[dict[str, Any]] = field(default_factory=list)
    victim_tasks_left: list[dict[str, Any]] = field(default_factory=list)  # its eviction tasks at the end
    victim_on_member: bool = True  # the victim's Deployment still exists on the member
    preemptor_ready_on_member: int = 0  # ready replicas of the preemptor's Deployment on the member
    seconds: float = 0.0  # from the patch that sets the preemptor's preemptionPolicy until its pods run


PLACEMENT = {"clusterAffinity": {"clusterNames": [MEMBER]},
             "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}


def policy(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                 "placement": PLACEMENT},
    }


def preemptor_binding(template: dict[str, Any]) -> dict[str, Any]:
    """The binding PR #7832's detector would make of `template` under a policy naming a PriorityClass of value
    1000 and policy PreemptLowerPriority: owned by the template, with the binding controller's finalizer. No
    policy of this plane selects the template (v1.18.2's detector would rewrite the binding), so it carries
    Karmada's label for a binding another kind of resource manages, which the scheduler's event filter accepts
    as it accepts a policy's."""
    meta = template["metadata"]
    return {
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": f"{PREEMPTOR}-deployment", "namespace": meta["namespace"],
                     "labels": {"binding.karmada.io/managed-by": "BindingPreemptionTest"},
                     "finalizers": ["karmada.io/binding-controller"],
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": meta["name"],
                                          "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": meta["namespace"],
                              "name": meta["name"], "uid": meta["uid"]},
                 "replicas": REPLICAS, "replicaRequirements": {"resourceRequest": REQUEST},
                 "placement": PLACEMENT, "schedulePriority": {"priority": PREEMPTOR_PRIORITY}},
    }


def run(plane: KarmadaPlane, processes: Processes) -> PreemptionReport:
    """The scenario in a namespace of its own, removed at the end."""
    client = plane.karmada.client()
    namespace = f"preemption-{uuid.uuid4().hex[:6]}"
    client.ok("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    try:
        return _run(plane, processes, namespace)
    except KarmadaError as error:
        raise KarmadaError(f"{error}\n{where_it_stands(plane, namespace)}") from error
    finally:
        client.request("DELETE", f"/api/v1/namespaces/{namespace}")


def _run(plane: KarmadaPlane, processes: Processes, namespace: str) -> PreemptionReport:
    client = plane.karmada.client()
    member = next(m for m in plane.members if m.name == MEMBER).client()
    wait_for(lambda: _free(client, member) and estimator_room(plane) >= REPLICAS,
             f"{MEMBER} free of other tests' pods, as its summary and its estimator show", processes, timeout=TIMEOUT)
    for name in (SPARED, VICTIM):  # one after the other: the victim is the newer
        client.ok("POST", DEPLOYMENTS.format(namespace=namespace), deployment(namespace, name, REPLICAS, REQUEST))
        client.ok("POST", POLICIES.format(namespace=namespace), policy(namespace, name))
        _wait_running(member, namespace, name, processes)
        _wait_healthy(client, namespace, name, processes)
        if name == SPARED:
            _wait_past_creation_second(client, namespace, name, processes)
    template = client.ok("POST", DEPLOYMENTS.format(namespace=namespace),
                         deployment(namespace, PREEMPTOR, REPLICAS, REQUEST))
    binding_path = f"{BINDINGS.format(namespace=namespace)}/{PREEMPTOR}-deployment"
    client.ok("POST", BINDINGS.format(namespace=namespace), preemptor_binding(template))
    started = time.monotonic()
    client.ok("PATCH", binding_path, {"spec": {"schedulePriority": {"preemptionPolicy": "PreemptLowerPriority"}}})
    _wait_running(member, namespace, PREEMPTOR, processes)
    seconds = time.monotonic() - started
    wait_for(lambda: "Preempted" in _events(client, namespace, VICTIM), f"the Preempted Event on {VICTIM}'s "
             "binding", processes, timeout=60)
    report = judge(plane, namespace)
    report.seconds = round(seconds, 1)
    return report


def where_it_stands(plane: KarmadaPlane, namespace: str) -> str:
    """What a failed run leaves to read: each binding's clusters, eviction tasks, claim and Scheduled condition,
    the Events on them, the member's pods and summary, and the scheduler's log lines about the namespace."""
    client = plane.karmada.client()
    member = next(m for m in plane.members if m.name == MEMBER).client()
    lines = []
    for item in client.ok("GET", BINDINGS.format(namespace=namespace))["items"]:
        meta, spec, status = item["metadata"], item["spec"], item.get("status") or {}
        scheduled = [(c.get("status"), c.get("reason"), c.get("message")) for c in status.get("conditions") or ()
                     if c.get("type") == "Scheduled"]
        lines.append(f"binding {meta['name']} rv {meta['resourceVersion']}: clusters {spec.get('clusters')}, tasks "
                     f"{spec.get('gracefulEvictionTasks')}, annotations {meta.get('annotations')}, "
                     f"Scheduled {scheduled}")
    for workload in (SPARED, VICTIM, PREEMPTOR):
        lines.append(f"events on {workload}-deployment: {_events(client, namespace, workload)}")
    for pod in member.ok("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]:
        lines.append(f"pod {pod['metadata']['name']} on {MEMBER}: {(pod.get('status') or {}).get('phase')}, "
                     f"node {pod['spec'].get('nodeName')}, deleting {bool(pod['metadata'].get('deletionTimestamp'))}")
    summary = client.ok("GET", f"/apis/cluster.karmada.io/v1alpha1/clusters/{MEMBER}")["status"]["resourceSummary"]
    lines.append(f"{MEMBER} summary allocated {summary.get('allocated')}, allocating {summary.get('allocating')}")
    try:
        lines.append(f"{MEMBER}'s estimator now gives room for {estimator_room(plane)} replicas of {REQUEST}")
    except Exception as error:  # a report of what stands: a failure here is one more line, not a new error
        lines.append(f"{MEMBER}'s estimator did not answer: {error}")
    log = plane.state / "logs" / "scheduler.log"
    if log.exists():
        about = [line for line in log.read_text(errors="replace").splitlines() if namespace in line]
        lines += ["scheduler log:", *about[-40:]]
    return "\n".join(lines)


def judge(plane: KarmadaPlane, namespace: str) -> PreemptionReport:
    client = plane.karmada.client()
    member = next(m for m in plane.members if m.name == MEMBER).client()
    report = PreemptionReport()
    for entry in audit.read(plane.audit_log):
        if entry.resource != "resourcebindings" or entry.namespace != namespace or entry.code >= 300:
            continue
        body = entry.body if isinstance(entry.body, dict) else {}
        ours = entry.agent.startswith("binding-scheduler")
        if ours and entry.name == f"{PREEMPTOR}-deployment" and entry.subresource == "status":
            report.preemptor_reasons += [c["reason"] for c in (body.get("status") or {}).get("conditions") or ()
                                         if c.get("type") == "Scheduled"]
        elif entry.name == f"{VICTIM}-deployment" and not entry.subresource and entry.verb in ("patch", "update"):
            spec = body.get("spec") or {}
            tasks = spec.get("gracefulEvictionTasks") or ()
            if ours and not report.eviction_tasks:
                report.eviction_tasks = [t for t in tasks if t.get("reason") == "BindingPreempted"]
                report.eviction_fenced = bool(report.eviction_tasks) and bool(
                    (body.get("metadata") or {}).get("resourceVersion"))
            elif "gracefulEvictionTasks" in spec and not tasks:
                report.tasks_ended_by.append(entry.agent.split("/")[0])
    bindings = client.ok("GET", BINDINGS.format(namespace=namespace))["items"]
    spec = {item["metadata"]["name"]: item["spec"] for item in bindings}
    report.preemptor_clusters = spec[f"{PREEMPTOR}-deployment"].get("clusters") or []
    report.spared_clusters = spec[f"{SPARED}-deployment"].get("clusters") or []
    report.victim_clusters = spec[f"{VICTIM}-deployment"].get("clusters") or []
    report.victim_tasks_left = spec[f"{VICTIM}-deployment"].get("gracefulEvictionTasks") or []
    report.victim_events = _events(client, namespace, VICTIM)
    report.spared_events = _events(client, namespace, SPARED)
    report.victim_on_member = member.request("GET", f"{DEPLOYMENTS.format(namespace=namespace)}/{VICTIM}")[0] != 404
    report.preemptor_ready_on_member = _ready(member, namespace, PREEMPTOR)
    return report


def _wait_past_creation_second(client: Any, namespace: str, workload: str, processes: Processes) -> None:
    """Until the second of `workload`'s binding's creationTimestamp is over: the victim's binding must be created
    in a later second than the spared one's (timestamps have whole seconds, and between two bindings created in
    one second the reprieve order spares the lower key, "newer-deployment")."""
    path = f"{BINDINGS.format(namespace=namespace)}/{workload}-deployment"
    created = datetime.fromisoformat(client.ok("GET", path)["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    wait_for(lambda: datetime.now(UTC) >= created + timedelta(seconds=1), f"the second {workload}'s binding was "
             "created in to pass", processes, timeout=10)


def _free(client: Any, member: Any) -> bool:
    """No pod requests CPU on the member, and Karmada's summary of it says so (a binding that found it full
    would wait for the unschedulable queue's flush, 5 minutes)."""
    if any(c.get("resources", {}).get("requests", {}).get("cpu") for pod in member.ok("GET", "/api/v1/pods")["items"]
           for c in pod["spec"]["containers"]):
        return False
    summary = client.ok("GET", f"/apis/cluster.karmada.io/v1alpha1/clusters/{MEMBER}")["status"]["resourceSummary"]
    return (summary.get("allocated") or {}).get("cpu", "0") == "0"


def estimator_room(plane: KarmadaPlane) -> int:
    """What member1's own estimator (Karmada's, over TLS, found as the scheduler finds it) answers for replicas of
    REQUEST: its informers may still hold the pods of the tests before, after the member and its summary are free
    of them, and a binding the scheduler decides meanwhile is Unschedulable until the 5-minute flush."""
    client = plane.karmada.client()
    pki = plane.state / "pki"

    async def service(namespace: str, name: str) -> dict[str, Any] | None:
        status, body = client.request("GET", f"/api/v1/namespaces/{namespace}/services/{name}")
        return body if status == 200 else None

    async def ask() -> int:
        estimator = AccurateEstimator(EstimatorSettings(
            port=ESTIMATOR_PORT, ca_file=str(pki / "ca.crt"), cert_file=str(pki / "karmada-scheduler-grpc.crt"),
            key_file=str(pki / "karmada-scheduler-grpc.key")), service_lookup=service)
        try:
            cluster = parse_cluster(client.ok("GET", f"/apis/cluster.karmada.io/v1alpha1/clusters/{MEMBER}"))
            request = ReplicaRequirements(resource_request=parse_resource_list(REQUEST, "request"))
            answer = await estimator.max_available_replicas([cluster], request)
            return answer.replicas.get(MEMBER, -1)
        finally:
            await estimator.close()

    return asyncio.run(ask())


def _wait_running(member: Any, namespace: str, name: str, processes: Processes) -> None:
    wait_for(lambda: _ready(member, namespace, name) == REPLICAS, f"{name}'s pods on {MEMBER}", processes,
             timeout=TIMEOUT)


def _wait_healthy(client: Any, namespace: str, name: str, processes: Processes) -> None:
    """Until karmada-apiserver's binding of `name` reports its workload Healthy on the member: the scheduler,
    which watches the bindings in order, has then stopped assuming its replicas (the member's estimator counts
    its pods), before the next binding of the scenario is created. Without it a binding created in between is
    decided with those replicas counted twice, found no room, and (as in Karmada) waits for the unschedulable
    queue's flush."""
    path = f"{BINDINGS.format(namespace=namespace)}/{name}-deployment"
    wait_for(lambda: _healthy_on_member(client.request("GET", path)), f"{name}'s binding Healthy on {MEMBER}",
             processes, timeout=TIMEOUT)


def _healthy_on_member(answer: tuple[int, dict[str, Any]]) -> bool:
    status, body = answer
    items = (body.get("status") or {}).get("aggregatedStatus") or [] if status == 200 else []
    return any(i.get("clusterName") == MEMBER and i.get("health") == "Healthy" for i in items)


def _ready(member: Any, namespace: str, name: str) -> int:
    status, answer = member.request("GET", f"{DEPLOYMENTS.format(namespace=namespace)}/{name}")
    return int((answer.get("status") or {}).get("readyReplicas") or 0) if status == 200 else 0


def _events(client: Any, namespace: str, workload: str) -> dict[str, list[str]]:
    """The Events on `workload`'s binding, messages by reason."""
    found: dict[str, list[str]] = {}
    for event in client.ok("GET", f"/api/v1/namespaces/{namespace}/events")["items"]:
        involved = event.get("involvedObject") or {}
        if involved.get("kind") == "ResourceBinding" and involved.get("name") == f"{workload}-deployment":
            found.setdefault(event["reason"], []).append(event["message"])
    return found
