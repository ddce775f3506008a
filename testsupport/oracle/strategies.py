"""Hypothesis strategies for the differential tests: realistic fleets and bindings as plain, YAML-able documents.

A case is what `binding-scheduler simulate -f FILE` and `karmada-oracle` read: Clusters, then
(Cluster)ResourceBindings, plus the flags both sides take. Every document is one a real API server would store
with Karmada's CRDs (crds/): most bindings are what Karmada's detector makes from a (Cluster)PropagationPolicy
(the policy webhook's defaults and validation applied); a few are bindings created directly, which carry
what the CRD allows but a policy could not (`DIRECT_EDGES`: no webhook defaults, repeated spread fields,
selectors Kubernetes cannot parse).

Fleets: 1 to 200 clusters, most small. Up to `DRAWN_FLEET` clusters every attribute is drawn by hypothesis;
bigger fleets are expanded from one drawn seed with `random.Random`, through the same builders (`Chooser`), so
that a big fleet does not exhaust hypothesis's choice budget.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

DRAWN_FLEET = 12
DELETED_AT = "2026-03-01T10:00:00Z"
TRANSITION = "2026-02-01T08:00:00Z"

# provider -> region -> zones (valid label values, as field selectors need them to be)
TOPOLOGY: dict[str, dict[str, tuple[str, ...]]] = {
    "aws": {
        "us-east-1": ("us-east-1a", "us-east-1b", "us-east-1c"),
        "eu-west-1": ("eu-west-1a", "eu-west-1b"),
        "ap-southeast-1": ("ap-southeast-1a",),
    },
    "gcp": {
        "us-central1": ("us-central1-a", "us-central1-b"),
        "europe-west4": ("europe-west4-a", "europe-west4-b"),
    },
    "azure": {"westeurope": ("westeurope-1", "westeurope-2"), "eastus": ("eastus-1",)},
    "onprem": {"dc-fra": ("fra-hall1",), "dc-ams": ()},
}
PROVIDERS = tuple(TOPOLOGY)
REGIONS = tuple(r for regions in TOPOLOGY.values() for r in regions)
ZONES = tuple(z for regions in TOPOLOGY.values() for zones in regions.values() for z in zones)

LABELS: dict[str, tuple[str, ...]] = {
    "env": ("prod", "staging", "dev"),
    "tier": ("gold", "silver", "bronze"),
    "team": ("payments", "search", "ml"),
    "topology.example.com/rack": ("r1", "r2", "r3"),
    "gpu": ("true",),
    "karmada.io/edge": ("true", "false"),
}

# (key, value, effect): what Karmada's cluster controllers and operators put on clusters
TAINTS: tuple[tuple[str, str, str], ...] = (
    ("cluster.karmada.io/not-ready", "", "NoSchedule"),
    ("cluster.karmada.io/unreachable", "", "NoExecute"),
    ("dedicated", "gpu", "NoSchedule"),
    ("maintenance", "", "PreferNoSchedule"),
    ("spot", "true", "NoExecute"),
    ("dedicated", "batch", "PreferNoSchedule"),
)

TOLERATIONS: tuple[dict[str, Any], ...] = (
    {"key": "cluster.karmada.io/not-ready", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "cluster.karmada.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "gpu"},
    {"key": "spot", "operator": "Exists"},
    {"key": "spot", "operator": "Equal", "value": "false", "effect": "NoExecute"},
    {"operator": "Exists"},
    {"operator": "Exists", "effect": "NoSchedule"},
)

# groupVersion -> kinds a member cluster may serve
APIS: dict[str, tuple[str, ...]] = {
    "v1": ("ConfigMap", "Service", "Secret", "Namespace"),
    "apps/v1": ("Deployment", "StatefulSet", "DaemonSet"),
    "batch/v1": ("Job", "CronJob"),
    "rbac.authorization.k8s.io/v1": ("ClusterRole", "ClusterRoleBinding"),
    "flink.apache.org/v1beta1": ("FlinkDeployment",),
    "ray.io/v1": ("RayCluster",),
}


@dataclass(frozen=True)
class Workload:
    """A kind of resource template a binding points at."""

    api_version: str
    kind: str
    namespaced: bool = True
    replicated: bool = True  # has spec.replicas (a workload); False: ConfigMap-like
    components: tuple[str, ...] = ()  # pod templates of a multi-template workload


WORKLOADS: tuple[tuple[Workload, int], ...] = (  # (workload, weight)
    (Workload("apps/v1", "Deployment"), 10),
    (Workload("apps/v1", "StatefulSet"), 3),
    (Workload("batch/v1", "Job"), 2),
    (Workload("v1", "ConfigMap", replicated=False), 3),
    (Workload("v1", "Service", replicated=False), 2),
    (Workload("rbac.authorization.k8s.io/v1", "ClusterRole", namespaced=False, replicated=False), 2),
    (Workload("flink.apache.org/v1beta1", "FlinkDeployment", components=("jobmanager", "taskmanager")), 3),
    (Workload("ray.io/v1", "RayCluster", components=("head", "worker", "gpu-worker")), 1),
    (Workload("example.io/v1alpha1", "Widget"), 1),  # an API no member serves
)

PLUGIN_SETS = ("*", "*,-TaintToleration", "*,-ClusterAffinity", "*,-APIEnablement", "*,-ClusterLocality",
               "*,-SpreadConstraint", "*,-ClusterEviction", "APIEnablement,ClusterAffinity")

# The bindings created directly (not from a policy) may carry what only the CRD allows. Each is named so that
# a divergence can be traced back to the shape that made it.
DIRECT_EDGES = (
    "no-min-groups",  # spread constraints without minGroups (the policy webhook sets 1)
    "no-spread-field",  # a spread constraint with neither spreadByField nor spreadByLabel (webhook: cluster)
    "no-division-preference",  # Divided without replicaDivisionPreference (webhook: Weighted)
    "repeated-spread-field",  # the same spreadByField twice (the policy validation refuses it)
    "invalid-field-selector",  # empty key, Gt without values, an operator Kubernetes does not know
    "invalid-label-selector",  # In without values, an invalid key or value, an unknown operator
    "empty-affinities",  # clusterAffinities: [] (a policy's empty list is dropped on the way to the binding)
    "odd-tolerations",  # what pod validation refuses but no check of Karmada's does (Exists with a value, ...)
)

ODD_TOLERATIONS: tuple[dict[str, Any], ...] = (
    {"key": "dedicated", "operator": "Exists", "value": "cpu", "effect": "NoSchedule"},
    {"operator": "Equal", "value": "gpu"},
    {"value": ""},
    {"key": "spot", "operator": "Gt", "value": "0"},
    {"key": "cluster.karmada.io/not-ready", "operator": "exists"},
    {"key": "dedicated", "operator": "Exists", "effect": "noschedule"},
)


class Chooser(Protocol):
    """Where the builders get their choices: hypothesis draws, or a seeded `random.Random` for big fleets."""

    def pick(self, options: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...

    def chance(self, percent: int) -> bool: ...

    def subset(self, options: Sequence[T], low: int = 0, high: int | None = None) -> list[T]: ...

    def uid(self) -> str: ...


class Drawn:
    """A Chooser drawing from hypothesis (shrinks, explores boundaries)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) < percent

    def subset(self, options: Sequence[T], low: int = 0, high: int | None = None) -> list[T]:
        high = len(options) if high is None else min(high, len(options))
        indexes = self.draw(st.lists(st.integers(0, len(options) - 1), min_size=min(low, high), max_size=high,
                                     unique=True)) if options else []
        return [options[i] for i in indexes]

    def uid(self) -> str:
        return str(self.draw(st.uuids()))


class Seeded:
    """A Chooser from `random.Random(seed)` (same builders, no hypothesis budget)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent

    def subset(self, options: Sequence[T], low: int = 0, high: int | None = None) -> list[T]:
        high = len(options) if high is None else min(high, len(options))
        count = self.rng.randint(min(low, high), high)
        return self.rng.sample(list(options), count)

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


def weighted(c: Chooser, options: Sequence[tuple[T, int]]) -> T:
    """One of `options`, each (value, weight)."""
    total = sum(w for _, w in options)
    roll = c.integer(0, total - 1)
    for value, weight in options:
        if roll < weight:
            return value
        roll -= weight
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------------------- clusters


@dataclass
class Fleet:
    """The clusters of a case, as documents, with what the binding builders need to refer to them."""

    clusters: list[dict[str, Any]] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [c["metadata"]["name"] for c in self.clusters]

    def values(self, what: str) -> list[str]:
        """The providers, regions or zones present in the fleet (sorted, no duplicates)."""
        found: set[str] = set()
        for cluster in self.clusters:
            spec = cluster.get("spec", {})
            if what == "zone":
                found.update(spec.get("zones") or ())
            elif spec.get(what):
                found.add(spec[what])
        return sorted(found)


def _cpu(c: Chooser, cores: int) -> Any:
    return c.pick([str(cores), f"{cores * 1000}m", cores, f"{cores}.0", f"{cores / 1000}k", f"{cores}e0",
                   f"{cores * 10**9}n"])


def _memory(c: Chooser, gib: int) -> Any:
    return c.pick([f"{gib}Gi", f"{gib * 1024}Mi", str(gib * 2**30), f"{gib * 1074}M", f"{gib / 1024}Ti",
                   f"{gib * 2**30 // 1000}k", f"{gib}.5Gi", f"{gib * 2**20}Ki"])


def _resource_models(c: Chooser) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Karmada's default model shape: contiguous grades of cpu and memory, the last one open-ended."""
    grades = c.integer(1, 5)
    cpu_edges = [0, 1, 2, 4, 8, 16, 32][: grades + 1]
    memory_edges = [0, 4, 16, 32, 64, 128, 256][: grades + 1]
    models = []
    for grade in range(grades):
        last = grade == grades - 1
        models.append({
            "grade": grade,
            "ranges": [
                {"name": "cpu", "min": str(cpu_edges[grade]),
                 "max": "9223372036854775807" if last else str(cpu_edges[grade + 1])},
                {"name": "memory", "min": f"{memory_edges[grade]}Gi",
                 "max": "9223372036854775807" if last else f"{memory_edges[grade + 1]}Gi"},
            ],
        })
    modelings = [{"grade": g, "count": c.integer(0, 40)} for g in range(grades)]
    return models, modelings


def _resource_summary(c: Chooser) -> dict[str, Any] | None:
    if c.chance(7):
        return None
    nodes = c.integer(1, 60)
    cores, gib = nodes * c.pick([4, 8, 16, 32]), nodes * c.pick([16, 32, 64, 128])
    allocatable: dict[str, Any] = {"cpu": _cpu(c, cores), "memory": _memory(c, gib)}
    if not c.chance(5):
        allocatable["pods"] = c.pick([str(nodes * 110), nodes * 110, str(nodes * 30)])
    if c.chance(15):
        allocatable["nvidia.com/gpu"] = str(nodes * c.pick([1, 4, 8]))
    if c.chance(10):
        allocatable["ephemeral-storage"] = f"{nodes * 100}Gi"
    summary: dict[str, Any] = {"allocatable": allocatable}
    if c.chance(80):
        busy = c.pick([0, 10, 40, 75, 95, 100, 120])  # percent used; over 100: overcommitted
        summary["allocated"] = {
            "cpu": f"{cores * 10 * busy}m",
            "memory": f"{gib * 1024 * c.pick([busy, max(busy - 20, 0)]) // 100}Mi",
            "pods": str(nodes * 110 * busy // 100 if "pods" in allocatable else 0),
        }
    if c.chance(25):
        summary["allocating"] = {"cpu": f"{c.integer(0, 4000)}m", "memory": f"{c.integer(0, 8)}Gi",
                                 "pods": str(c.integer(0, 30))}
    return summary


def cluster_document(c: Chooser, index: int) -> dict[str, Any]:
    provider = c.pick([*PROVIDERS, ""]) if not c.chance(5) else ""
    regions = TOPOLOGY.get(provider) or {r: z for t in TOPOLOGY.values() for r, z in t.items()}
    region = c.pick(sorted(regions)) if not c.chance(8) else ""
    zones = c.subset(regions.get(region, ()), 0, 2) if region else []
    prefix = c.pick(["member", provider or "dc", "edge", "c"])
    name = f"{prefix}-{index}" if prefix != "c" else f"c{index}"
    labels = {key: c.pick(values) for key in c.subset(sorted(LABELS), 1 if c.chance(90) else 0, 5)
              for values in [LABELS[key]]}
    spec: dict[str, Any] = {"syncMode": c.pick(["Push", "Push", "Push", "Pull"])}
    if c.chance(80):
        spec["id"] = c.uid()
    if provider:
        spec["provider"] = provider
    if region:
        spec["region"] = region
    if zones:
        spec["zones"] = zones
    if zones and c.chance(10):
        spec["zone"] = zones[0]
    taints = []
    for key, value, effect in c.subset(TAINTS, 0, 2) if c.chance(35) else []:
        if any(t["key"] == key and t["effect"] == effect for t in taints):
            continue
        taint = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        taints.append(taint)
    if taints:
        spec["taints"] = taints
    not_ready = any(t["key"].startswith("cluster.karmada.io/") for t in taints)
    ready = "False" if not_ready and c.chance(80) else c.pick(["True", "True", "True", "True", "Unknown"])
    conditions: list[dict[str, Any]] = [{
        "type": "Ready", "status": ready, "reason": "ClusterReady" if ready == "True" else "ClusterNotReachable",
        "message": "", "lastTransitionTime": TRANSITION,
    }]
    if c.chance(75):
        complete = c.pick(["True", "True", "False"])
        conditions.append({"type": "CompleteAPIEnablements", "status": complete,
                           "reason": "Complete" if complete == "True" else "Partial", "message": "",
                           "lastTransitionTime": TRANSITION})
    enablements = []
    for group_version in sorted(APIS):
        core = group_version in ("v1", "apps/v1")
        if c.chance(97 if core else 65):
            kinds = APIS[group_version]
            served = kinds if c.chance(85) else c.subset(kinds, 1)
            enablements.append({
                "groupVersion": group_version,
                "resources": [{"name": kind.lower() + "s", "kind": kind} for kind in served],
            })
    status: dict[str, Any] = {"conditions": conditions}
    if enablements:
        status["apiEnablements"] = enablements
    summary = _resource_summary(c)
    if summary is not None:
        if c.chance(30):
            models, modelings = _resource_models(c)
            spec["resourceModels"] = models
            summary["allocatableModelings"] = modelings
        status["resourceSummary"] = summary
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    if c.chance(4):
        metadata["deletionTimestamp"] = DELETED_AT
        metadata["finalizers"] = ["karmada.io/cluster-controller"]
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": metadata,
            "spec": spec, "status": status}


def fleet_size(c: Chooser) -> int:
    return weighted(c, [(c.integer(1, 5), 12), (c.integer(6, 15), 5), (c.integer(16, 50), 2),
                        (c.integer(51, 200), 1)])


# ---------------------------------------------------------------------------------------------------- bindings


def _requirement(c: Chooser, fleet: Fleet, edge: bool) -> dict[str, Any]:
    """One field-selector expression on provider, region or zone."""
    key = c.pick(["provider", "region", "zone"])
    every = {"provider": PROVIDERS, "region": REGIONS, "zone": ZONES}[key]
    pool = [*(fleet.values(key) or every), c.pick(every)]
    operator = weighted(c, [("In", 12), ("NotIn", 5), ("Exists", 2), ("DoesNotExist", 2)])
    if edge:
        shape = weighted(c, [("empty-key", 4), ("gt-no-values", 3), ("lt", 1), ("unknown-operator", 1),
                             ("other-key", 1), ("in-no-values", 1), ("exists-with-values", 1), ("invalid-value", 1)])
        if shape == "empty-key":
            return {"key": "", "operator": c.pick(["In", "Exists"]), **({"values": [pool[0]]} if c.chance(50) else {})}
        if shape == "gt-no-values":
            return {"key": key, "operator": c.pick(["Gt", "Lt"])}
        if shape == "lt":
            return {"key": key, "operator": c.pick(["Gt", "Lt"]), "values": [str(c.integer(0, 9))]}
        if shape == "unknown-operator":
            return {"key": key, "operator": c.pick(["Equals", "in", ""]), "values": [pool[0]]}
        if shape == "other-key":
            return {"key": c.pick(["cluster", "name", "env"]), "operator": c.pick(["In", "NotIn", "DoesNotExist"]),
                    **({"values": [pool[0]]} if c.chance(70) else {})}
        if shape == "in-no-values":
            return {"key": key, "operator": c.pick(["In", "NotIn"]), "values": []}
        if shape == "exists-with-values":
            return {"key": key, "operator": c.pick(["Exists", "DoesNotExist"]), "values": [pool[0]]}
        return {"key": key, "operator": "In", "values": [pool[0] + " (old)"]}
    if operator in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": operator}
    return {"key": key, "operator": operator, "values": c.subset(pool, 1, 3)}


def _label_selector(c: Chooser, edge: bool) -> dict[str, Any]:
    if edge:
        shape = c.pick(["in-no-values", "invalid-key", "invalid-value", "unknown-operator", "exists-with-values"])
        key = c.pick(sorted(LABELS))
        if shape == "in-no-values":
            return {"matchExpressions": [{"key": key, "operator": c.pick(["In", "NotIn"]), "values": []}]}
        if shape == "invalid-key":
            bad = c.pick(["bad key", "-env", "a/b/c", "/env"])
            return c.pick([{"matchLabels": {bad: "x"}},
                           {"matchExpressions": [{"key": bad, "operator": c.pick(["NotIn", "DoesNotExist"]),
                                                  **({"values": ["x"]} if c.chance(50) else {})}]}])
        if shape == "invalid-value":
            return c.pick([{"matchLabels": {key: "not valid!"}},
                           {"matchExpressions": [{"key": key, "operator": "NotIn", "values": ["not valid!"]}]}])
        if shape == "unknown-operator":
            return {"matchExpressions": [{"key": key, "operator": c.pick(["Gt", "Equals", "in"]), "values": ["1"]}]}
        return {"matchExpressions": [{"key": key, "operator": c.pick(["Exists", "DoesNotExist"]), "values": ["x"]}]}
    selector: dict[str, Any] = {}
    if c.chance(60):
        keys = c.subset(sorted(LABELS), 1, 1 if c.chance(75) else 2)
        selector["matchLabels"] = {key: c.pick(LABELS[key]) for key in keys}
    if not selector or c.chance(40):
        expressions = []
        for key in c.subset(sorted(LABELS), 1, 2):
            operator = weighted(c, [("In", 5), ("NotIn", 3), ("Exists", 2), ("DoesNotExist", 2)])
            expression: dict[str, Any] = {"key": key, "operator": operator}
            if operator in ("In", "NotIn"):
                expression["values"] = c.subset([*LABELS[key], "other"], 1, 3)
            expressions.append(expression)
        selector["matchExpressions"] = expressions
    return selector


def cluster_affinity(c: Chooser, fleet: Fleet, edges: set[str], *, non_empty: bool = False) -> dict[str, Any]:
    names = fleet.names
    affinity: dict[str, Any] = {}
    if c.chance(35):
        chosen = c.subset(names, 1, 5)
        if c.chance(10):
            chosen.append("gone-cluster")
        affinity["clusterNames"] = chosen
    if c.chance(12):
        affinity["exclude"] = c.subset(names, 1, 2)
    label_edge = "invalid-label-selector" in edges and c.chance(70)
    if label_edge or c.chance(35):
        affinity["labelSelector"] = _label_selector(c, label_edge)
    field_edge = "invalid-field-selector" in edges and c.chance(80)
    if field_edge or c.chance(25):
        expressions = [_requirement(c, fleet, False) for _ in range(c.integer(0 if field_edge else 1, 2))]
        if field_edge:
            expressions.insert(c.integer(0, len(expressions)), _requirement(c, fleet, True))
        affinity["fieldSelector"] = {"matchExpressions": expressions}
    if non_empty and not affinity:
        affinity["clusterNames"] = c.subset(names, 1, 3)
    return affinity


def _spread_constraints(c: Chooser, fleet: Fleet, edges: set[str]) -> list[dict[str, Any]] | None:
    if not c.chance(40):
        return None
    size = max(len(fleet.names), 1)
    shape = weighted(c, [("cluster", 10), ("region", 5), ("unsupported", 2), ("label", 1)])

    def constraint(by: str, top: int) -> dict[str, Any]:
        low = c.integer(1, max(1, min(top, 4)))
        out: dict[str, Any] = {"spreadByField": by, "minGroups": low}
        if not c.chance(8):  # maxGroups 0 (absent): Karmada's quirks
            out["maxGroups"] = c.integer(low, max(low, min(top, 6)))
        return out

    if shape == "label":
        constraints = [{"spreadByLabel": "topology.example.com/rack", "minGroups": 1, "maxGroups": 2}]
    elif shape == "unsupported":
        constraints = [constraint(c.pick(["zone", "provider"]), 3), constraint("cluster", size)]
        if c.chance(30):  # with a region constraint too: Karmada selects by region, the other field only filters
            constraints.insert(0, constraint("region", 3))
    elif shape == "region":
        constraints = [constraint("region", 3), constraint("cluster", size)]
        if c.chance(30):
            constraints.reverse()
    else:
        constraints = [constraint("cluster", size)]
    if "no-min-groups" in edges:
        for item in constraints:
            if c.chance(60):
                item.pop("minGroups", None) if c.chance(70) else item.update(minGroups=0)
    if "no-spread-field" in edges:
        target = c.pick(constraints)
        target.pop("spreadByField", None)
        target.pop("spreadByLabel", None)
    if "repeated-spread-field" in edges:
        again = dict(c.pick([x for x in constraints if "spreadByField" in x] or constraints))
        again["minGroups"] = c.integer(1, 3)
        again["maxGroups"] = c.integer(again["minGroups"], 5)
        constraints.insert(c.integer(0, len(constraints)), again)
    return constraints


def _static_weights(c: Chooser, fleet: Fleet) -> list[dict[str, Any]]:
    rules = []
    for _ in range(c.integer(1, 4)):
        how = c.pick(["names", "names", "labels", "fields"])
        if how == "names":
            target: dict[str, Any] = {"clusterNames": c.subset(fleet.names, 1, 3)}
        elif how == "labels":
            key = c.pick(sorted(LABELS))
            target = {"labelSelector": {"matchLabels": {key: c.pick(LABELS[key])}}}
        else:
            key = c.pick(["provider", "region", "zone"])
            values = fleet.values(key) or list(REGIONS)
            operator = weighted(c, [("In", 6), ("NotIn", 3), ("Exists", 1), ("DoesNotExist", 1)])
            expression: dict[str, Any] = {"key": key, "operator": operator}
            if operator in ("In", "NotIn"):
                expression["values"] = c.subset(values, 1, 2)
            target = {"fieldSelector": {"matchExpressions": [expression]}}
        rules.append({"targetCluster": target, "weight": c.pick([1, 1, 2, 3, 5, 10])})
    return rules


def _replica_scheduling(c: Chooser, fleet: Fleet, edges: set[str]) -> dict[str, Any] | None:
    shape = weighted(c, [("none", 3), ("duplicated", 4), ("aggregated", 4), ("weighted", 2), ("static", 3),
                         ("dynamic", 4)])
    if shape == "none":
        return None
    if shape == "duplicated":
        return {"replicaSchedulingType": "Duplicated"}
    out: dict[str, Any] = {"replicaSchedulingType": "Divided"}
    if shape == "aggregated":
        out["replicaDivisionPreference"] = "Aggregated"
    else:
        out["replicaDivisionPreference"] = "Weighted"
    if shape == "static":
        out["weightPreference"] = {"staticWeightList": _static_weights(c, fleet)}
    elif shape == "dynamic":
        out["weightPreference"] = {"dynamicWeight": "AvailableReplicas"}
    if "no-division-preference" in edges:
        del out["replicaDivisionPreference"]
        if c.chance(30):
            del out["replicaSchedulingType"]  # the CRD's default (Divided) applies
    return out


def _requirements(c: Chooser, namespace: str) -> dict[str, Any]:
    request: dict[str, Any] = {}
    if c.chance(90):
        request["cpu"] = c.pick(["100m", "250m", "500m", "1", "2", "4", "8", "1500m", 1, "0.3", "1.25", "333m",
                                 "1e-1", "50000u"])
    if c.chance(85):
        request["memory"] = c.pick(["128Mi", "512Mi", "1Gi", "2Gi", "8Gi", "16Gi", "1G", "1.5Gi", "100M",
                                    "300000000", "0.25Gi", "64Ki"])
    if c.chance(8):
        request["nvidia.com/gpu"] = c.pick(["1", "2"])
    if c.chance(5):
        request["ephemeral-storage"] = "10Gi"
    out: dict[str, Any] = {"resourceRequest": request}
    if namespace:
        out["namespace"] = namespace
    if c.chance(15):
        out["nodeClaim"] = c.pick([
            {"nodeSelector": {"kubernetes.io/os": "linux"}},
            {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]},
            {"hardNodeAffinity": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "n2-std-4"]}]}]}},
        ])
    if c.chance(10):
        out["priorityClassName"] = c.pick(["high-priority", "system-cluster-critical"])
    return out


def _previous(c: Chooser, fleet: Fleet, replicas: int, divided: bool) -> list[dict[str, Any]]:
    names = c.subset(fleet.names, 1, 4)
    if c.chance(10):
        names.append("gone-cluster")
    previous = []
    for name in names:
        entry: dict[str, Any] = {"name": name}
        if divided and replicas:
            entry["replicas"] = c.integer(0 if c.chance(10) else 1, max(1, replicas))
        elif replicas and c.chance(80):
            entry["replicas"] = replicas
        previous.append(entry)
    return previous


def binding_document(c: Chooser, fleet: Fleet, index: int, edges: set[str] | None = None) -> dict[str, Any]:
    """A binding over the fleet; `edges` forces the shapes of a directly created binding (default: drawn)."""
    workload = weighted(c, WORKLOADS)
    scope = "ResourceBinding" if workload.namespaced and not c.chance(8) else "ClusterResourceBinding"
    namespace = c.pick(["default", "shop", "ml"]) if workload.namespaced else ""
    name = f"{workload.kind.lower()}-{index}"
    if edges is None:
        edges = set(c.subset(DIRECT_EDGES, 1, 2)) if c.chance(14) else set()
        if "empty-affinities" in edges and not c.chance(30):
            edges.discard("empty-affinities")  # it makes the rest of the placement moot: rarer

    placement: dict[str, Any] = {}
    mode = weighted(c, [("none", 6), ("affinity", 9), ("affinities", 4)])
    if mode == "none" and edges & {"invalid-field-selector", "invalid-label-selector"}:
        mode = "affinity"
    scheduling = _replica_scheduling(c, fleet, edges)
    if "empty-affinities" in edges:
        placement["clusterAffinities"] = []
    elif mode == "affinity":
        placement["clusterAffinity"] = cluster_affinity(c, fleet, edges)
    elif mode == "affinities":
        overflow_allowed = scheduling is not None and (
            scheduling.get("replicaDivisionPreference") == "Aggregated"
            or "dynamicWeight" in (scheduling.get("weightPreference") or {}))
        terms = []
        for term_name in ["primary", "secondary", "fallback"][: c.integer(1, 3)]:
            term = {"affinityName": term_name, **cluster_affinity(c, fleet, edges, non_empty=True)}
            if overflow_allowed and c.chance(30):
                term["overflowAffinities"] = [
                    {"affinityName": f"{term_name}-burst{i}", **cluster_affinity(c, fleet, edges, non_empty=True)}
                    for i in range(c.integer(1, 2))
                ]
            terms.append(term)
        placement["clusterAffinities"] = terms
    if c.chance(35):
        placement["clusterTolerations"] = c.subset(TOLERATIONS, 1, 2)
    if "odd-tolerations" in edges:
        placement["clusterTolerations"] = [*placement.get("clusterTolerations", []), *c.subset(ODD_TOLERATIONS, 1, 2)]
    spread = _spread_constraints(c, fleet, edges)
    if spread is not None:
        placement["spreadConstraints"] = spread
    if scheduling is not None:
        placement["replicaScheduling"] = scheduling

    spec: dict[str, Any] = {
        "resource": {"apiVersion": workload.api_version, "kind": workload.kind, "name": name.rsplit("-", 1)[0],
                     "uid": c.uid(), "resourceVersion": str(c.integer(1, 99999))},
    }
    if workload.namespaced:
        spec["resource"]["namespace"] = namespace
    replicas = 0
    if workload.components:
        components = []
        for component in workload.components[: c.integer(1, len(workload.components))]:
            item: dict[str, Any] = {"name": component, "replicas": 1 if component in ("jobmanager", "head")
                                    else c.integer(0, 12)}
            if c.chance(85):
                item["replicaRequirements"] = _requirements(c, namespace)
            components.append(item)
        spec["components"] = components
        if c.chance(50):  # the detector also writes the first template as replicas/replicaRequirements
            first = components[0]
            replicas = first["replicas"]
            if replicas:
                spec["replicas"] = replicas
            if "replicaRequirements" in first:
                spec["replicaRequirements"] = first["replicaRequirements"]
    elif workload.replicated:
        replicas = weighted(c, [(c.integer(1, 12), 10), (0, 1), (c.integer(13, 300), 3), (c.integer(301, 5000), 1)])
        if replicas:
            spec["replicas"] = replicas
        if c.chance(65):
            spec["replicaRequirements"] = _requirements(c, namespace)
    if c.chance(93):
        spec["placement"] = placement
    divided = (scheduling or {}).get("replicaSchedulingType", "Divided") == "Divided" and scheduling is not None
    if c.chance(40):
        spec["clusters"] = _previous(c, fleet, replicas, divided)
    if c.chance(8):
        sources = [t["name"] for t in spec.get("clusters", [])] or fleet.names
        spec["gracefulEvictionTasks"] = [
            {"fromCluster": source, "reason": c.pick(["TaintUntolerated", "ApplicationFailure"]),
             "producer": c.pick(["TaintManager", "ResourceBindingController"]), "replicas": c.integer(0, 5)}
            for source in c.subset(sources, 1, 2)
        ]
    status: dict[str, Any] = {}
    terms = placement.get("clusterAffinities") or []
    if terms and c.chance(40):
        status["schedulerObservingAffinityName"] = c.pick([t["affinityName"] for t in terms] + ["retired-term"])
    if spec.get("clusters") and c.chance(70):
        status["lastScheduledTime"] = "2026-02-10T12:00:00Z"
        if c.chance(15):
            spec["rescheduleTriggeredAt"] = c.pick(["2026-02-11T00:00:00Z", "2026-02-09T00:00:00Z"])
    metadata: dict[str, Any] = {"name": name, "generation": c.integer(1, 4)}
    if namespace and scope == "ResourceBinding":
        metadata["namespace"] = namespace
    policy_label = ("propagationpolicy.karmada.io/permanent-id" if scope == "ResourceBinding"
                    else "clusterpropagationpolicy.karmada.io/permanent-id")
    if not edges:
        metadata["labels"] = {policy_label: c.uid()}
    document: dict[str, Any] = {"apiVersion": "work.karmada.io/v1alpha2", "kind": scope, "metadata": metadata,
                                "spec": spec}
    if status:
        document["status"] = status
    return document


# ---------------------------------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One input of the differential test: documents (Clusters first) and the flags both sides get."""

    documents: list[dict[str, Any]]
    flags: dict[str, Any]

    def simulate_args(self) -> list[str]:
        """The flags as `binding-scheduler simulate` (and karmada-oracle) take them on the command line."""
        args = []
        if self.flags.get("plugins", "*") != "*":
            args += ["--plugins", self.flags["plugins"]]
        if self.flags.get("enableEmptyWorkloadPropagation"):
            args.append("--enable-empty-workload-propagation")
        gates = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.flags.get("featureGates", {}).items()))
        if gates:
            args += ["--feature-gates", gates]
        return args


def build_case(c: Chooser, fleet_chooser: Callable[[int], Chooser], edges: set[str] | None = None) -> Case:
    size = fleet_size(c)
    fleet_c = c if size <= DRAWN_FLEET else fleet_chooser(size)
    fleet = Fleet([cluster_document(fleet_c, i) for i in range(size)])
    count = c.integer(1, 5 if size <= 50 else 2)
    bindings = [binding_document(c, fleet, i, edges) for i in range(count)]
    return Case(documents=[*fleet.clusters, *bindings], flags=drawn_flags(c))


def drawn_flags(c: Chooser) -> dict[str, Any]:
    """The flags of a case: a plugin set, empty-workload propagation, the multi-template gate, each sometimes."""
    flags: dict[str, Any] = {}
    if c.chance(15):
        flags["plugins"] = c.pick(PLUGIN_SETS[1:])
    if c.chance(15):
        flags["enableEmptyWorkloadPropagation"] = True
    if c.chance(35):
        flags["featureGates"] = {"MultiplePodTemplatesScheduling": True}
    return flags


def fleet_scale_cases(sizes: Sequence[int], seed: int) -> list[Case]:
    """One case per entry of `sizes`, over a fleet of exactly that many clusters (thousands: the fleets
    whole-fleet array operations are for), 3 to 6 bindings each, from the same builders, seeded."""
    out = []
    for k, size in enumerate(sizes):
        c = Seeded(seed * 1_000_000 + size * 100 + k)
        fleet = Fleet([cluster_document(c, i) for i in range(size)])
        bindings = [binding_document(c, fleet, i) for i in range(c.integer(3, 6))]
        out.append(Case(documents=[*fleet.clusters, *bindings], flags=drawn_flags(c)))
    return out


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A fleet, 1-5 bindings over it, and the flags (plugins, empty-workload propagation, feature gates)."""
    chooser = Drawn(draw)
    return build_case(chooser, lambda size: Seeded(draw(st.integers(0, 2**63 - 1))))


def known_cases(per_edge: int = 3, seed: int = 0) -> list[Case]:
    """Cases that are sure to exercise each shape of a directly created binding (`DIRECT_EDGES`): every
    binding of them has that shape. The differential runs add them to the drawn cases, whose mix of shapes
    varies with the seed."""
    out = []
    for i, edge in enumerate(DIRECT_EDGES):
        for k in range(per_edge):
            chooser = Seeded(seed * 1_000_000 + i * 1000 + k)
            out.append(build_case(chooser, lambda size, chooser=chooser: chooser, edges={edge}))
    return out


# ---------------------------------------------------------------------------------------- workload affinity

# Gate WorkloadAffinity: the bindings of a case are members of workload (anti-)affinity groups. The oracle
# schedules a case's bindings one after the other, each against the ones before it as Karmada left them, where
# simulate decides each against the inputs as they are stored. So these cases are shaped for both to see the
# same groups: first "settled" members that Karmada leaves where they are stored (a Duplicated placement pinned
# by clusterNames to exactly its stored clusters, all of them live: already targeted, they pass both workload
# filters; or no placement, which Karmada does not schedule, with or without clusters), then the subject, a
# binding drawn like any other, last. What is compared is mostly the subject's decision.
GROUPS = ("app=shop", "app=search")
NAMESPACES = ("default", "shop", "ml")
WORKLOAD_AFFINITY_PLUGIN_SETS = tuple(p for p in PLUGIN_SETS if p != "*,-ClusterAffinity")  # settled stays put


def _generated_name(resource: dict[str, Any]) -> str:
    """Karmada's name for the binding of `resource` (names.GenerateBindingName)."""
    return f"{resource['name'].replace(':', '.')}-{resource['kind']}".lower()


def settled_member(c: Chooser, fleet: Fleet, index: int, subject: dict[str, Any], taken: set[str]) -> dict[str, Any]:
    """A ResourceBinding in the subject's groups (mostly) that Karmada leaves where it is stored; `taken`: the
    `namespace/name`s used so far."""
    subject_groups = subject["spec"]["workloadAffinityGroups"]
    namespace = subject["spec"]["resource"].get("namespace") or ""
    namespace = namespace if namespace and c.chance(75) else c.pick(NAMESPACES)
    name = f"peer-{index}"
    own = _generated_name(subject["spec"]["resource"])  # the name Karmada tells the subject itself by
    if namespace == subject["spec"]["resource"].get("namespace") and f"{namespace}/{own}" not in taken and c.chance(15):
        name = own
    taken.add(f"{namespace}/{name}")
    live = [d["metadata"]["name"] for d in fleet.clusters if "deletionTimestamp" not in d["metadata"]]
    clusters = c.subset(live, 0 if c.chance(20) else 1, len(live) if c.chance(30) else 2)
    replicas = c.pick([0, 1, 3])
    spec: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": namespace,
                     "name": f"peer{index}", "uid": c.uid()},
        "workloadAffinityGroups": {
            "affinityGroup": subject_groups["affinityGroup"] if c.chance(80) else c.pick([*GROUPS, ""]),
            "antiAffinityGroup": subject_groups["antiAffinityGroup"] if c.chance(80) else c.pick([*GROUPS, ""]),
        },
    }
    if replicas:
        spec["replicas"] = replicas
    if clusters:
        spec["clusters"] = [{"name": n, "replicas": replicas} if replicas else {"name": n} for n in clusters]
    if clusters and not c.chance(15):
        spec["placement"] = {"clusterAffinity": {"clusterNames": clusters},
                             "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": name, "namespace": namespace, "generation": 1,
                         "labels": {"propagationpolicy.karmada.io/permanent-id": c.uid()}},
            "spec": spec}


def build_workload_affinity_case(c: Chooser) -> Case:
    fleet = Fleet([cluster_document(c, i) for i in range(c.integer(1, 6))])
    subject = binding_document(c, fleet, 0)
    groups = {"affinityGroup": c.pick(GROUPS) if c.chance(80) else "",
              "antiAffinityGroup": c.pick(GROUPS) if c.chance(60) else ""}
    subject["spec"]["workloadAffinityGroups"] = groups
    taken: set[str] = set()
    members = [settled_member(c, fleet, i, subject, taken) for i in range(c.integer(0 if c.chance(10) else 1, 4))]
    flags: dict[str, Any] = {"featureGates": {"WorkloadAffinity": not c.chance(10)}}
    if c.chance(15):
        flags["plugins"] = c.pick(WORKLOAD_AFFINITY_PLUGIN_SETS[1:])
    if c.chance(15):
        flags["enableEmptyWorkloadPropagation"] = True
    if c.chance(25):
        flags["featureGates"]["MultiplePodTemplatesScheduling"] = True
    return Case(documents=[*fleet.clusters, *members, subject], flags=flags)


@st.composite
def workload_affinity_cases(draw: st.DrawFn) -> Case:
    """A small fleet, settled members of workload (anti-)affinity groups and one subject (gate WorkloadAffinity,
    off in a tenth of them)."""
    return build_workload_affinity_case(Drawn(draw))
