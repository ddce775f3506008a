"""The real operator against devcluster: a first schedule, written as Karmada writes it, fenced."""

from __future__ import annotations

import json
from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.fencing import fence
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    running_operator,
    scheduled,
    wait_until,
)


def test_new_binding_is_scheduled_with_two_fenced_writes(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3))
    with running_operator(api, config_file):
        body = wait_until(lambda: scheduled(api, "web"), what="the binding to be scheduled")
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]
    writes = api.journal.filter(method="PATCH", path=r"/resourcebindings/web")
    spec_write, status_write = writes[0], writes[1]
    assert spec_write.path.endswith("/resourcebindings/web")
    fence(spec_write.body, spec_write)
    assert json.loads(spec_write.body["metadata"]["annotations"]["policy.karmada.io/applied-placement"]) == {
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
    }
    assert spec_write.body["spec"] == {"clusters": [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]}
    assert status_write.path.endswith("/resourcebindings/web/status")
    assert int(fence(status_write.body, status_write)) > int(fence(spec_write.body, spec_write))
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]
    assert [c["reason"] for c in body["status"]["conditions"]] == ["Success"]
