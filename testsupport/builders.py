"""Builders for Karmada objects as plain dicts, so a test reads like the YAML a user would apply.

Every builder returns the JSON form (what the API server sends); `make_*` parse it into the model.
Defaults are the boring case: a Deployment `apps/v1` resource that every default cluster serves, no taints,
no placement constraints.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from binding_scheduler.algorithm.registry import PluginSet
from binding_scheduler.algorithm.schedule import DEFAULT_OPTIONS, ScheduleOptions
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import (
    APPLIED_PLACEMENT_ANNOTATION,
    Binding,
    Cluster,
    TargetCluster,
    parse_binding,
    parse_cluster,
)
from binding_scheduler.scheduling.framework.hooks import FrameworkHook
from binding_scheduler.scheduling.framework.runner import Framework

DEPLOYMENT = ("apps/v1", "Deployment")

# ------------------------------------------------------------------------------------------------- placements

DUPLICATED: dict[str, Any] = {"replicaSchedulingType": "Duplicated"}
DIVIDED_WEIGHTED: dict[str, Any] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
AGGREGATED: dict[str, Any] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
DYNAMIC_WEIGHT: dict[str, Any] = {
    "replicaSchedulingType": "Divided",
    "replicaDivisionPreference": "Weighted",
    "weightPreference": {"dynamicWeight": "AvailableReplicas"},
}


def placement(
    *,
    affinity: Mapping[str, Any] | None = None,
    affinities: Iterable[Mapping[str, Any]] | None = None,
    tolerations: Iterable[Mapping[str, Any]] = (),
    spread: Iterable[Mapping[str, Any]] = (),
    scheduling: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`spec.placement`; only what is given is written."""
    out: dict[str, Any] = {}
    if affinity is not None:
        out["clusterAffinity"] = dict(affinity)
    if affinities is not None:
        out["clusterAffinities"] = [dict(t) for t in affinities]
    if tolerations:
        out["clusterTolerations"] = [dict(t) for t in tolerations]
    if spread:
        out["spreadConstraints"] = [dict(s) for s in spread]
    if scheduling is not None:
        out["replicaScheduling"] = dict(scheduling)
    return out


def names(*clusters: str) -> dict[str, Any]:
    """A ClusterAffinity (or the affinity part of a term) listing cluster names."""
    return {"clusterNames": list(clusters)}


def term(name: str, *clusters: str, overflow: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A clusterAffinities term choosing `clusters` by name."""
    out: dict[str, Any] = {"affinityName": name, **names(*clusters)}
    if overflow:
        out["overflowAffinities"] = [dict(o) for o in overflow]
    return out


def expression(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def taint(key: str, effect: str = "NoSchedule", value: str = "") -> dict[str, Any]:
    out = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


def toleration(key: str = "", operator: str = "", value: str = "", effect: str = "") -> dict[str, Any]:
    return {k: v for k, v in (("key", key), ("operator", operator), ("value", value), ("effect", effect)) if v}


# --------------------------------------------------------------------------------------------------- clusters


def cluster(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    provider: str = "",
    region: str = "",
    zones: Iterable[str] = (),
    taints: Iterable[Mapping[str, Any]] = (),
    apis: Iterable[tuple[str, str]] = (DEPLOYMENT,),
    deleting: bool = False,
    allocatable: Mapping[str, str] | None = None,
    allocated: Mapping[str, str] | None = None,
    sync_mode: str = "Push",
) -> dict[str, Any]:
    """A `Cluster`; by default it serves Deployments and has no taints, topology or capacity summary."""
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    if deleting:
        metadata["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"syncMode": sync_mode}
    if provider:
        spec["provider"] = provider
    if region:
        spec["region"] = region
    if zones:
        spec["zones"] = list(zones)
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    by_group: dict[str, list[dict[str, str]]] = {}
    for group_version, kind in apis:
        by_group.setdefault(group_version, []).append({"name": kind.lower() + "s", "kind": kind})
    status: dict[str, Any] = {
        "apiEnablements": [{"groupVersion": gv, "resources": rs} for gv, rs in by_group.items()],
    }
    if allocatable is not None:
        status["resourceSummary"] = {"allocatable": dict(allocatable)}
        if allocated is not None:
            status["resourceSummary"]["allocated"] = dict(allocated)
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }


def make_cluster(name: str, **kwargs: Any) -> Cluster:
    return parse_cluster(cluster(name, **kwargs))


def snapshot(*clusters: Cluster | str) -> Snapshot:
    """A snapshot of parsed clusters; a bare name is a default cluster."""
    return Snapshot(make_cluster(c) if isinstance(c, str) else c for c in clusters)


def schedule(
    binding: Binding,
    snapshot: Snapshot,
    plugins: PluginSet,
    *,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    hooks: Iterable[FrameworkHook] = (),
) -> list[TargetCluster]:
    """One attempt through the framework the operator runs (general estimator only), as a plain call: the
    result, or the SchedulingError raised."""
    framework = Framework(plugins, options=options, hooks=tuple(hooks))
    return asyncio.run(framework.attempt(binding, snapshot))


# --------------------------------------------------------------------------------------------------- bindings


def binding(
    name: str = "web",
    *,
    namespace: str = "default",
    cluster_scoped: bool = False,
    resource: tuple[str, str] = DEPLOYMENT,
    replicas: int | None = None,
    requests: Mapping[str, str] | None = None,
    components: Iterable[Mapping[str, Any]] = (),
    placement: Mapping[str, Any] | None = None,
    clusters: Mapping[str, int] | Iterable[str] | None = None,
    evicting: Iterable[str] = (),
    generation: int = 1,
    applied: Mapping[str, Any] | str | None = None,
    observed_affinity: str = "",
    reschedule_at: str | None = None,
    last_scheduled: str | None = None,
    uid: str = "uid-1",
    resource_uid: str | None = None,
) -> dict[str, Any]:
    """A ResourceBinding (or, with `cluster_scoped`, a ClusterResourceBinding).

    `clusters` is the previous result: `{"m1": 2}` or just names. `applied` is the applied-placement
    annotation: a placement dict (written as JSON) or the raw text. `resource_uid` is `spec.resource.uid`
    (Webster's tie direction; "" for none), by default `res-<uid>`.
    """
    import json

    metadata: dict[str, Any] = {"name": name, "generation": generation, "uid": uid, "resourceVersion": "7"}
    if not cluster_scoped:
        metadata["namespace"] = namespace
    if applied is not None:
        text = applied if isinstance(applied, str) else json.dumps(applied)
        metadata["annotations"] = {APPLIED_PLACEMENT_ANNOTATION: text}
    api_version, kind = resource
    spec: dict[str, Any] = {
        "resource": {"apiVersion": api_version, "kind": kind, "name": name,
                     "uid": "res-" + uid if resource_uid is None else resource_uid},
    }
    if not cluster_scoped:
        spec["resource"]["namespace"] = namespace
    if replicas is not None:
        spec["replicas"] = replicas
    if requests is not None:
        spec["replicaRequirements"] = {"resourceRequest": dict(requests)}
    if components:
        spec["components"] = [dict(c) for c in components]
    if placement is not None:
        spec["placement"] = dict(placement)
    if clusters is not None:
        if isinstance(clusters, Mapping):
            spec["clusters"] = [{"name": n, "replicas": r} if r else {"name": n} for n, r in clusters.items()]
        else:
            spec["clusters"] = [{"name": n} for n in clusters]
    if evicting:
        spec["gracefulEvictionTasks"] = [
            {"fromCluster": c, "reason": "TaintUntolerated", "producer": "taint-manager"} for c in evicting
        ]
    if reschedule_at is not None:
        spec["rescheduleTriggeredAt"] = reschedule_at
    status: dict[str, Any] = {}
    if observed_affinity:
        status["schedulerObservingAffinityName"] = observed_affinity
    if last_scheduled is not None:
        status["lastScheduledTime"] = last_scheduled
    out: dict[str, Any] = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ClusterResourceBinding" if cluster_scoped else "ResourceBinding",
        "metadata": metadata,
        "spec": spec,
    }
    if status:
        out["status"] = status
    return out


def make_binding(name: str = "web", **kwargs: Any) -> Binding:
    return parse_binding(binding(name, **kwargs))
