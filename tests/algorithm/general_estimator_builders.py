"""Clusters, requests, components and assumed workloads as the general estimator's tests write them: clusters as
the Kubernetes objects they are."""

from __future__ import annotations

from typing import Any

from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.model import Cluster, Component, ReplicaRequirements, parse_cluster, parse_quantity

ROOMY = {"pods": "1000", "cpu": "1000", "memory": "1000Gi"}
"""A summary that bounds nothing the models do."""


def cluster(
    name: str = "member1",
    *,
    allocatable: dict[str, Any] | None = None,
    allocated: dict[str, Any] | None = None,
    allocating: dict[str, Any] | None = None,
    models: list[dict[str, Any]] | None = None,
    modelings: list[tuple[int, int]] | None = None,
    summary: bool = True,
) -> Cluster:
    status: dict[str, Any] = {}
    if summary:
        status["resourceSummary"] = {
            "allocatable": allocatable or {},
            "allocated": allocated or {},
            "allocating": allocating or {},
            "allocatableModelings": [{"grade": g, "count": c} for g, c in modelings or []],
        }
    return parse_cluster(
        {
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push", "resourceModels": models or []},
            "status": status,
        }
    )


def grade(number: int, **minimums: str) -> dict[str, Any]:
    """A resource model grade; each range's max is irrelevant to the estimate (only min is used)."""
    return {
        "grade": number,
        "ranges": [
            {"name": name.replace("_", "-"), "min": value, "max": "1000000"} for name, value in minimums.items()
        ],
    }


def request(**resources: str) -> ReplicaRequirements:
    """ReplicaRequirements; keyword names use '_' for '-' and '__' for '/' (nvidia__gpu -> nvidia.com/gpu)."""
    return ReplicaRequirements(resource_request=_resources(resources))


def _resources(resources: dict[str, str]) -> dict[str, Any]:
    names = {"nvidia__gpu": "nvidia.com/gpu"}
    return {names.get(k, k.replace("_", "-")): parse_quantity(v, k) for k, v in resources.items()}


def component(name: str, replicas: int, **resources: str) -> Component:
    requirements = ReplicaRequirements(resource_request=_resources(resources)) if resources else None
    return Component(name=name, replicas=replicas, requirements=requirements)


def assumed(*components: Component) -> AssumedWorkload:
    return AssumedWorkload(namespace="default", components=components)
