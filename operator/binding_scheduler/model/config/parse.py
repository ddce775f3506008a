"""Reading a SchedulerConfiguration object into a `SchedulerConfig`: a missing field takes its default, anything
else wrong raises a ValidationError naming its JSON path."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping
from typing import Any

from ..binding import DEFAULT_SCHEDULER_NAME
from ..duration import parse_duration
from ..errors import ValidationError, show
from ..fields import EMPTY_MAP, INT32_MAX, Fields, FrozenMap
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
    json_fields,
)

MAX_PORT = 65535
MAX_QPS = 1e6
LEADER_ELECTION_JITTER = 1.2  # client-go's JitterFactor: renewDeadline must exceed retryPeriod times this

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_HOSTNAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*")


def parse_config(data: Any) -> SchedulerConfig:
    """A whole SchedulerConfiguration object (apiVersion, kind, metadata, spec, status) as a SchedulerConfig.

    A missing spec, or a missing field, takes the default. Anything else wrong raises ValidationError with the
    JSON path, unknown spec fields included (`spec.estimater: unknown field`).
    """
    root = Fields(data, "")
    _expect(root, "apiVersion", API_VERSION)
    _expect(root, "kind", KIND)
    spec = root.obj("spec")
    if spec is None:
        return DEFAULT_CONFIG
    _reject_unknown(spec, SchedulerConfig)
    return SchedulerConfig(
        scheduler_name=_name(spec, "schedulerName", DEFAULT_SCHEDULER_NAME),
        workers=spec.integer("workers", 1, minimum=1, maximum=INT32_MAX),
        plugins=_plugins(spec),
        enable_empty_workload_propagation=spec.flag("enableEmptyWorkloadPropagation"),
        decision_cpu_limit=_positive_duration(spec, "decisionCPULimit", SchedulerConfig().decision_cpu_limit),
        decision_processes=spec.integer("decisionProcesses", 0, minimum=0, maximum=MAX_DECISION_PROCESSES),
        estimator=_estimator(spec.obj("estimator")),
        queue=_queue(spec.obj("queue")),
        shutdown=_shutdown(spec.obj("shutdown")),
        preemption=_preemption(spec.obj("preemption")),
        leader_election=_leader_election(spec.obj("leaderElection")),
        metrics=_metrics(spec.obj("metrics")),
        kube_api=_kube_api(spec.obj("kubeAPI")),
        feature_gates=_feature_gates(spec.obj("featureGates")),
    )


MAX_DECISION_PROCESSES = 64
"""More decision processes than cores only adds contention; 64 bounds a typo."""


def _expect(root: Fields, key: str, wanted: str) -> None:
    value = root.text(key)
    if not value:
        raise ValidationError(key, "is required")
    if value != wanted:
        raise ValidationError(key, f"{show(value)} is not {wanted}")


def _reject_unknown(fields: Fields, cls: type[Any]) -> None:
    known = {name for name, _ in json_fields(cls)}
    for key in fields.data:
        if key not in known:
            raise ValidationError(fields.at(str(key)), "unknown field")


def _section(fields: Fields | None, cls: type[Any]) -> Fields | None:
    if fields is not None:
        _reject_unknown(fields, cls)
    return fields


def _name(fields: Fields, key: str, default: str) -> str:
    value = fields.text(key, default)
    if not value:
        raise ValidationError(fields.at(key), "must not be empty")
    return value


def _dns(fields: Fields, key: str, default: str, pattern: re.Pattern[str], *, what: str, limit: int) -> str:
    value = _name(fields, key, default)
    if len(value) > limit or not pattern.fullmatch(value):
        raise ValidationError(fields.at(key), f"{show(value)} is not a valid {what}")
    return value


def _namespace(fields: Fields, key: str, default: str) -> str:
    return _dns(fields, key, default, _DNS_LABEL, what="namespace name (a DNS-1123 label)", limit=63)


def _port(fields: Fields, key: str, default: int) -> int:
    return fields.integer(key, default, minimum=0, maximum=MAX_PORT)


def _duration(fields: Fields, key: str, default: float) -> float:
    if fields.raw(key) is None:
        return default
    path = fields.at(key)
    seconds = parse_duration(fields.text(key), path)
    if not math.isfinite(seconds):
        raise ValidationError(path, f"{show(fields.raw(key))} is out of range")
    return seconds


def _positive_duration(fields: Fields, key: str, default: float) -> float:
    seconds = _duration(fields, key, default)
    if seconds <= 0:
        raise ValidationError(fields.at(key), f"{show(fields.raw(key))} must be greater than 0")
    return seconds


def _quote(fields: Fields, key: str, seconds: float) -> str:
    """The value as the user wrote it, or the default in seconds when they wrote nothing."""
    raw = fields.raw(key)
    return show(raw) if raw is not None else f"{seconds:g}s"


def _plugins(spec: Fields) -> tuple[str, ...]:
    if spec.raw("plugins") is None:
        return DEFAULT_CONFIG.plugins
    plugins = spec.strings("plugins")
    for i, entry in enumerate(plugins):
        if entry in ("", "-"):
            raise ValidationError(f"{spec.at('plugins')}[{i}]", f"{show(entry)} is not a plugin name")
    return plugins


def _estimator(fields: Fields | None) -> EstimatorConfig:
    est = _section(fields, EstimatorConfig)
    if est is None:
        return EstimatorConfig()
    partial = est.text("partialFailure", "fallback")
    if partial not in PARTIAL_FAILURE_MODES:
        raise ValidationError(est.at("partialFailure"), f"{show(partial)} is not one of fallback, discard")
    return EstimatorConfig(
        enabled=est.flag("enabled"),
        timeout=_duration(est, "timeout", 3.0),
        service=_service(est.obj("service")),
        endpoints=_endpoints(est),
        tls=_tls(est.obj("tls")),
        partial_failure=partial,
        disable_in_pull_mode=est.flag("disableInPullMode"),
    )


def _service(fields: Fields | None) -> EstimatorServiceConfig:
    service = _section(fields, EstimatorServiceConfig)
    if service is None:
        return EstimatorServiceConfig()
    defaults = EstimatorServiceConfig()
    return EstimatorServiceConfig(
        namespace=_namespace(service, "namespace", defaults.namespace),
        prefix=_name(service, "prefix", defaults.prefix),
        port=_port(service, "port", defaults.port),
    )


def _endpoints(est: Fields) -> Mapping[str, str]:
    endpoints = est.string_map("endpoints")
    for cluster, address in endpoints.items():
        if not cluster:
            raise ValidationError(est.at("endpoints"), "a cluster name must not be empty")
        if not _is_host_port(address):
            raise ValidationError(
                f"{est.at('endpoints')}.{cluster}", f"{show(address)} is not host:port (a port from 1 to 65535)"
            )
    return FrozenMap(endpoints) if endpoints else EMPTY_MAP


def _is_host_port(address: str) -> bool:
    host, colon, port = address.rpartition(":")
    if not colon or not host or not (port.isascii() and port.isdigit() and len(port) <= 5):
        return False
    if not 1 <= int(port) <= MAX_PORT:
        return False
    if host.startswith("[") and host.endswith("]"):  # an IPv6 literal, [::1]:10352
        host = host[1:-1]
        return bool(host) and all(c in "0123456789abcdefABCDEF:." for c in host)
    return ":" not in host and "[" not in host and not any(c.isspace() or c == "/" for c in host)


def _tls(fields: Fields | None) -> EstimatorTLSConfig:
    tls = _section(fields, EstimatorTLSConfig)
    if tls is None:
        return EstimatorTLSConfig()
    cert, key = tls.text("certFile"), tls.text("keyFile")
    if cert and not key:
        raise ValidationError(tls.at("keyFile"), "is required when certFile is set")
    if key and not cert:
        raise ValidationError(tls.at("certFile"), "is required when keyFile is set")
    return EstimatorTLSConfig(
        ca_file=tls.text("caFile"),
        cert_file=cert,
        key_file=key,
        insecure_skip_verify=tls.flag("insecureSkipVerify"),
    )


def _queue(fields: Fields | None) -> QueueConfig:
    queue = _section(fields, QueueConfig)
    if queue is None:
        return QueueConfig()
    defaults = QueueConfig()
    initial = _positive_duration(queue, "initialBackoff", defaults.initial_backoff)
    maximum = _duration(queue, "maxBackoff", defaults.max_backoff)
    if initial > maximum:
        raise ValidationError(
            queue.at("initialBackoff"),
            f"{_quote(queue, 'initialBackoff', initial)} is greater than maxBackoff "
            f"({_quote(queue, 'maxBackoff', maximum)})",
        )
    return QueueConfig(
        initial_backoff=initial,
        max_backoff=maximum,
        unschedulable_timeout=_duration(queue, "unschedulableTimeout", defaults.unschedulable_timeout),
    )


def _shutdown(fields: Fields | None) -> ShutdownConfig:
    shutdown = _section(fields, ShutdownConfig)
    if shutdown is None:
        return ShutdownConfig()
    return ShutdownConfig(drain_timeout=_duration(shutdown, "drainTimeout", ShutdownConfig().drain_timeout))


def _preemption(fields: Fields | None) -> PreemptionConfig:
    preemption = _section(fields, PreemptionConfig)
    if preemption is None:
        return PreemptionConfig()
    defaults = PreemptionConfig()
    return PreemptionConfig(
        max_victims=preemption.integer("maxVictims", defaults.max_victims, minimum=1, maximum=INT32_MAX),
        max_per_minute=preemption.integer("maxPerMinute", defaults.max_per_minute, minimum=1, maximum=INT32_MAX),
    )


def _leader_election(fields: Fields | None) -> LeaderElectionConfig:
    le = _section(fields, LeaderElectionConfig)
    if le is None:
        return LeaderElectionConfig()
    defaults = LeaderElectionConfig()
    lease = _positive_duration(le, "leaseDuration", defaults.lease_duration)
    renew = _positive_duration(le, "renewDeadline", defaults.renew_deadline)
    retry = _positive_duration(le, "retryPeriod", defaults.retry_period)
    if renew >= lease:
        raise ValidationError(
            le.at("renewDeadline"),
            f"{_quote(le, 'renewDeadline', renew)} must be less than leaseDuration "
            f"({_quote(le, 'leaseDuration', lease)})",
        )
    if renew <= LEADER_ELECTION_JITTER * retry:
        raise ValidationError(
            le.at("retryPeriod"),
            f"{_quote(le, 'retryPeriod', retry)} is too long: renewDeadline ({_quote(le, 'renewDeadline', renew)})"
            f" must be greater than {LEADER_ELECTION_JITTER:g} x retryPeriod",
        )
    return LeaderElectionConfig(
        enabled=le.flag("enabled", defaults.enabled),
        lease_name=_dns(le, "leaseName", defaults.lease_name, _DNS_SUBDOMAIN,
                        what="Lease name (a DNS-1123 subdomain)", limit=253),
        lease_namespace=_namespace(le, "leaseNamespace", defaults.lease_namespace),
        lease_duration=lease,
        renew_deadline=renew,
        retry_period=retry,
    )


def _metrics(fields: Fields | None) -> MetricsConfig:
    metrics = _section(fields, MetricsConfig)
    if metrics is None:
        return MetricsConfig()
    defaults = MetricsConfig()
    config = MetricsConfig(
        port=_port(metrics, "port", defaults.port),
        health_port=_port(metrics, "healthPort", defaults.health_port),
        host=_host(metrics, "host"),
        health_host=_host(metrics, "healthHost"),
    )
    if config.port and config.port == config.health_port and config.host != config.health_host:
        raise ValidationError(
            metrics.at("healthHost"),
            f"{show(config.health_host)} differs from host ({show(config.host)}) while healthPort equals port "
            f"({config.port}): one server serves both, on one address",
        )
    return config


def _host(fields: Fields, key: str) -> str:
    value = fields.text(key)
    if not value or is_host(value):
        return value
    raise ValidationError(fields.at(key), f"{show(value)} is not an IP address or a hostname")


def is_host(value: str) -> bool:
    """An address to listen on: an IP literal (IPv6 without brackets) or a hostname."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return len(value) <= 253 and _HOSTNAME.fullmatch(value) is not None
    return True


def _kube_api(fields: Fields | None) -> KubeAPIConfig:
    api = _section(fields, KubeAPIConfig)
    if api is None:
        return KubeAPIConfig()
    defaults = KubeAPIConfig()
    qps: Any = api.raw("qps")
    if qps is None:
        qps = defaults.qps
    elif isinstance(qps, bool) or not isinstance(qps, int | float):
        raise ValidationError(api.at("qps"), f"expected a number, got {show(qps)}")
    elif not 0 < qps <= MAX_QPS:  # also false for NaN; an int of any size compares without conversion
        raise ValidationError(api.at("qps"), f"{show(qps)} is not a number greater than 0 and at most {MAX_QPS:.0f}")
    return KubeAPIConfig(qps=float(qps), burst=api.integer("burst", defaults.burst, minimum=1, maximum=INT32_MAX))


def _feature_gates(fields: Fields | None) -> FeatureGatesConfig:
    gates = _section(fields, FeatureGatesConfig)
    if gates is None:
        return FeatureGatesConfig()
    overcommit = gates.data.get("SchedulingOvercommitProtection")
    return FeatureGatesConfig(
        multiple_pod_templates_scheduling=gates.flag("MultiplePodTemplatesScheduling"),
        scheduling_overcommit_protection=None if overcommit is None else gates.flag("SchedulingOvercommitProtection"),
        workload_affinity=gates.flag("WorkloadAffinity"),
        priority_based_scheduling=gates.flag("PriorityBasedScheduling"),
        priority_based_preemptive_scheduling=gates.flag("PriorityBasedPreemptiveScheduling"),
    )
