"""`decisionProcesses`: the running operator decides in other processes, writes what it would have written deciding
itself, and stops them when it stops."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    namespaces,
    request,
    wait_until,
    write_config,
)

PLACEMENTS: list[dict[str, Any]] = [
    {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}},
    {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}},
    {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}},
    {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                           "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
     "spreadConstraints": [{"spreadByField": "region", "minGroups": 2, "maxGroups": 2}]},
    {"clusterAffinity": {"clusterNames": ["nowhere"]}},
]


def fleet() -> list[dict[str, Any]]:
    clusters = []
    for i in range(12):
        doc = cluster_doc(f"m{i}", pods=110, region=f"r{i % 3}")
        doc["status"]["resourceSummary"]["allocatable"]["cpu"] = str(4 + i)
        clusters.append(doc)
    return clusters


def bindings() -> list[dict[str, Any]]:
    rng = random.Random(11)
    docs = []
    for i in range(60):
        doc = binding_doc(f"app-{i:02d}", namespace="shop", replicas=rng.randint(1, 9),
                          placement=PLACEMENTS[i % len(PLACEMENTS)])
        doc["spec"]["replicaRequirements"] = {"resourceRequest": {"cpu": "500m"}}
        docs.append(doc)
    return docs


def placements(api: DevCluster) -> dict[str, tuple[Any, ...]] | None:
    """Each binding's clusters and Scheduled condition, once every binding has one."""
    status, answer = request(api, "GET", "/apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings")
    assert status == 200, answer
    seen = {}
    for body in answer["items"]:
        found = [c for c in (body.get("status") or {}).get("conditions") or [] if c.get("type") == "Scheduled"]
        if not found:
            return None
        seen[body["metadata"]["name"]] = (
            tuple((t["name"], t.get("replicas")) for t in body["spec"].get("clusters") or []),
            found[0]["status"], found[0]["reason"], found[0]["message"])
    return seen


def processes_ready(operator: OperatorThread, processes: int) -> bool:
    """The service is up and, with processes asked for, every one of them answers: bindings created before that
    would be decided here while the processes start."""
    service = operator.app.service
    if service is None:
        return False
    if processes == 0:
        return True
    pool = service.decisions
    return pool is not None and len(pool._processes) == processes and all(p.ready.is_set() for p in pool._processes)


def run(tmp_path: Path, processes: int) -> tuple[dict[str, tuple[Any, ...]], OperatorThread]:
    with DevCluster.in_thread() as api:
        namespaces(api, "default", "karmada-system", "shop")
        apply(api, *fleet())
        spec = config_spec(workers=1, decisionProcesses=processes, kubeAPI={"qps": 5000, "burst": 5000})
        operator = OperatorThread(api, write_config(tmp_path / f"config-{processes}.yaml", spec)).start()
        try:
            wait_until(lambda: processes_ready(operator, processes) or time.sleep(0.1), 90,
                       "the decision processes to be ready")
            apply(api, *bindings())
            seen = wait_until(lambda: placements(api) or time.sleep(0.2), 120, "every binding to be scheduled")
        finally:
            operator.stop()
        return seen, operator


def test_decision_processes_write_what_scheduler_writes(
    tmp_path: Path,
) -> None:
    here, _ = run(tmp_path, 0)
    there, operator = run(tmp_path, 2)
    assert there == here
    service = operator.app.service
    assert service is not None and service.decisions is not None
    assert service.decisions.local == 0 and service.decisions.remote >= len(bindings())
    assert [p.process.poll() for p in service.decisions._processes] == [0, 0]
