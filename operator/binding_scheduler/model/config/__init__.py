"""SchedulerConfiguration (`config.binding-scheduler.io/v1alpha1`): the scheduler's settings, typed and validated.

What Karmada passes as command-line flags (`cmd/scheduler/app/options/options.go: Options.AddFlags`) is one
namespaced custom resource here. The defaults are Karmada's; `metrics` and `kubeAPI` are our additions
(Karmada's `--metrics-bind-address`, `--health-probe-bind-address`, `--kube-api-qps` and `--kube-api-burst`).
Durations are Go/Kubernetes duration strings in the object and float seconds in the model. Pure: no I/O.

The sections and their defaults are in `sections`, reading and validating an object in `parse`, what a new spec
changes (and the `Valid` condition that reports it) in `changes`.
"""

from .changes import (
    CONDITION_VALID,
    REASON_INVALID_SPEC,
    REASON_RESTART_REQUIRED,
    REASON_VALID,
    RESTART_REQUIRED_PATHS,
    at_restart,
    changed_fields,
    config_field_paths,
    restart_required,
    validity,
)
from .parse import LEADER_ELECTION_JITTER, MAX_PORT, MAX_QPS, is_host, parse_config, read_config
from .sections import (
    API_VERSION,
    DEFAULT_CONFIG,
    KIND,
    PARTIAL_FAILURE_MODES,
    EstimatorConfig,
    EstimatorServiceConfig,
    EstimatorTLSConfig,
    FeatureGatesConfig,
    KubeAPIConfig,
    LeaderElectionConfig,
    MetricsConfig,
    PreemptionConfig,
    QueueConfig,
    SchedulerConfig,
    ShutdownConfig,
    overcommit_protected,
)

__all__ = [
    "API_VERSION",
    "CONDITION_VALID",
    "DEFAULT_CONFIG",
    "KIND",
    "LEADER_ELECTION_JITTER",
    "MAX_PORT",
    "MAX_QPS",
    "PARTIAL_FAILURE_MODES",
    "REASON_INVALID_SPEC",
    "REASON_RESTART_REQUIRED",
    "REASON_VALID",
    "RESTART_REQUIRED_PATHS",
    "EstimatorConfig",
    "EstimatorServiceConfig",
    "EstimatorTLSConfig",
    "FeatureGatesConfig",
    "KubeAPIConfig",
    "LeaderElectionConfig",
    "MetricsConfig",
    "PreemptionConfig",
    "QueueConfig",
    "SchedulerConfig",
    "ShutdownConfig",
    "at_restart",
    "changed_fields",
    "config_field_paths",
    "is_host",
    "overcommit_protected",
    "parse_config",
    "read_config",
    "restart_required",
    "validity",
]
