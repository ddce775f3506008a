"""The original report's scenario on a real Karmada: a rolling restart of the scheduler while passes are held in
a slow member estimator's calls and PropagationPolicies change, judged by karmada-apiserver's audit log.

    1. the outgoing instance ("old", its own client identity) schedules N Deployments, Divided by the members'
       available replicas (every decision asks every member's estimator);
    2. member1's estimator turns slow (its calls are held `delay` seconds: testsupport/karmada/slowlink.py) and every
       policy changes its cluster affinity: the old instance's passes wait in member1's estimator calls;
    3. the incoming instance ("new") starts beside it, as a Deployment's surge pod would, and the old one is
       sent SIGTERM; the moment it exits is its shutdown's end;
    4. every policy changes again (the newest placement), member1's estimator turns fast, and the bindings
       settle; then a wait longer than the estimator's delay, for anything still in flight to land.

What the audit log must show for binding-scheduler: no write by the old instance after it exited, and every
binding's last spec.clusters written by the new instance for the newest placement. The same scenario with
karmada-scheduler is recorded beside it (docs/karmada-e2e.md)."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testsupport.karmada.plane import (
    KARMADA_SYSTEM,
    KarmadaPlane,
    Processes,
    scheduler_command,
    wait_for,
    write_kubeconfig,
)
from testsupport.karmada.slowlink import SlowLink, slow_link
from testsupport.realcluster import audit
from testsupport.realcluster.controlplane import binaries as kube_binaries

POLICIES = "/apis/policy.karmada.io/v1alpha1/namespaces/{namespace}/propagationpolicies"
BINDINGS = "/apis/work.karmada.io/v1alpha2/namespaces/{namespace}/resourcebindings"
AFFINITIES = (["member1", "member2"], ["member1", "member3"], ["member2", "member3"])
"""The placements in turn: scheduled by the old instance, changed while it is held, the newest."""


@dataclass
class RestartReport:
    scheduler: str
    bindings: int
    old_exit_seconds: float  # from SIGTERM to the old process's exit
    old_exit_code: int
    held_calls: int  # client chunks the slow estimator held (calls that reached it while slow)
    writes_after_exit: list[str] = field(default_factory=list)  # the old instance's writes after it exited
    stale_bindings: list[str] = field(default_factory=list)  # final spec.clusters not from the newest placement
    last_writer: dict[str, int] = field(default_factory=dict)  # whose spec write landed last, per instance
    settle_seconds: float = 0.0  # from the newest policy change until every binding is on its placement
    old_last_lines: list[str] = field(default_factory=list)  # how the old instance's log ends

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=2)


def instance_kubeconfig(plane: KarmadaPlane, instance: str) -> tuple[Path, str]:
    """A kubeconfig with a client certificate of its own (group system:masters, like karmada-scheduler's), so
    the audit log tells the two instances apart. Returns it and the user name."""
    user = f"system:karmada:karmada-scheduler-{instance}"
    name = f"scheduler-{instance}"
    result = subprocess.run([str(kube_binaries() / "pki"), "issue", str(plane.pki), name, "-cn", user, "-usage",
                             "client", "-org", "system:masters"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"issuing {name}'s certificate: {result.stderr.strip()}")
    path = plane.state / f"{name}.kubeconfig"
    write_kubeconfig(path, {"karmada-apiserver": plane.karmada.url}, plane.pki / "ca.crt",
                     plane.pki / f"{name}.crt", plane.pki / f"{name}.key", "karmada-apiserver")
    return path, user


def deployment(namespace: str, name: str, replicas: int,
               requests: dict[str, str] | None = None) -> dict[str, Any]:
    """An nginx Deployment whose pods request `requests` (default 100m of CPU and 64Mi)."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {
                "requests": requests or {"cpu": "100m", "memory": "64Mi"}}}]}}},
    }


def policy(namespace: str, name: str, clusters: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                 "placement": {"clusterAffinity": {"clusterNames": clusters},
                               "replicaScheduling": {"replicaSchedulingType": "Divided",
                                                     "replicaDivisionPreference": "Weighted",
                                                     "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}},
    }


def _bindings_on(plane: KarmadaPlane, namespace: str, names: list[str], clusters: list[str]) -> bool:
    items = plane.karmada.client().ok("GET", BINDINGS.format(namespace=namespace))["items"]
    placed = {}
    for item in items:
        name = item["metadata"]["name"].removesuffix("-deployment")
        targets = {c["name"] for c in item["spec"].get("clusters") or ()}
        placed[name] = bool(targets) and targets <= set(clusters) and item["metadata"]["generation"] == (
            item.get("status") or {}).get("schedulerObservedGeneration")
    return all(placed.get(name) for name in names)


def run(plane: KarmadaPlane, processes: Processes, *, bindings: int = 6, delay: float = 20.0) -> RestartReport:
    """The scenario on `plane` (its own scheduler process is stopped first and started again at the end)."""
    client = plane.karmada.client()
    namespace = f"restart-{uuid.uuid4().hex[:6]}"
    client.ok("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    names = [f"web-{index}" for index in range(bindings)]
    service_path = f"/api/v1/namespaces/{KARMADA_SYSTEM}/services/karmada-scheduler-estimator-member1"
    service = client.ok("GET", service_path)
    estimator_port = int(service["spec"]["ports"][0]["targetPort"])
    processes.stop("scheduler")
    old_config, old_user = instance_kubeconfig(plane, "old")
    new_config, new_user = instance_kubeconfig(plane, "new")
    try:
        with slow_link(estimator_port, delay, service["spec"]["externalName"]) as link:
            _point_estimator(client, service_path, service, link.port)
            processes.start("scheduler-old", scheduler_command(plane.scheduler, plane.state, old_config))
            for name in names:
                client.ok("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment(namespace, name, 4))
                client.ok("POST", POLICIES.format(namespace=namespace), policy(namespace, name, AFFINITIES[0]))
            wait_for(lambda: _bindings_on(plane, namespace, names, AFFINITIES[0]), "the old instance's first "
                     "decisions", processes, timeout=120)
            link.slow = True
            for name in names:
                _set_affinity(client, namespace, name, AFFINITIES[1])
            wait_for(lambda: link.held > 0, "a call held in the slow estimator", processes, timeout=30)
            processes.start("scheduler-new", scheduler_command(plane.scheduler, plane.state, new_config))
            time.sleep(2.0)
            signalled = time.time()
            old_code = processes.stop("scheduler-old", timeout=60)
            exited = time.time()
            old_last_lines = processes.log_tail("scheduler-old", 1500).splitlines()[-3:]
            settled = settle_on_newest(plane, namespace, names, link, processes)
            time.sleep(delay + 5.0)  # anything still in flight anywhere lands now
            held = link.held
        report = judge(plane, namespace, names, old_user, new_user, exited)
        report.old_exit_seconds = round(exited - signalled, 2)
        report.old_exit_code = -1 if old_code is None else old_code
        report.held_calls = held
        report.settle_seconds = round(settled, 1)
        report.old_last_lines = old_last_lines
        return report
    finally:
        _point_estimator(client, service_path, service, estimator_port)
        processes.stop("scheduler-new")
        processes.stop("scheduler-old")
        client.request("DELETE", f"/api/v1/namespaces/{namespace}")
        processes.start("scheduler", scheduler_command(plane.scheduler, plane.state, plane.karmada.kubeconfig))


def settle_on_newest(plane: KarmadaPlane, namespace: str, names: list[str], link: SlowLink,
                     processes: Processes) -> float:
    """Every policy moved to the newest placement and member1's estimator fast again; the seconds until every
    binding is on that placement."""
    client = plane.karmada.client()
    for name in names:
        _set_affinity(client, namespace, name, AFFINITIES[2])
    changed = time.monotonic()
    link.slow = False
    wait_for(lambda: _bindings_on(plane, namespace, names, AFFINITIES[2]), "every binding on the newest "
             "placement", processes, timeout=180)
    return time.monotonic() - changed


def judge(plane: KarmadaPlane, namespace: str, names: list[str], old_user: str, new_user: str,
          exited: float) -> RestartReport:
    entries = audit.read(plane.audit_log)
    spec_writes = [e for e in entries if e.is_write and e.resource == "resourcebindings" and e.namespace == namespace
                   and not e.subresource and e.code < 300 and e.user in (old_user, new_user)]
    report = RestartReport(scheduler=plane.scheduler, bindings=len(names), old_exit_seconds=0.0, old_exit_code=0,
                           held_calls=0)
    report.writes_after_exit = [f"{e} at +{e.received - exited:.2f}s" for e in entries
                                if e.user == old_user and e.is_write and e.received > exited]
    last: dict[str, str] = {}
    for entry in spec_writes:
        last[entry.name] = "old" if entry.user == old_user else "new"
    report.last_writer = {who: sum(1 for w in last.values() if w == who) for who in ("old", "new")}
    items = plane.karmada.client().ok("GET", BINDINGS.format(namespace=namespace))["items"]
    for item in items:
        targets = sorted(c["name"] for c in item["spec"].get("clusters") or ())
        if not set(targets) <= set(AFFINITIES[2]) or last.get(item["metadata"]["name"]) != "new":
            report.stale_bindings.append(f"{item['metadata']['name']}: {targets} "
                                         f"(last written by {last.get(item['metadata']['name'])})")
    return report


def _point_estimator(client: Any, path: str, service: dict[str, Any], port: int) -> None:
    ports = [{**service["spec"]["ports"][0], "targetPort": port}]
    client.ok("PATCH", path, {"spec": {"ports": ports}})


def _set_affinity(client: Any, namespace: str, name: str, clusters: list[str]) -> None:
    client.ok("PATCH", f"{POLICIES.format(namespace=namespace)}/{name}",
              {"spec": {"placement": {"clusterAffinity": {"clusterNames": clusters}}}})
