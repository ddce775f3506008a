"""What the scheduler's service reads from its configuration beyond the fields themselves: the accurate
estimator's settings, and whether the first pass waits for every binding to be listed."""

from __future__ import annotations

from ...estimation import EstimatorSettings
from ...model.config import SchedulerConfig


def estimator_settings(config: SchedulerConfig) -> EstimatorSettings:
    estimator = config.estimator
    return EstimatorSettings(
        timeout=estimator.timeout,
        service_namespace=estimator.service.namespace,
        service_prefix=estimator.service.prefix,
        port=estimator.service.port,
        endpoints=dict(estimator.endpoints),
        ca_file=estimator.tls.ca_file,
        cert_file=estimator.tls.cert_file,
        key_file=estimator.tls.key_file,
        insecure_skip_verify=estimator.tls.insecure_skip_verify,
        partial_failure="discard" if estimator.partial_failure == "discard" else "fallback",
        disable_in_pull_mode=estimator.disable_in_pull_mode,
    )


def needs_every_binding(config: SchedulerConfig) -> bool:
    """Whether the first pass must wait for every binding to be listed: each pass decides its binding alone
    unless a gate makes the others matter (PriorityBasedScheduling: the queue hands out the highest priority of
    all bindings first; WorkloadAffinity: a binding follows the clusters of its group's other bindings)."""
    gates = config.feature_gates
    return gates.priority_based_scheduling or gates.workload_affinity
