"""The SchedulerConfiguration's spec as typed sections: one frozen dataclass per section, with Karmada's defaults
and each field's JSON name in its metadata (`json_fields`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..binding import DEFAULT_SCHEDULER_NAME
from ..fields import EMPTY_MAP

API_VERSION = "config.binding-scheduler.io/v1alpha1"
KIND = "SchedulerConfiguration"
PARTIAL_FAILURE_MODES = ("fallback", "discard")


def _json(name: str) -> dict[str, str]:
    return {"json": name}


@dataclass(frozen=True, slots=True)
class EstimatorServiceConfig:
    """Where the accurate estimator of cluster C is found: service `<prefix>-<C>` in `namespace`, on `port`."""

    namespace: str = field(default="karmada-system", metadata=_json("namespace"))
    prefix: str = field(default="karmada-scheduler-estimator", metadata=_json("prefix"))
    port: int = field(default=10352, metadata=_json("port"))


@dataclass(frozen=True, slots=True)
class EstimatorTLSConfig:
    ca_file: str = field(default="", metadata=_json("caFile"))
    cert_file: str = field(default="", metadata=_json("certFile"))
    key_file: str = field(default="", metadata=_json("keyFile"))
    insecure_skip_verify: bool = field(default=False, metadata=_json("insecureSkipVerify"))


@dataclass(frozen=True, slots=True)
class EstimatorConfig:
    enabled: bool = field(default=False, metadata=_json("enabled"))
    timeout: float = field(default=3.0, metadata=_json("timeout"))
    service: EstimatorServiceConfig = field(default=EstimatorServiceConfig(), metadata=_json("service"))
    endpoints: Mapping[str, str] = field(default=EMPTY_MAP, metadata=_json("endpoints"))
    """Static addresses by cluster name (`host:port`); a cluster listed here skips service discovery."""
    tls: EstimatorTLSConfig = field(default=EstimatorTLSConfig(), metadata=_json("tls"))
    partial_failure: str = field(default="fallback", metadata=_json("partialFailure"))
    """`fallback`: a cluster whose estimator failed keeps the general estimate; `discard`: it gets none."""
    disable_in_pull_mode: bool = field(default=False, metadata=_json("disableInPullMode"))


@dataclass(frozen=True, slots=True)
class QueueConfig:
    initial_backoff: float = field(default=1.0, metadata=_json("initialBackoff"))
    max_backoff: float = field(default=10.0, metadata=_json("maxBackoff"))
    unschedulable_timeout: float = field(default=300.0, metadata=_json("unschedulableTimeout"))


@dataclass(frozen=True, slots=True)
class ShutdownConfig:
    drain_timeout: float = field(default=5.0, metadata=_json("drainTimeout"))


@dataclass(frozen=True, slots=True)
class PreemptionConfig:
    """Bounds of binding priority preemption (gate PriorityBasedPreemptiveScheduling)."""

    max_victims: int = field(default=100, metadata=_json("maxVictims"))
    """The most bindings one preemption may evict; a plan that needs more is not made."""
    max_per_minute: int = field(default=30, metadata=_json("maxPerMinute"))
    """The most preemptions that evict anyone in any 60 seconds; past it, a binding that would preempt waits
    as unschedulable."""


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    enabled: bool = field(default=True, metadata=_json("enabled"))
    lease_name: str = field(default="karmada-scheduler", metadata=_json("leaseName"))
    lease_namespace: str = field(default="karmada-system", metadata=_json("leaseNamespace"))
    lease_duration: float = field(default=15.0, metadata=_json("leaseDuration"))
    renew_deadline: float = field(default=10.0, metadata=_json("renewDeadline"))
    retry_period: float = field(default=2.0, metadata=_json("retryPeriod"))


@dataclass(frozen=True, slots=True)
class MetricsConfig:
    """Our addition. A port of 0 disables that server; equal ports mean one server for both (then the hosts
    must be equal too). A host of "" listens on every interface, as Go's `:8080` does."""

    port: int = field(default=8080, metadata=_json("port"))
    health_port: int = field(default=10351, metadata=_json("healthPort"))
    host: str = field(default="", metadata=_json("host"))
    health_host: str = field(default="", metadata=_json("healthHost"))


@dataclass(frozen=True, slots=True)
class KubeAPIConfig:
    """Our addition: the client-side rate limit of our API client (Karmada's --kube-api-qps/--kube-api-burst)."""

    qps: float = field(default=40.0, metadata=_json("qps"))
    burst: int = field(default=60, metadata=_json("burst"))


@dataclass(frozen=True, slots=True)
class FeatureGatesConfig:
    """Karmada's alpha scheduler gates we implement (off by default, as in Karmada, except overcommit protection:
    unset, it is on when more than one worker runs passes; see `overcommit_protected`)."""

    multiple_pod_templates_scheduling: bool = field(default=False, metadata=_json("MultiplePodTemplatesScheduling"))
    scheduling_overcommit_protection: bool | None = field(
        default=None, metadata=_json("SchedulingOvercommitProtection"))
    workload_affinity: bool = field(default=False, metadata=_json("WorkloadAffinity"))
    priority_based_scheduling: bool = field(default=False, metadata=_json("PriorityBasedScheduling"))
    """Its queue (priority first) is always ours; the gate matters only together with the next one."""
    priority_based_preemptive_scheduling: bool = field(
        default=False, metadata=_json("PriorityBasedPreemptiveScheduling"))
    """Binding priority preemption (Karmada's PR #7832), on only with PriorityBasedScheduling too."""

    @property
    def preemption(self) -> bool:
        return self.priority_based_scheduling and self.priority_based_preemptive_scheduling


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    scheduler_name: str = field(default=DEFAULT_SCHEDULER_NAME, metadata=_json("schedulerName"))
    workers: int = field(default=1, metadata=_json("workers"))
    plugins: tuple[str, ...] = field(default=("*",), metadata=_json("plugins"))
    allow_unknown_plugins: bool = field(default=False, metadata=_json("allowUnknownPlugins"))
    """A `plugins` name no plugin has is ignored, as Karmada ignores it, instead of refused (ours: a typo in a list
    without `*` would otherwise leave every filter off in silence)."""
    enable_empty_workload_propagation: bool = field(default=False, metadata=_json("enableEmptyWorkloadPropagation"))
    decision_cpu_limit: float = field(default=10.0, metadata=_json("decisionCPULimit"))
    decision_processes: int = field(default=0, metadata=_json("decisionProcesses"))
    """Processes deciding beside the scheduler's own (0: it decides every binding itself)."""
    estimator: EstimatorConfig = field(default=EstimatorConfig(), metadata=_json("estimator"))
    queue: QueueConfig = field(default=QueueConfig(), metadata=_json("queue"))
    shutdown: ShutdownConfig = field(default=ShutdownConfig(), metadata=_json("shutdown"))
    preemption: PreemptionConfig = field(default=PreemptionConfig(), metadata=_json("preemption"))
    leader_election: LeaderElectionConfig = field(default=LeaderElectionConfig(), metadata=_json("leaderElection"))
    metrics: MetricsConfig = field(default=MetricsConfig(), metadata=_json("metrics"))
    kube_api: KubeAPIConfig = field(default=KubeAPIConfig(), metadata=_json("kubeAPI"))
    feature_gates: FeatureGatesConfig = field(default=FeatureGatesConfig(), metadata=_json("featureGates"))


DEFAULT_CONFIG = SchedulerConfig()


def json_fields(cls: type[Any]) -> list[tuple[str, dataclasses.Field[Any]]]:
    return [(f.metadata["json"], f) for f in dataclasses.fields(cls)]


def overcommit_protected(config: SchedulerConfig) -> bool:
    """`SchedulingOvercommitProtection` as set, or, unset, on exactly when passes run concurrently (workers > 1):
    one pass at a time decides from summaries its own earlier decisions are not in yet, as Karmada does."""
    gate = config.feature_gates.scheduling_overcommit_protection
    return config.workers > 1 if gate is None else gate
