"""Karmada's own scheduler and ours side by side on one real control plane, over a generated fleet: the fleet and
binding generators, the two copies of every binding, both schedulers started with the same flags, the wait until
both settle, and the comparison with the differences docs/compatibility.md lists recognised, each narrowly.

`scripts/side_by_side.py` is its command line, `tests/e2e/test_side_by_side.py` runs a small fleet through it,
and `benchmarks/side_by_side.py` times both schedulers with its generators and launchers.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from testsupport.realcluster.controlplane import (
    SCHEDULER_NAMESPACE,
    ControlPlane,
    free_port,
)
from testsupport.realcluster.karmada import Process, karmada_scheduler
from testsupport.realcluster.kube import KubeClient

PERMANENT_ID = "propagationpolicy.karmada.io/permanent-id"
CLUSTER_PERMANENT_ID = "clusterpropagationpolicy.karmada.io/permanent-id"
APPLIED_PLACEMENT = "policy.karmada.io/applied-placement"
REGIONS = {
    "us-east-1": ["us-east-1a", "us-east-1b", "us-east-1c"],
    "us-west-2": ["us-west-2a", "us-west-2b"],
    "eu-west-1": ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
    "ap-southeast-1": ["ap-southeast-1a", "ap-southeast-1b"],
}
PROVIDERS = ("aws", "gcp", "azure")
CPU = ("16", "32", "64000m", "96", "128")
MEMORY = ("64Gi", "128Gi", "262144Mi", "384Gi", "512Gi")

# -- the fleet ------------------------------------------------------------------------------------------------


def _api(group_version: str, *resources: tuple[str, str]) -> dict[str, Any]:
    return {"groupVersion": group_version, "resources": [{"name": n, "kind": k} for n, k in resources]}


def generate_clusters(rng: random.Random, prefix: str, count: int) -> list[dict[str, Any]]:
    """`count` Clusters named `<prefix>-mNN`. Index patterns guarantee coverage in any fleet of 8 or more: a
    Pull cluster (i % 4 == 1), resource models (i % 5 == 2), a GPU pool with a NoSchedule taint (i % 7 == 3),
    no batch/v1 (i % 6 == 4), a NoExecute taint (i % 8 == 6), no resource summary at all (i % 9 == 7); two
    plain env=prod clusters (0 and 5) and an env=staging one (1)."""
    clusters = []
    for i in range(count):
        region = list(REGIONS)[i % len(REGIONS)] if i < len(REGIONS) else rng.choice(list(REGIONS))
        zones = sorted(rng.sample(REGIONS[region], rng.randint(1, 2)))
        env = "prod" if i in (0, 5) else "staging" if i == 1 else rng.choice(["prod", "prod", "staging"])
        labels = {"env": env, "tier": rng.choice(["gold", "silver", "bronze"])}
        spec: dict[str, Any] = {
            "syncMode": "Pull" if i % 4 == 1 else "Push",
            "provider": rng.choice(PROVIDERS),
            "region": region,
            "zones": zones,
        }
        taints = []
        if i % 7 == 3:
            labels["accelerator"] = "nvidia"
            taints.append({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})
        if i % 8 == 6:
            taints.append({"key": "maintenance", "effect": "NoExecute"})
        if taints:
            spec["taints"] = taints
        apis = [
            _api("v1", ("configmaps", "ConfigMap"), ("namespaces", "Namespace"), ("services", "Service")),
            _api("apps/v1", ("deployments", "Deployment"), ("statefulsets", "StatefulSet")),
            _api("rbac.authorization.k8s.io/v1", ("clusterroles", "ClusterRole")),
        ]
        if i % 6 != 4:
            apis.append(_api("batch/v1", ("jobs", "Job")))
        allocatable = {"cpu": rng.choice(CPU), "memory": rng.choice(MEMORY), "pods": str(rng.choice([110, 220, 330]))}
        summary: dict[str, Any] = {
            "allocatable": allocatable,
            "allocated": {"cpu": f"{rng.randint(2, 12)}", "memory": f"{rng.randint(4, 48)}Gi",
                          "pods": str(rng.randint(10, 100))},
        }
        if rng.random() < 0.4:
            summary["allocating"] = {"cpu": f"{rng.randint(1, 4) * 500}m", "memory": f"{rng.randint(1, 8)}Gi",
                                     "pods": str(rng.randint(1, 10))}
        if i % 5 == 2:
            spec["resourceModels"] = [
                {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "4"},
                                        {"name": "memory", "min": "0", "max": "16Gi"}]},
                {"grade": 1, "ranges": [{"name": "cpu", "min": "4", "max": "16"},
                                        {"name": "memory", "min": "16Gi", "max": "64Gi"}]},
                {"grade": 2, "ranges": [{"name": "cpu", "min": "16", "max": "128"},
                                        {"name": "memory", "min": "64Gi", "max": "1Ti"}]},
            ]
            summary["allocatableModelings"] = [
                {"grade": 0, "count": rng.randint(0, 6)}, {"grade": 1, "count": rng.randint(1, 5)},
                {"grade": 2, "count": rng.randint(0, 2)},
            ]
        clusters.append({
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": f"{prefix}-m{i:02d}", "labels": labels},
            "spec": spec,
            "status": {
                "apiEnablements": apis,
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "ClusterReady",
                     "message": "cluster is healthy and ready to accept workloads",
                     "lastTransitionTime": "2026-01-01T00:00:00Z"},
                    {"type": "CompleteAPIEnablements", "status": "True", "reason": "Complete", "message": "",
                     "lastTransitionTime": "2026-01-01T00:00:00Z"},
                ],
                **({"resourceSummary": summary} if i % 9 != 7 else {}),
            },
        })
    return clusters


# -- the bindings ---------------------------------------------------------------------------------------------
# A generated binding is neutral: a logical name, a scope, a resource template (without namespace) and a spec
# without schedulerName. `copy_for` makes a scheduler's copy of it.


@dataclass(frozen=True)
class Generated:
    name: str
    kind: str  # ResourceBinding or ClusterResourceBinding
    spec: dict[str, Any]
    annotations: dict[str, str] = field(default_factory=dict)
    status: dict[str, Any] = field(default_factory=dict)  # written through /status, as Karmada's scheduler had


def _requirements(rng: random.Random, heavy: bool = False) -> dict[str, Any]:
    if heavy:
        return {"resourceRequest": {"cpu": "300", "memory": "2Ti"}}
    return {"resourceRequest": {"cpu": rng.choice(["250m", "500m", "1", "1500m", "2"]),
                                "memory": rng.choice(["256Mi", "512Mi", "1Gi", "1.5Gi", "4Gi"])}}


def _weighted(dynamic: bool = True) -> dict[str, Any]:
    preference: dict[str, Any] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
    if dynamic:
        preference["weightPreference"] = {"dynamicWeight": "AvailableReplicas"}
    return preference


def _workload(kind: str = "Deployment") -> dict[str, Any]:
    return {"apiVersion": "batch/v1" if kind == "Job" else "apps/v1", "kind": kind}


@dataclass(frozen=True)
class Fleet:
    names: list[str]  # every cluster
    plain_prod: list[str]  # env=prod, untainted, with every API: where a Deployment for env=prod can go
    not_prod: list[str]  # where a Deployment for env=prod cannot go


Maker = Callable[[random.Random, Fleet], tuple[dict[str, Any], dict[str, Any]]]


def _duplicated(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": rng.randint(1, 5), "replicaRequirements": _requirements(rng), "placement": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}


def _configmap(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"apiVersion": "v1", "kind": "ConfigMap"}, {"placement": {
        "clusterAffinity": {"clusterNames": sorted(rng.sample(fleet.names, 3))}}}


def _static_names(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    chosen = sorted(rng.sample(fleet.names, 3))
    weights = [{"targetCluster": {"clusterNames": [n]}, "weight": rng.randint(1, 4)} for n in chosen]
    return _workload(), {"replicas": rng.randint(5, 20), "placement": {
        "clusterAffinity": {"clusterNames": chosen},
        "replicaScheduling": {**_weighted(False), "weightPreference": {"staticWeightList": weights}}}}


def _static_labels(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    weights = [{"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
               {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "silver"}}}, "weight": 1}]
    return _workload(), {"replicas": rng.randint(6, 30), "placement": {
        "replicaScheduling": {**_weighted(False), "weightPreference": {"staticWeightList": weights}}}}


def _dynamic(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": rng.randint(10, 60), "replicaRequirements": _requirements(rng), "placement": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}, "replicaScheduling": _weighted()}}


def _aggregated(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload("StatefulSet"), {
        "replicas": rng.randint(4, 30), "replicaRequirements": _requirements(rng),
        "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided",
                                            "replicaDivisionPreference": "Aggregated"}}}


def _spread_cluster(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": rng.randint(6, 40), "replicaRequirements": _requirements(rng), "placement": {
        "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 3}],
        "replicaScheduling": _weighted()}}


def _spread_region(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": rng.randint(6, 40), "replicaRequirements": _requirements(rng), "placement": {
        "spreadConstraints": [{"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
                              {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 4}],
        "replicaScheduling": _weighted()}}


def _affinities(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Job whose first term selects nothing schedulable (no cluster is env=qa), so the second is used."""
    return _workload("Job"), {"replicas": rng.randint(2, 12), "replicaRequirements": _requirements(rng),
                              "placement": {"clusterAffinities": [
                                  {"affinityName": "qa-first", "labelSelector": {"matchLabels": {"env": "qa"}}},
                                  {"affinityName": "gold", "labelSelector": {"matchLabels": {"tier": "gold"}}},
                                  {"affinityName": "anywhere"}],
                                  "replicaScheduling": _weighted()}}


def _tolerations(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": rng.randint(2, 10), "replicaRequirements": _requirements(rng), "placement": {
        "clusterTolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        "replicaScheduling": _weighted(False)}}


def _eviction(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    workload, spec = _dynamic(rng, fleet)
    spec["gracefulEvictionTasks"] = [{"fromCluster": rng.choice(fleet.names), "reason": "TaintUntolerated",
                                      "producer": "TaintManager"}]
    return workload, spec


def _scaled(up: bool) -> Maker:
    """A dynamic binding already placed (spec.clusters, the applied placement annotation) on any two clusters,
    then scaled up or down."""
    def make(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
        workload, spec = _dynamic(rng, fleet)
        previous = [{"name": n, "replicas": rng.randint(2, 6)} for n in sorted(rng.sample(fleet.names, 2))]
        total = sum(c["replicas"] for c in previous)
        spec["replicas"] = total + rng.randint(3, 20) if up else max(1, total - rng.randint(1, total - 1))
        spec["clusters"] = previous
        return workload, spec
    return make


def _steady(stale: bool) -> Maker:
    """A dynamic binding placed with its current placement and not scaled (nothing to schedule by Karmada's
    rules), without a Scheduled condition, as a lost status write leaves it: on two clusters a pass would still
    choose, or (stale) on one of those and one its affinity (env=prod) does not select."""
    def make(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
        workload, spec = _dynamic(rng, fleet)
        if stale:
            chosen = [rng.choice(fleet.plain_prod), rng.choice(fleet.not_prod)]
        else:
            chosen = rng.sample(fleet.plain_prod, 2)
        spec["clusters"] = [{"name": n, "replicas": rng.randint(2, 6)} for n in sorted(chosen)]
        spec["replicas"] = sum(c["replicas"] for c in spec["clusters"])
        return workload, spec
    return make


def _no_fit(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": 3, "placement": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "qa"}}}, "replicaScheduling": _weighted()}}


def _too_big(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": 50, "replicaRequirements": _requirements(rng, heavy=True), "placement": {
        "replicaScheduling": _weighted()}}


def _by_label(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": 4, "placement": {
        "spreadConstraints": [{"spreadByLabel": "topology.example.com/rack", "minGroups": 1, "maxGroups": 2}],
        "replicaScheduling": _weighted()}}


def _spread_too_many(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    """More regions asked than the fleet has."""
    return _workload(), {"replicas": 8, "replicaRequirements": _requirements(rng), "placement": {
        "spreadConstraints": [{"spreadByField": "region", "minGroups": len(REGIONS) + 1,
                               "maxGroups": len(REGIONS) + 1},
                              {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 8}],
        "replicaScheduling": _weighted()}}


def _aggregated_region(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": rng.randint(10, 40), "replicaRequirements": _requirements(rng), "placement": {
        "spreadConstraints": [{"spreadByField": "region", "minGroups": 1, "maxGroups": 2}],
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}}


def _duplicated_spread(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": rng.randint(1, 4), "replicaRequirements": _requirements(rng), "placement": {
        "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}],
        "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}


def _zero_replicas(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return _workload(), {"replicas": 0, "replicaRequirements": _requirements(rng), "placement": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}, "replicaScheduling": _weighted()}}


def _components(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    """A multi-template workload (MultiplePodTemplatesScheduling is off in both, as by default)."""
    return {"apiVersion": "apps/v1", "kind": "Deployment"}, {"replicas": 6, "components": [
        {"name": "leader", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "2", "memory": "4Gi"}}},
        {"name": "worker", "replicas": 5, "replicaRequirements": _requirements(rng)}],
        "placement": {"replicaScheduling": _weighted()}}


def _affinities_observed(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    """Placed before by the second term (status names it), then scaled: the pass starts from that term."""
    workload, spec = _affinities(rng, fleet)
    spec["clusters"] = [{"name": n, "replicas": 2} for n in sorted(rng.sample(fleet.names, 2))]
    spec["replicas"] = 4 + rng.randint(1, 8)
    spec["status"] = {"schedulerObservingAffinityName": "gold"}
    return workload, spec


def _clusterrole(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}, {"placement": {
        "clusterAffinity": {"fieldSelector": {"matchExpressions": [
            {"key": "provider", "operator": "In", "values": ["aws", "gcp"]}]}}}}


def _namespace(rng: random.Random, fleet: Fleet) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"apiVersion": "v1", "kind": "Namespace"}, {"placement": {
        "clusterAffinity": {"fieldSelector": {"matchExpressions": [
            {"key": "region", "operator": "NotIn", "values": ["ap-southeast-1"]}]}},
        "clusterTolerations": [{"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}]}}


# (name, scope, maker). Bindings cycle through this list, so any len(KINDS) bindings hold every kind once.
KINDS: list[tuple[str, str, Maker]] = [
    ("duplicated", "ResourceBinding", _duplicated),
    ("static-names", "ResourceBinding", _static_names),
    ("dynamic", "ResourceBinding", _dynamic),
    ("aggregated", "ResourceBinding", _aggregated),
    ("spread-cluster", "ResourceBinding", _spread_cluster),
    ("spread-region", "ResourceBinding", _spread_region),
    ("affinities", "ResourceBinding", _affinities),
    ("tolerations", "ResourceBinding", _tolerations),
    ("clusterrole", "ClusterResourceBinding", _clusterrole),
    ("scale-up", "ResourceBinding", _scaled(up=True)),
    ("scale-down", "ResourceBinding", _scaled(up=False)),
    ("static-labels", "ResourceBinding", _static_labels),
    ("configmap", "ResourceBinding", _configmap),
    ("eviction", "ResourceBinding", _eviction),
    ("no-fit", "ResourceBinding", _no_fit),
    ("too-big", "ResourceBinding", _too_big),
    ("by-label", "ResourceBinding", _by_label),
    ("namespace", "ClusterResourceBinding", _namespace),
    ("spread-too-many", "ResourceBinding", _spread_too_many),
    ("aggregated-region", "ResourceBinding", _aggregated_region),
    ("duplicated-spread", "ResourceBinding", _duplicated_spread),
    ("zero-replicas", "ResourceBinding", _zero_replicas),
    ("components", "ResourceBinding", _components),
    ("affinities-observed", "ResourceBinding", _affinities_observed),
    ("steady", "ResourceBinding", _steady(stale=False)),
    ("steady-stale", "ResourceBinding", _steady(stale=True)),
]


def generate_bindings(rng: random.Random, clusters: Sequence[Mapping[str, Any]], count: int) -> list[Generated]:
    def plain_prod(cluster: Mapping[str, Any]) -> bool:
        return (cluster["metadata"]["labels"].get("env") == "prod" and not cluster["spec"].get("taints")
                and len(cluster["status"]["apiEnablements"]) == 4)

    fleet = Fleet(
        names=[c["metadata"]["name"] for c in clusters],
        plain_prod=[c["metadata"]["name"] for c in clusters if plain_prod(c)],
        not_prod=[c["metadata"]["name"] for c in clusters if c["metadata"]["labels"]["env"] != "prod"],
    )
    out = []
    for i in range(count):
        kind_name, scope, make = KINDS[i % len(KINDS)]
        workload, spec = make(rng, fleet)
        status = spec.pop("status", {})
        name = f"{kind_name}-{i:03d}"
        spec["resource"] = {**workload, "name": name, "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4))}
        annotations = {}
        if spec.get("clusters"):  # placed before: the placement it was placed with, as Karmada records it
            annotations[APPLIED_PLACEMENT] = json.dumps(spec["placement"], separators=(",", ":"), sort_keys=True)
        out.append(Generated(name=name, kind=scope, spec=spec, annotations=annotations, status=status))
    return out


@dataclass(frozen=True)
class Copy:
    """One scheduler's copy of the bindings: its scheduler name, namespace (ResourceBindings) and name prefix
    (ClusterResourceBindings)."""

    scheduler_name: str
    namespace: str
    prefix: str

    def name_of(self, generated: Generated) -> str:
        return f"{self.prefix}-{generated.name}" if generated.kind == "ClusterResourceBinding" else generated.name

    def document(self, generated: Generated) -> dict[str, Any]:
        spec = json.loads(json.dumps(generated.spec))
        spec["schedulerName"] = self.scheduler_name
        metadata: dict[str, Any] = {"name": self.name_of(generated)}
        if generated.kind == "ResourceBinding":
            metadata["namespace"] = self.namespace
            metadata["labels"] = {PERMANENT_ID: "side-by-side"}
            spec["resource"]["namespace"] = self.namespace
        else:
            metadata["labels"] = {CLUSTER_PERMANENT_ID: "side-by-side"}
        if generated.annotations:
            metadata["annotations"] = dict(generated.annotations)
        document = {"apiVersion": "work.karmada.io/v1alpha2", "kind": generated.kind, "metadata": metadata,
                    "spec": spec}
        if generated.status:
            document["status"] = json.loads(json.dumps(generated.status))
        return document


# -- the schedulers -------------------------------------------------------------------------------------------


def our_scheduler(
    plane: ControlPlane, scheduler_name: str, log: Path, *extra: str, tree: Path | None = None
) -> Process:
    """`binding-scheduler run` as its ServiceAccount, with the same flags as karmada_scheduler's (and `extra`);
    from `tree`'s operator/ folder when given (another checkout's code), else the interpreter's."""
    command = [
        sys.executable, "-m", "binding_scheduler.cli.main", "run",
        f"--kubeconfig={plane.operator_kubeconfig_path}", f"--namespace={SCHEDULER_NAMESPACE}",
        f"--scheduler-name={scheduler_name}",
        f"--leader-elect-resource-name={scheduler_name}",
        f"--leader-elect-resource-namespace={SCHEDULER_NAMESPACE}",
        f"--metrics-bind-address=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{free_port()}",
        "--enable-scheduler-estimator=false",
        *extra,
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree / "operator"), os.environ.get("PYTHONPATH")) if p)
    return Process(command, log, env=env)


def wait_leading(kube: KubeClient, process: Process, lease: str, timeout: float = 60.0) -> None:
    """Until `process` holds Lease `lease` (it then schedules)."""
    deadline = time.monotonic() + timeout
    while True:
        if not process.alive():
            raise RuntimeError(f"{process.command[0]} exited:\n{process.output()}")
        body = kube.get("Lease", lease, SCHEDULER_NAMESPACE)
        if body is not None and (body.get("spec") or {}).get("holderIdentity"):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{process.command[0]} did not take Lease {lease} in {timeout:g}s:\n{process.output()}")
        time.sleep(0.2)


# -- settling and comparing -----------------------------------------------------------------------------------


def scheduled_condition(body: Mapping[str, Any]) -> dict[str, Any] | None:
    for item in (body.get("status") or {}).get("conditions") or []:
        if item.get("type") == "Scheduled":
            return dict(item)
    return None


def settled(body: Mapping[str, Any]) -> bool:
    """A Scheduled condition for the current generation (a False one is never for a generation: Karmada
    records the generation only with success), or the generation recorded without one (Karmada's "no
    scheduling needed" path)."""
    observed = (body.get("status") or {}).get("schedulerObservedGeneration")
    current = body["metadata"].get("generation")
    condition = scheduled_condition(body)
    if condition is None:
        return bool(observed == current)
    return condition.get("status") != "True" or observed == current


def read_copy(kube: KubeClient, copy: Copy, generated: Sequence[Generated]) -> dict[str, dict[str, Any] | None]:
    """Each generated binding's copy as stored now (None: missing), by logical name."""
    namespaced = {b["metadata"]["name"]: b for b in kube.list("ResourceBinding", copy.namespace)}
    cluster_wide = {b["metadata"]["name"]: b for b in kube.list("ClusterResourceBinding")}
    return {
        g.name: (namespaced if g.kind == "ResourceBinding" else cluster_wide).get(copy.name_of(g))
        for g in generated
    }


def wait_settled(
    kube: KubeClient, copies: Sequence[Copy], generated: Sequence[Generated], *, quiet: float, timeout: float,
) -> tuple[list[dict[str, dict[str, Any] | None]], list[str]]:
    """Poll until every binding of every copy has settled and none changed for `quiet` seconds, or `timeout`.
    The bindings as last read, per copy, and the ones not settled (empty when all did)."""
    deadline = time.monotonic() + timeout
    last: list[str] | None = None
    since = time.monotonic()
    while True:
        states = [read_copy(kube, copy, generated) for copy in copies]
        versions = [f"{i}/{n}:{(b or {}).get('metadata', {}).get('resourceVersion')}"
                    for i, state in enumerate(states) for n, b in sorted(state.items())]
        pending = [f"{copy.scheduler_name}/{n}" for copy, state in zip(copies, states, strict=True)
                   for n, b in sorted(state.items()) if b is None or not settled(b)]
        now = time.monotonic()
        if versions != last:
            last, since = versions, now
        if not pending and now - since >= quiet:
            return states, []
        if now > deadline:
            return states, pending or ["(still changing)"]
        time.sleep(0.25)


@dataclass(frozen=True)
class Outcome:
    """What a scheduler decided for one binding, in the fields compared."""

    clusters: list[dict[str, Any]]
    status: str | None
    reason: str | None
    message: str | None
    affinity_name: str | None

    @classmethod
    def of(cls, body: Mapping[str, Any] | None, copy: Copy) -> Outcome:
        if body is None:
            return cls([], None, None, "(binding missing)", None)
        condition = scheduled_condition(body) or {}
        message = condition.get("message")
        if message is not None:
            message = message.replace(f"{copy.prefix}-", "<prefix>-").replace(copy.namespace, "<namespace>")
        return cls(
            clusters=list((body.get("spec") or {}).get("clusters") or []),
            status=condition.get("status"),
            reason=condition.get("reason"),
            message=message,
            affinity_name=(body.get("status") or {}).get("schedulerObservingAffinityName"),
        )

    def as_dict(self) -> dict[str, Any]:
        return {"clusters": self.clusters, "status": self.status, "reason": self.reason, "message": self.message,
                "schedulerObservingAffinityName": self.affinity_name}


@dataclass(frozen=True)
class Difference:
    name: str
    karmada: Outcome
    ours: Outcome
    documented: str | None = None  # the section of docs/compatibility.md that explains it, once checked

    @property
    def fields(self) -> list[str]:
        """The compared fields that differ."""
        a, b = self.karmada.as_dict(), self.ours.as_dict()
        return [key for key in a if a[key] != b[key]]

    def render(self) -> str:
        a, b = self.karmada.as_dict(), self.ours.as_dict()
        lines = [f"--- {self.name}" + (f"  (documented: {self.documented})" if self.documented else "")]
        for key in self.fields:
            lines.append(f"  {key}:\n    karmada: {json.dumps(a[key])}\n    ours:    {json.dumps(b[key])}")
        return "\n".join(lines)


def compare(
    generated: Sequence[Generated], karmada: tuple[Copy, Mapping[str, Any]], ours: tuple[Copy, Mapping[str, Any]],
) -> tuple[list[str], list[Difference]]:
    """The names of identical bindings, and the differences."""
    identical, different = [], []
    for g in generated:
        a, b = Outcome.of(karmada[1][g.name], karmada[0]), Outcome.of(ours[1][g.name], ours[0])
        if a == b:
            identical.append(g.name)
        else:
            different.append(Difference(g.name, a, b))
    return identical, different


# -- documented differences --------------------------------------------------------------------------------

FILTER_ORDER = "Fixed: Filters run in one fixed order"


def explained_by_filter_order(kube: KubeClient, copy: Copy, generated: Generated, difference: Difference,
                              workdir: Path) -> bool:
    """True when the difference is only the FitError message, and Karmada's message is what our filters' verdicts
    give under some order of the filter plugins (Karmada's order is a map's, random per process; ours is fixed:
    docs/compatibility.md). The verdicts are every filter's, per cluster, from `binding-scheduler explain` on
    the objects as stored (our copy of the binding, every Cluster)."""
    from itertools import permutations

    from binding_scheduler.algorithm.errors import fit_error_message

    if difference.fields != ["message"] or difference.karmada.reason != "NoClusterFit":
        return False
    binding = kube.get(generated.kind, copy.name_of(generated),
                       copy.namespace if generated.kind == "ResourceBinding" else None)
    if binding is None:
        return False
    source = workdir / f"explain-{generated.name}.json"
    source.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*kube.list("Cluster"), binding]}))
    name = copy.name_of(generated)
    key = f"{copy.namespace}/{name}" if generated.kind == "ResourceBinding" else name
    result = subprocess.run(
        [sys.executable, "-m", "binding_scheduler.cli.main", "explain", "-f", str(source), "--binding", key,
         "-o", "json", "--all"],  # the copy carries a scheduler name of the test's: explain it whatever it names
        capture_output=True, text=True, check=True,
    )
    attempt = json.loads(result.stdout)["attempts"][0]  # the first term's error is the one reported
    verdicts = {c["name"]: [(f["plugin"], f["reason"]) for f in c["filters"] if not f["passed"]]
                for c in attempt["clusters"]}
    plugins = sorted({plugin for failed in verdicts.values() for plugin, _ in failed})
    want = difference.karmada.message
    for order in permutations(plugins):
        rank = {plugin: i for i, plugin in enumerate(order)}
        diagnosis = {name: min(failed, key=lambda f: rank[f[0]])[1] for name, failed in verdicts.items() if failed}
        if fit_error_message(len(verdicts), diagnosis) == want:
            return True
    return False


NO_LOST_CONDITION = "Fixed: No lost Scheduled condition"


def explained_by_no_lost_condition(generated: Generated, difference: Difference, karmada: Mapping[str, Any] | None,
                                   ours: Mapping[str, Any] | None) -> bool:
    """True when a binding that needs no scheduling by Karmada's rules (placed with this placement, not scaled)
    but has no Scheduled condition ends, in Karmada's copy, with only its generation recorded and no condition,
    and in ours with the same placement, unchanged, and a Success condition for that generation
    (docs/compatibility.md: we decide again; Karmada leaves the condition missing for good)."""
    if karmada is None or ours is None or not set(difference.fields) <= {"status", "reason", "message"}:
        return False

    def observed(body: Mapping[str, Any]) -> bool:
        return bool((body.get("status") or {}).get("schedulerObservedGeneration") == body["metadata"]["generation"])

    placed = generated.spec.get("clusters")
    return (
        bool(placed) and generated.annotations.get(APPLIED_PLACEMENT) is not None
        and sum(c["replicas"] for c in placed) == generated.spec.get("replicas")
        and difference.karmada.clusters == difference.ours.clusters == placed
        and scheduled_condition(karmada) is None and observed(karmada)
        and (difference.ours.status, difference.ours.reason) == ("True", "Success") and observed(ours)
    )


# -- one whole run ------------------------------------------------------------------------------------------


@dataclass
class Report:
    generated: list[Generated]
    identical: list[str]
    differences: list[Difference]
    unsettled: list[str]
    seconds: float
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # Karmada's, by binding
    our_outcomes: dict[str, Outcome] = field(default_factory=dict)
    copies: tuple[Copy, Copy] | None = None  # Karmada's, ours

    def render(self, show: bool = False) -> str:
        documented = sum(1 for d in self.differences if d.documented)
        lines = [f"side by side: {len(self.identical)} of {len(self.generated)} bindings identical, "
                 f"{len(self.differences)} different ({documented} of them as docs/compatibility.md says) "
                 f"in {self.seconds:.1f}s"]
        if show:
            for name in self.identical:
                outcome = self.outcomes[name]
                placed = ", ".join(f"{c['name']}:{c.get('replicas', '-')}" for c in outcome.clusters)
                lines.append(f"  = {name}: [{placed}] {outcome.status} {outcome.reason} {outcome.affinity_name or ''}"
                             f"{' ' + repr(outcome.message) if outcome.status != 'True' else ''}")
        if self.unsettled:
            lines.append(f"NOT SETTLED: {', '.join(self.unsettled)}")
        lines.extend(d.render() for d in self.differences)
        return "\n".join(lines)


def run(
    plane: ControlPlane, *, clusters: int, bindings: int, seed: int, workdir: Path, quiet: float = 3.0,
    timeout: float = 120.0, create: Callable[[Iterable[Mapping[str, Any]]], object] | None = None,
) -> Report:
    """Generate, create (through `create`, default: the admin's client), run both schedulers, wait, compare."""
    started = time.monotonic()
    kube = plane.admin()
    rng = random.Random(seed)
    tag = uuid.uuid4().hex[:6]

    def create_all(documents: Iterable[Mapping[str, Any]]) -> object:
        return [kube.create(d) for d in documents]

    make = create or create_all
    fleet = generate_clusters(rng, f"sbs{tag}", clusters)
    generated = generate_bindings(rng, fleet, bindings)
    karmada_copy = Copy(f"karmada-{tag}", f"sbs-{tag}-karmada", f"k{tag}")
    our_copy = Copy(f"ours-{tag}", f"sbs-{tag}-ours", f"o{tag}")
    make([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": c.namespace}}
          for c in (karmada_copy, our_copy)])
    make(fleet)
    make([c.document(g) for g in generated for c in (karmada_copy, our_copy)])
    processes = [
        karmada_scheduler(plane, karmada_copy.scheduler_name, workdir / "karmada-scheduler.log"),
        our_scheduler(plane, our_copy.scheduler_name, workdir / "binding-scheduler.log"),
    ]
    try:
        for process, copy in zip(processes, (karmada_copy, our_copy), strict=True):
            wait_leading(kube, process, copy.scheduler_name)
        states, unsettled = wait_settled(kube, (karmada_copy, our_copy), generated, quiet=quiet, timeout=timeout)
    finally:
        for process in processes:
            process.stop()
    identical, differences = compare(generated, (karmada_copy, states[0]), (our_copy, states[1]))
    by_name = {g.name: g for g in generated}

    def documented(d: Difference) -> Difference:
        g = by_name[d.name]
        if explained_by_filter_order(kube, our_copy, g, d, workdir):
            return replace(d, documented=FILTER_ORDER)
        if explained_by_no_lost_condition(g, d, states[0][d.name], states[1][d.name]):
            return replace(d, documented=NO_LOST_CONDITION)
        return d

    differences = [documented(d) for d in differences]
    outcomes = {g.name: Outcome.of(states[0][g.name], karmada_copy) for g in generated}
    our_outcomes = {g.name: Outcome.of(states[1][g.name], our_copy) for g in generated}
    return Report(generated, identical, differences, unsettled, time.monotonic() - started, outcomes, our_outcomes,
                  (karmada_copy, our_copy))
