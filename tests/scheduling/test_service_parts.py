"""The service's parts that only its wiring shows: how the configuration becomes the estimators' settings, the
shutdown report's line, what a relist forgets, and what the service is built with."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from binding_scheduler.estimation import EstimatorSettings
from binding_scheduler.kube.connection import Connection
from binding_scheduler.model.config import (
    EstimatorConfig,
    EstimatorServiceConfig,
    EstimatorTLSConfig,
    KubeAPIConfig,
    LeaderElectionConfig,
    MetricsConfig,
    QueueConfig,
    SchedulerConfig,
)
from binding_scheduler.scheduling.lifecycle.config_views import estimator_settings
from binding_scheduler.scheduling.lifecycle.service import SchedulerService
from binding_scheduler.scheduling.lifecycle.stop_report import ShutdownReport
from testsupport.builders import binding, cluster, placement

SERVICE = "binding_scheduler.scheduling.lifecycle.service"


def test_estimator_fields_reach_estimator_settings() -> None:
    config = SchedulerConfig(estimator=EstimatorConfig(
        enabled=True, timeout=1.5,
        service=EstimatorServiceConfig(namespace="est", prefix="estimator", port=9000),
        endpoints={"m1": "10.0.0.1:10352"},
        tls=EstimatorTLSConfig(ca_file="/ca.pem", cert_file="/cert.pem", key_file="/key.pem",
                               insecure_skip_verify=True),
        partial_failure="discard", disable_in_pull_mode=True,
    ))

    assert estimator_settings(config) == EstimatorSettings(
        timeout=1.5, service_namespace="est", service_prefix="estimator", port=9000,
        endpoints={"m1": "10.0.0.1:10352"}, ca_file="/ca.pem", cert_file="/cert.pem", key_file="/key.pem",
        insecure_skip_verify=True, partial_failure="discard", disable_in_pull_mode=True,
    )


def test_partial_failure_policy_other_than_discard_is_fallback() -> None:
    config = SchedulerConfig(estimator=EstimatorConfig(partial_failure="fallback"))
    assert estimator_settings(config).partial_failure == "fallback"


def test_shutdown_report_line_says_every_count_time_and_lease() -> None:
    assert ShutdownReport(cancelled=3, drained=2, cut=1, seconds=1.2345, lease_released=True).line() == (
        "shutdown complete in 1234 ms: 3 passes cancelled before their commit point, 2 drained, 1 cut at the drain "
        "deadline; lease released; write gate closed")
    assert ShutdownReport(cancelled=0, drained=0, cut=0, seconds=0.0, lease_released=False).line() == (
        "shutdown complete in 0 ms: 0 passes cancelled before their commit point, 0 drained, 0 cut at the drain "
        "deadline; lease not held; write gate closed")
    assert ShutdownReport(cancelled=1, drained=0, cut=0, seconds=0.0, lease_released=True).line().startswith(
        "shutdown complete in 0 ms: 1 pass cancelled before its commit point, 0 drained")


@pytest.fixture
async def service() -> AsyncIterator[SchedulerService]:
    built = SchedulerService(
        Connection(server="http://127.0.0.1:9"),
        SchedulerConfig(workers=3,
                        queue=QueueConfig(initial_backoff=2.0, max_backoff=20.0, unschedulable_timeout=60.0)),
        identity="pod-a_1234",
    )
    try:
        yield built
    finally:
        await built.client.close()
        await built.lease_client.close()


async def test_service_is_built_from_configuration(service: SchedulerService) -> None:
    queue = service.queue
    assert (queue.initial_backoff, queue.max_backoff, queue.unschedulable_timeout) == (2.0, 20.0, 60.0)
    assert service.scheduler.workers == 3
    assert service.identity == "pod-a_1234"
    assert service.lease is not None and service.lease.identity == "pod-a_1234"
    assert service.scheduler.ctx is service.context
    assert service.scheduler.settings.scheduler_name == "default-scheduler"
    assert not service.ready and not service.probe_ready


async def test_relist_of_clusters_forgets_missing_ones_and_says_so(
    service: SchedulerService, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("m1", "m2"):
        service.scheduler.on_cluster(cluster(name))

    with caplog.at_level(logging.INFO, logger=SERVICE):
        await service.relisted("clusters", [cluster("m1")])

    assert service.context.clusters.names() == ["m1"]
    assert caplog.messages == ["cluster m2 is gone (not in the new list)"]


@pytest.mark.parametrize(("plural", "kept", "gone"), [
    ("resourcebindings", ["default/a", "role"], "default/b"),
    ("clusterresourcebindings", ["default/a", "default/b"], "role"),
])
async def test_relist_of_kind_forgets_its_missing_ones(
    service: SchedulerService, caplog: pytest.LogCaptureFixture, plural: str, kept: list[str], gone: str
) -> None:
    bodies = {"default/a": binding("a", replicas=1, placement=placement()),
              "default/b": binding("b", replicas=1, placement=placement()),
              "role": binding("role", cluster_scoped=True, placement=placement())}
    for body in bodies.values():
        service.scheduler.on_binding(body)
    of_kind = {key: body for key, body in bodies.items() if ("/" in key) == (plural == "resourcebindings")}
    listed: list[Mapping[str, Any]] = [body for key, body in of_kind.items() if key != gone]

    with caplog.at_level(logging.INFO, logger=SERVICE):
        await service.relisted(plural, listed)

    assert sorted(service.context.bindings.keys()) == kept
    assert [r.getMessage() for r in caplog.records if r.name == SERVICE] == [
        f"binding {gone} is gone (not in the new list)"]


async def test_relist_of_another_resource_forgets_nothing(service: SchedulerService) -> None:
    service.scheduler.on_cluster(cluster("m1"))
    service.scheduler.on_binding(binding("a", replicas=1, placement=placement()))
    await service.relisted("schedulerconfigurations", [])
    assert (service.context.clusters.names(), list(service.context.bindings.keys())) == (["m1"], ["default/a"])


async def test_estimator_replaced_only_when_settings_change(
    service: SchedulerService,
) -> None:
    enabled = SchedulerConfig(estimator=EstimatorConfig(enabled=True, timeout=1.0))
    service.apply_config(enabled)
    first = service.scheduler.settings.estimator
    service.apply_config(SchedulerConfig(estimator=EstimatorConfig(enabled=True, timeout=1.0), workers=2))
    kept = service.scheduler.settings.estimator
    service.apply_config(SchedulerConfig(estimator=EstimatorConfig(enabled=True, timeout=2.0)))
    replaced = service.scheduler.settings.estimator
    service.apply_config(SchedulerConfig())

    assert first is not None and kept is first
    assert replaced is not None and replaced is not first
    assert service.scheduler.settings.estimator is None
    assert service._estimators == [first, replaced]  # both closed at shutdown


async def test_new_config_applies_next_pass_but_restart_fields_wait(
    service: SchedulerService,
) -> None:
    new = SchedulerConfig(
        scheduler_name="other", workers=5, decision_cpu_limit=2.0,
        queue=QueueConfig(initial_backoff=3.0, max_backoff=30.0, unschedulable_timeout=90.0),
        leader_election=LeaderElectionConfig(lease_name="elsewhere"),
        metrics=MetricsConfig(port=9999), kube_api=KubeAPIConfig(qps=1.0, burst=2),
    )

    service.apply_config(new)

    queue = service.queue
    assert (queue.initial_backoff, queue.max_backoff, queue.unschedulable_timeout) == (3.0, 30.0, 90.0)
    assert service.scheduler.workers == 5
    assert service.scheduler.settings.options.cpu_limit == 2.0
    assert service.config.scheduler_name == service.scheduler.settings.scheduler_name == "default-scheduler"
    assert service.config.leader_election.lease_name == "karmada-scheduler"
    assert (service.config.metrics.port, service.config.kube_api.qps) == (8080, 40.0)


class RecordingEstimator:
    def __init__(self) -> None:
        self.forgotten: list[str] = []

    async def forget(self, cluster_name: str) -> None:
        self.forgotten.append(cluster_name)


async def test_deleted_cluster_leaves_channels(service: SchedulerService) -> None:
    service.scheduler.on_cluster(cluster("m1"))
    service.scheduler.on_cluster(cluster("m2"))
    estimators = [RecordingEstimator(), RecordingEstimator()]
    service._estimators = estimators  # type: ignore[assignment]

    await service.cluster_deleted(cluster("m1"))

    assert service.context.clusters.names() == ["m2"]
    assert [e.forgotten for e in estimators] == [["m1"], ["m1"]]


async def test_relisted_away_cluster_leaves_channels(service: SchedulerService) -> None:
    service.scheduler.on_cluster(cluster("m1"))
    estimator = RecordingEstimator()
    service._estimators = [estimator]  # type: ignore[list-item]

    await service.relisted("clusters", [])

    assert estimator.forgotten == ["m1"]


async def test_lost_lease_closes_gate_and_exits_non_zero(
    service: SchedulerService, caplog: pytest.LogCaptureFixture
) -> None:
    fatal: list[bool] = []
    service.on_fatal = lambda: fatal.append(service.gate.is_open)
    service.metrics.set_leader(True)

    with caplog.at_level(logging.ERROR, logger=SERVICE):
        await service._lease_lost("renewal failed")

    assert service.gate.reason == "lease lost: renewal failed"
    assert fatal == [False]
    assert (service.exit_code, service.ready, service.probe_ready) == (1, False, False)
    assert service.lost_at is not None
    assert service.queue.closed
    assert service.metrics.registry.get_sample_value("binding_scheduler_leader") == 0
    assert caplog.messages == ["lost the lease (renewal failed): write gate closed, cancelling every pass"]


async def test_stop_makes_service_unready_at_once(
    service: SchedulerService,
) -> None:
    service._standing_by = True
    service._ready = True
    assert service.probe_ready

    service.request_stop()
    first = service._stop_requested_at
    service.request_stop()

    assert service.ready is False and service.probe_ready is False
    assert first is not None and service._stop_requested_at == first


async def test_shutdown_without_leading_closes_gate(
    service: SchedulerService, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=SERVICE):
        report = await service.shutdown()

    assert (report.cancelled, report.drained, report.cut, report.lease_released) == (0, 0, 0, False)
    assert 0 <= report.seconds < 5
    assert service.gate.reason == "scheduler shut down"
    assert service.report is report and service.finished_at is not None
    assert caplog.messages[-1] == report.line()
    assert await service.shutdown() is report
