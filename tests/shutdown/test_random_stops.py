"""Fifty instances in a row, each stopped at a random point while its passes run: no write after any
shutdown, no write without a resourceVersion precondition (so no stale overwrite), and in the end every
binding is scheduled consistently."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from binding_scheduler.algorithm.plugins import AttemptContext, EstimatePlugin
from binding_scheduler.devcluster import DevCluster
from binding_scheduler.model import Cluster
from tests.shutdown.helpers import writes_after
from testsupport.fencing import fence
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    get,
    running_operator,
    wait_until,
    write_config,
)

ROUNDS = 50
BINDINGS = 12
DIVIDED = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                                 "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}


class SlowPasses(EstimatePlugin):
    """The real algorithm behind a random estimator-like latency, so stops land in every phase."""

    name = "TestSlowPasses"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        await asyncio.sleep(self.rng.uniform(0, 0.05))
        return {}


def consistent(api: DevCluster, name: str) -> bool:
    body = get(api, "resourcebindings", name, "default")
    if body is None:
        return False
    status = body.get("status") or {}
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    total = sum(c.get("replicas", 0) for c in body["spec"].get("clusters") or [])
    return (
        total == body["spec"]["replicas"]
        and conditions.get("Scheduled", {}).get("reason") == "Success"
        and status.get("schedulerObservedGeneration") == body["metadata"]["generation"]
    )


def test_fifty_random_stop_points(api: DevCluster, tmp_path: Path) -> None:
    rng = random.Random(20261129)
    apply(api, *(cluster_doc(f"m{i}", pods=40 + 10 * i) for i in range(4)))
    apply(api, *(binding_doc(f"web-{i}", replicas=rng.randint(1, 30), placement=DIVIDED) for i in range(BINDINGS)))
    config = write_config(tmp_path / "config.yaml", config_spec(workers=4))
    api.faults.add(method="PATCH", path=r"/resourcebindings/", delay=0.01)
    late_writes: list[str] = []
    cancelled = drained = 0
    for round_ in range(ROUNDS):
        for i in rng.sample(range(BINDINGS), 3):
            scale = {"spec": {"replicas": rng.randint(1, 30)}}
            api.store.patch("resourcebindings", f"web-{i}", scale, namespace="default")
        operator = OperatorThread(api, config, identity=f"instance-{round_}", plugins=[SlowPasses(rng)]).start()
        time.sleep(rng.uniform(0, 0.3))
        assert operator.stop() == 0
        service = operator.app.service
        assert service is not None and service.finished_at is not None
        late_writes += writes_after(api, service.finished_at)
        report = service.report
        assert report is not None
        cancelled, drained = cancelled + report.cancelled, drained + report.drained

    with running_operator(api, config, identity="final"):
        wait_until(lambda: all(consistent(api, f"web-{i}") for i in range(BINDINGS)), what="every binding scheduled")

    assert late_writes == []
    assert cancelled > 0, "no stop landed while a pass was deciding"
    binding_writes = api.journal.filter(method="PATCH", path=r"/resourcebindings/")
    assert binding_writes
    for entry in binding_writes:
        fence(entry.body, entry)
    assert {e.status for e in binding_writes} <= {200, 409}
