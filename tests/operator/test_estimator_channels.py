"""The operator with accurate estimators: answers are used, and a deleted cluster's channel is closed."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.estimation.stub import EstimatorStub
from tests.operator.test_metrics_endpoints import free_port
from tests.shutdown.helpers import stubs_in_thread
from testsupport.operator.harness import (
    apply,
    at_rest,
    binding_doc,
    cluster_doc,
    cluster_path,
    config_spec,
    request,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)

AGGREGATED = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}


def test_accurate_answer_steers_pass(
    api: DevCluster, tmp_path: Path
) -> None:
    with stubs_in_thread(EstimatorStub("m1", replicas=1), EstimatorStub("m2", replicas=50)) as stubs:
        endpoints = {s.cluster_name: s.address for s in stubs}
        spec = config_spec(estimator={"enabled": True, "endpoints": endpoints})
        apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3, placement=AGGREGATED))
        with running_operator(api, write_config(tmp_path / "c.yaml", spec)) as operator:
            body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
            service = operator.app.service
            assert service is not None
            estimator = service.scheduler.settings.estimator
            assert estimator is not None
            assert set(operator.call(lambda: dict(estimator.connected))) == {"m1", "m2"}  # type: ignore[attr-defined]

            at_rest(api, operator)
            status, _ = request(api, "DELETE", cluster_path("m1"))
            assert status == 200
            wait_until(
                lambda: "m1" not in operator.call(lambda: dict(estimator.connected)),  # type: ignore[attr-defined]
                what="m1's channel to close",
            )
    assert body["spec"]["clusters"] == [{"name": "m2", "replicas": 3}]


def test_unreachable_estimator_falls_back(api: DevCluster, tmp_path: Path) -> None:
    closed = free_port()
    spec = config_spec(estimator={"enabled": True, "timeout": "2s", "endpoints": {"m1": f"127.0.0.1:{closed}"}})
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=3, placement=AGGREGATED))
    with running_operator(api, write_config(tmp_path / "c.yaml", spec)) as operator:
        body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        service = operator.app.service
        assert service is not None
        registry = service.metrics.registry
        counted = sum(
            sample.value
            for family in registry.collect()
            if family.name == "binding_scheduler_estimator_failures"
            for sample in family.samples
            if sample.name.endswith("_total") and sample.labels.get("cluster") == "m1"
        )
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 3}]
    assert counted >= 1
