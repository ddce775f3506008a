"""A decision that takes long (a legal placement for which Karmada's region search is exponential) never holds
the event loop: the Lease keeps being renewed, a stop is prompt and writes nothing, and a decision over
`decisionCPULimit` gives the binding a SchedulerError naming the limit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    binding_writes,
    cluster_doc,
    condition,
    config_spec,
    events,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)

REGIONS = 26


def hard_binding(name: str) -> dict[str, Any]:
    """26 single-cluster regions, any 1..26 of them, at least 13 clusters: C(26,13) feasible region sets."""
    return binding_doc(name, replicas=REGIONS, placement={
        "spreadConstraints": [
            {"spreadByField": "region", "minGroups": 1, "maxGroups": REGIONS},
            {"spreadByField": "cluster", "minGroups": 13, "maxGroups": REGIONS},
        ],
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    })


def fleet(api: DevCluster) -> None:
    apply(api, *(cluster_doc(f"m{i:02d}", region=f"region-{i:02d}") for i in range(REGIONS)))


def test_over_cpu_limit_error_names_limit(
    api: DevCluster, tmp_path: Path
) -> None:
    fleet(api)
    apply(api, hard_binding("hard"), binding_doc("easy", replicas=2))
    config = write_config(tmp_path / "config.yaml", config_spec(workers=2, decisionCPULimit="500ms"))
    with running_operator(api, config):
        body = wait_until(lambda: scheduled(api, "hard"), timeout=30, what="the hard binding's condition")
        assert scheduled(api, "easy") is not None
    found = condition(body)
    assert found is not None
    assert (found["status"], found["reason"]) == ("False", "SchedulerError")
    assert found["message"] == "the decision needed more than 0.5s of CPU (decisionCPULimit 0.5s)"
    assert "clusters" not in body["spec"]
    assert [(e["type"], e["reason"]) for e in events(api, name="hard")] == [("Warning", "ScheduleBindingFailed")]


RENEWALS_PAST_THE_LEASE = 7  # every 500 ms: 3.5 s of renewals, past the 3 s lease of the test configuration


def renewals_since(api: DevCluster, moment: float) -> list[float]:
    """When each successful renewal of the scheduler's Lease after `moment` (time.monotonic()) arrived."""
    puts = api.journal.filter("PUT", r"/leases/karmada-scheduler$")
    return [e.time for e in puts if e.time > moment and e.status == 200]


def test_lease_renewed_during_long_decision(
    api: DevCluster, tmp_path: Path
) -> None:
    fleet(api)
    apply(api, hard_binding("hard"))
    config = write_config(tmp_path / "config.yaml", config_spec(decisionCPULimit="120s"))
    operator = OperatorThread(api, config).start()
    service = operator.app.service
    assert service is not None
    wait_until(lambda: "default/hard" in operator.call(lambda: dict(service.scheduler.in_flight)), what="the pass")
    since = time.monotonic()
    wait_until(lambda: len(renewals_since(api, since)) >= RENEWALS_PAST_THE_LEASE, timeout=30,
               what="the Lease to be renewed for longer than its duration during the decision")
    assert service.ready and "default/hard" in operator.call(lambda: dict(service.scheduler.in_flight))
    assert operator.stop() == 0
    report = service.report
    assert report is not None
    assert (report.cancelled, report.drained, report.cut) == (1, 0, 0)  # ended on its cancellation, not the deadline
    assert binding_writes(api, "hard") == []
