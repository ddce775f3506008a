"""A leader takeover under overcommit protection (karmada-scheduler's Deployment turns it on with
`--feature-gates=AllAlpha=true,AllBeta=true`): the new leader decides every Duplicated binding again, each of
which already holds its result and runs. Karmada assumes only what a patch changed, so the replicas already
placed are counted once (in the members' `allocated`), and a scale-up right after the takeover is placed where
there is room, not refused for 5 minutes until the assumptions expire."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    at_rest,
    binding_doc,
    cluster_doc,
    cluster_path,
    condition,
    config_spec,
    namespaces,
    patch,
    rb_path,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)

CLUSTERS = ("m1", "m2", "m3")
CPUS = 10
DUPLICATED = 6
"""Replicas of the Duplicated workload on each member (1 CPU each): 4 CPUs stay free on each."""


def member(name: str, allocated_cpus: int) -> dict[str, Any]:
    doc = cluster_doc(name, pods=110)
    summary = doc["status"]["resourceSummary"]
    summary["allocatable"]["cpu"] = str(CPUS)
    summary["allocated"] = {"cpu": str(allocated_cpus), "pods": str(allocated_cpus)}
    return doc


def workload(name: str, replicas: int, scheduling: dict[str, Any]) -> dict[str, Any]:
    doc = binding_doc(name, replicas=replicas, placement={"replicaScheduling": scheduling})
    doc["spec"]["replicaRequirements"] = {"resourceRequest": {"cpu": "1"}}
    return doc


DUPLICATE = {"replicaSchedulingType": "Duplicated"}
DYNAMIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}


def running(api: DevCluster, name: str) -> None:
    """What the members report once the workload runs: its replicas allocated, and Healthy everywhere."""
    for cluster in CLUSTERS:
        summary = member(cluster, DUPLICATED)["status"]["resourceSummary"]
        patch(api, cluster_path(cluster) + "/status", {"status": {"resourceSummary": summary}})
    patch(api, rb_path(name, subresource="status"), {"status": {"aggregatedStatus": [
        {"clusterName": cluster, "applied": True, "health": "Healthy"} for cluster in CLUSTERS]}})


def test_scale_up_after_takeover_fits_members(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.yaml",
                          config_spec(featureGates={"SchedulingOvercommitProtection": True}))
    with DevCluster.in_thread() as api:
        namespaces(api, "default", "karmada-system")
        apply(api, *(member(cluster, 0) for cluster in CLUSTERS), workload("dup", DUPLICATED, DUPLICATE))
        with running_operator(api, config, identity="first"):
            wait_until(lambda: scheduled(api, "dup"), 20, "the Duplicated workload to be placed")
        running(api, "dup")

        with running_operator(api, config, identity="second") as second:
            at_rest(api, second)
            apply(api, workload("web", 6, DYNAMIC))
            body = wait_until(lambda: scheduled(api, "web"), 20, "the new workload to get its condition")
            verdict = condition(body)
            assert verdict is not None
            assert (verdict["status"], verdict["reason"]) == ("True", "Success"), verdict["message"]
            assert sorted((t["name"], t["replicas"]) for t in body["spec"]["clusters"]) == [
                ("m1", 2), ("m2", 2), ("m3", 2)]
