"""What a service is built from, one small factory each: its two API clients (the passes' and the Lease's), the
scheduling queue, the decision processes, the Lease elector and the health server, each from the configuration."""

from __future__ import annotations

from collections.abc import Callable

from ...kube.client import USER_AGENT, ApiClient, RequestObserver
from ...kube.connection import Connection
from ...kube.gate import WriteGate
from ...kube.lease import LeaseElector
from ...model.config import SchedulerConfig
from ..decisions.pool import DecisionPool
from ..observability.health import HealthServer
from ..observability.metrics import SchedulerMetrics
from ..state.queue import SchedulingQueue

LEASE_QPS, LEASE_BURST = 5.0, 10  # a renewal is two requests per retry period


def api_clients(
    connection: Connection, gate: WriteGate, config: SchedulerConfig, identity: str, observer: RequestObserver
) -> tuple[ApiClient, ApiClient]:
    """The passes' client, at `kubeAPI`'s rate, and the Lease's own (with its own rate limiter, as Karmada's leader
    election has: renewals never queue behind the passes' requests). Both share the write gate, so a closed gate
    stops Lease writes too, and both name the instance in their User-Agent (the API server's audit log says which
    instance sent a request)."""
    agent = f"{USER_AGENT} ({identity})"
    passes = ApiClient(connection, gate, qps=config.kube_api.qps, burst=config.kube_api.burst, user_agent=agent,
                       observer=observer)
    lease = ApiClient(connection, gate, qps=LEASE_QPS, burst=LEASE_BURST, user_agent=agent, observer=observer)
    return passes, lease


def scheduling_queue(config: SchedulerConfig) -> SchedulingQueue:
    queue = config.queue
    return SchedulingQueue(initial_backoff=queue.initial_backoff, max_backoff=queue.max_backoff,
                           unschedulable_timeout=queue.unschedulable_timeout)


def decision_pool(config: SchedulerConfig) -> DecisionPool | None:
    """The decision processes (`decisionProcesses`), none when it is 0."""
    return DecisionPool(config.decision_processes) if config.decision_processes > 0 else None


def lease_elector(client: ApiClient, config: SchedulerConfig, identity: str) -> LeaseElector | None:
    election = config.leader_election
    if not election.enabled:
        return None
    return LeaseElector(client, name=election.lease_name, namespace=election.lease_namespace, identity=identity,
                        lease_duration=election.lease_duration, renew_deadline=election.renew_deadline,
                        retry_period=election.retry_period)


def health_server(metrics: SchedulerMetrics, config: SchedulerConfig, ready: Callable[[], bool]) -> HealthServer:
    served = config.metrics
    return HealthServer(metrics, metrics_host=served.host, metrics_port=served.port or None,
                        health_host=served.health_host, health_port=served.health_port or None, ready=ready)
