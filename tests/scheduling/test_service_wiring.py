"""What the service is built from: each part of the configuration reaches the object that acts on it (the API
clients' limits and user agent, the Lease's timings, the Events' component, the health servers, the options of the
passes), read back from the built objects."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.devcluster import DevCluster
from binding_scheduler.estimation import AccurateEstimator
from binding_scheduler.estimation.failures import failure_counter
from binding_scheduler.kube.client import USER_AGENT
from binding_scheduler.kube.connection import Connection
from binding_scheduler.model.config import (
    EstimatorConfig,
    FeatureGatesConfig,
    KubeAPIConfig,
    LeaderElectionConfig,
    MetricsConfig,
    SchedulerConfig,
)
from binding_scheduler.scheduling.framework.plugins import UnknownPlugins
from binding_scheduler.scheduling.lifecycle.service import SchedulerService
from binding_scheduler.scheduling.lifecycle.wiring import LEASE_BURST, LEASE_QPS
from binding_scheduler.scheduling.observability.metrics import MetricsHook, SchedulerMetrics
from testsupport.builders import binding, placement
from testsupport.pass_plugins import AtEstimate

SERVICE = "binding_scheduler.scheduling.lifecycle.service"
ELECTION = LeaderElectionConfig(lease_name="sched", lease_namespace="ops", lease_duration=30.0, renew_deadline=20.0,
                                retry_period=4.0)
CONFIG = SchedulerConfig(
    scheduler_name="my-scheduler", kube_api=KubeAPIConfig(qps=7.0, burst=9), leader_election=ELECTION,
    metrics=MetricsConfig(port=18080, health_port=18081, host="127.0.0.2", health_host="127.0.0.3"),
)


@pytest.fixture
async def service() -> AsyncIterator[SchedulerService]:
    built = SchedulerService(Connection(server="http://127.0.0.1:9"), CONFIG, identity="pod-a_1")
    try:
        yield built
    finally:
        await built.client.close()
        await built.lease_client.close()


async def offline(config: SchedulerConfig, **options: Any) -> SchedulerService:
    """A service that is only looked at: built against an address nothing serves, its API clients closed."""
    service = SchedulerService(Connection(server="http://127.0.0.1:9"), config, **options)
    await service.client.close()
    await service.lease_client.close()
    return service

KNOWN = "APIEnablement, TaintToleration, ClusterAffinity, SpreadConstraint, ClusterLocality, ClusterEviction"
"""Every plugin there is, in the order the warnings list them."""


def test_api_client_rate_limit_and_user_agent(
    service: SchedulerService,
) -> None:
    client = service.client
    assert (client.limiter.qps, client.limiter.burst) == (7.0, 9)
    assert client.user_agent == f"{USER_AGENT} (pod-a_1)"
    assert client.gate is service.gate


def test_lease_has_own_client_and_limit_same_gate(
    service: SchedulerService,
) -> None:
    lease_client = service.lease_client
    assert lease_client is not service.client
    assert (lease_client.limiter.qps, lease_client.limiter.burst) == (LEASE_QPS, LEASE_BURST) == (5.0, 10)
    assert lease_client.user_agent == f"{USER_AGENT} (pod-a_1)"
    assert lease_client.gate is service.gate


def test_lease_is_configured_one_with_timings(service: SchedulerService) -> None:
    lease = service.lease
    assert lease is not None and lease.client is service.lease_client
    assert (lease.namespace, lease.name, lease.identity) == ("ops", "sched", "pod-a_1")
    assert (lease.lease_duration, lease.renew_deadline, lease.retry_period) == (30.0, 20.0, 4.0)


async def test_without_leader_election_there_is_no_lease() -> None:
    service = await offline(SchedulerConfig(leader_election=LeaderElectionConfig(enabled=False)))
    assert service.lease is None


async def test_default_identity_is_hostname_uuid() -> None:
    service = await offline(SchedulerConfig())
    host, _, uid = service.identity.rpartition("_")
    assert host and len(uid) == 36
    assert service.client.user_agent == f"{USER_AGENT} ({service.identity})"


def test_events_posted_in_background_by_scheduler(
    service: SchedulerService,
) -> None:
    assert service.events.component == "my-scheduler"
    assert service.events.client is service.client
    assert service.background_events.sink is service.events
    assert service.context.events is service.background_events


def test_passes_share_client_metrics_and_queue(service: SchedulerService) -> None:
    assert service.context.client is service.client
    assert service.context.metrics is service.metrics is service.scheduler.metrics
    assert service.scheduler.queue is service.queue


def test_both_clients_count_requests(service: SchedulerService) -> None:
    assert service.client.observer is service.metrics.rest_client
    assert service.lease_client.observer is service.metrics.rest_client


async def test_metrics_given_are_used_and_without_them_service_has_own() -> None:
    metrics = SchedulerMetrics()
    given = await offline(SchedulerConfig(), metrics=metrics)
    own = await offline(SchedulerConfig())

    assert given.metrics is metrics
    assert isinstance(own.metrics, SchedulerMetrics) and own.metrics is not metrics


async def test_code_plugins_run_when_config_enables_them() -> None:
    async def nothing(ctx: AttemptContext) -> None:
        return None

    plugin = AtEstimate(nothing)

    enabled = await offline(SchedulerConfig(), plugins=[plugin])
    left_out = await offline(replace(SchedulerConfig(), plugins=("*", "-TestAtEstimate")), plugins=[plugin])

    assert enabled.scheduler.settings.plugins.estimators == (plugin,)
    assert left_out.scheduler.settings.plugins.estimators == ()
    assert left_out.scheduler.settings.plugins.unknown == ()


def test_health_servers_listen_where_configured(
    service: SchedulerService,
) -> None:
    health = service.health
    assert (health._metrics_host, health._metrics_port_wanted) == ("127.0.0.2", 18080)
    assert (health._health_host, health._health_port_wanted) == ("127.0.0.3", 18081)
    assert health._metrics is service.metrics
    assert health._ready() is False
    service._standing_by = True
    assert health._ready() is True


async def test_port_of_zero_turns_that_server_off() -> None:
    service = await offline(SchedulerConfig(metrics=MetricsConfig(port=0, health_port=0)))
    assert (service.health._metrics_port_wanted, service.health._health_port_wanted) == (None, None)


def test_new_service_leads_nothing_and_has_nothing_to_report(service: SchedulerService) -> None:
    assert service.exit_code == 0
    assert service.on_fatal is None
    assert (service.ready, service.probe_ready) == (False, False)
    assert (service._keeper, service._shutdown, service.report) == (None, None, None)
    assert (service.finished_at, service.lost_at, service._stop_requested_at) == (None, None, None)


# -- the settings of the passes ----------------------------------------------------------------------------------


async def test_passes_options_come_from_configuration(service: SchedulerService) -> None:
    service.apply_config(SchedulerConfig(
        enable_empty_workload_propagation=True, decision_cpu_limit=2.5,
        feature_gates=FeatureGatesConfig(multiple_pod_templates_scheduling=True),
    ))
    settings = service.scheduler.settings
    assert settings.options == ScheduleOptions(enable_empty_workload_propagation=True, multiple_pod_templates=True,
                                               cpu_limit=2.5)
    assert settings.scheduler_name == "my-scheduler"


def test_default_options_are_karmadas(service: SchedulerService) -> None:
    assert service.scheduler.settings.options == ScheduleOptions(
        enable_empty_workload_propagation=False, multiple_pod_templates=False, cpu_limit=10.0)


def test_framework_times_steps_into_services_metrics(service: SchedulerService) -> None:
    (hook,) = service.scheduler.settings.framework.hooks
    assert isinstance(hook, MetricsHook) and hook.metrics is service.metrics


@pytest.mark.parametrize(("workers", "gate", "protected"), [
    (1, None, False), (2, None, True), (4, False, False), (1, True, True),
])
def test_protection_shares_assumptions_only_when_on(
    service: SchedulerService, workers: int, gate: bool | None, protected: bool
) -> None:
    service.apply_config(SchedulerConfig(
        workers=workers, feature_gates=FeatureGatesConfig(scheduling_overcommit_protection=gate)))
    assumptions = service.scheduler.settings.assumptions
    assert (assumptions is service.context.assumptions) if protected else (assumptions is None)
    assert service.scheduler.settings.framework.assumptions is assumptions


def test_unknown_plugin_refused_running_stay(service: SchedulerService) -> None:
    before = service.scheduler.settings
    with pytest.raises(UnknownPlugins) as refused:
        service.apply_config(SchedulerConfig(plugins=("TaintToleration", "Typo")))
    assert (refused.value.field, refused.value.message.split(" (known:")[0]) == (
        "spec.plugins", "names 'Typo', which is no plugin")
    assert service.scheduler.settings is before


def test_unknown_allowed_plugin_is_ignored_with_warning(
    service: SchedulerService, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=SERVICE):
        service.apply_config(SchedulerConfig(plugins=("TaintToleration", "Typo"), allow_unknown_plugins=True))

    assert service.scheduler.settings.plugins.names == ("TaintToleration",)
    assert [r.getMessage() for r in caplog.records if r.name == SERVICE] == [
        f"spec.plugins names 'Typo', which is no plugin: ignored (known: {KNOWN}); running: TaintToleration"]


def test_unknown_plugin_list_says_none_running(
    service: SchedulerService, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=SERVICE):
        service.apply_config(SchedulerConfig(plugins=("Typo",), allow_unknown_plugins=True))

    assert service.scheduler.settings.plugins.names == ()
    assert [r.getMessage() for r in caplog.records if r.name == SERVICE] == [
        f"spec.plugins names 'Typo', which is no plugin: ignored (known: {KNOWN}); running: none",
        "spec.plugins enables no filter plugin: every cluster passes the filters ('*' enables every plugin, "
        "'-Name' then disables one); running: none"]


def test_affinity_gate_registers_filters(service: SchedulerService) -> None:
    service.apply_config(SchedulerConfig(feature_gates=FeatureGatesConfig(workload_affinity=True)))
    on = set(service.scheduler.settings.plugins.names)
    service.apply_config(SchedulerConfig())
    off = set(service.scheduler.settings.plugins.names)

    assert on - off == {"WorkloadAffinity", "WorkloadAntiAffinity"}


def test_groups_index_built_when_gate_turns_on_and_kept(
    service: SchedulerService,
) -> None:
    grouped = binding("a", replicas=1, placement=placement())
    grouped["spec"]["workloadAffinityGroups"] = {"affinityGroup": "g"}
    service.scheduler.on_binding(grouped)
    gated = SchedulerConfig(feature_gates=FeatureGatesConfig(workload_affinity=True))

    service.apply_config(gated)
    built = service.context.workload_groups
    service.apply_config(gated)

    assert built is not None and [m.name for m in built.affinity_members("g")] == ["a"]
    assert service.context.workload_groups is built
    assert service.scheduler.settings.workload_groups is built


def test_estimator_finds_services_and_counts_failures(
    service: SchedulerService,
) -> None:
    service.apply_config(SchedulerConfig(estimator=EstimatorConfig(enabled=True)))
    estimator = service.scheduler.settings.estimator

    assert isinstance(estimator, AccurateEstimator)
    assert estimator._pool._lookup == service._lookup_service
    assert estimator._reporter._counter is failure_counter(service.metrics.registry)
    assert failure_counter(service.metrics.registry) is not failure_counter(None)


async def test_estimator_service_read_from_server() -> None:
    async with DevCluster() as api:
        api.store.ensure_namespace("est")
        api.store.create("services", {"apiVersion": "v1", "kind": "Service",
                                      "metadata": {"name": "estimator-m1", "namespace": "est"},
                                      "spec": {"clusterIP": "10.0.0.9", "ports": [{"port": 10352}]}})
        service = SchedulerService(Connection(server=api.url), SchedulerConfig())
        try:
            found = await service._lookup_service("est", "estimator-m1")
            missing = await service._lookup_service("est", "estimator-m2")
        finally:
            await service.client.close()
            await service.lease_client.close()

    assert found is not None and found["spec"]["clusterIP"] == "10.0.0.9"
    assert missing is None


def test_warning_for_unknown_plugin_lists_every_running_one(
    service: SchedulerService, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=SERVICE):
        service.apply_config(SchedulerConfig(plugins=("TaintToleration", "APIEnablement", "Typo"),
                                             allow_unknown_plugins=True))

    running = ", ".join(service.scheduler.settings.plugins.names)
    assert running.count(", ") == 1
    assert [r.getMessage() for r in caplog.records if r.name == SERVICE] == [
        f"spec.plugins names 'Typo', which is no plugin: ignored (known: {KNOWN}); running: {running}"]


async def test_decision_processes_survive_reload() -> None:
    service = await offline(replace(CONFIG, decision_processes=2))
    assert service.decisions is not None and service.decisions.size == 2
    assert service.scheduler.settings.decisions is service.decisions
    service.apply_config(replace(CONFIG, decision_processes=5))
    assert service.config.decision_processes == 2
    assert service.scheduler.settings.decisions is service.decisions


async def test_no_processes_decides_in_scheduler() -> None:
    service = await offline(CONFIG)
    assert service.decisions is None and service.scheduler.settings.decisions is None
