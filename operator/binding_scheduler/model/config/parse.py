"""Reading a SchedulerConfiguration object into a `SchedulerConfig`: a missing field takes its default, anything
else wrong is a ValidationError naming its JSON path. Every wrong field is found in one reading (`read_config`),
as kubectl reports every invalid field of an object at once; `parse_config` raises them together."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..binding import DEFAULT_SCHEDULER_NAME
from ..duration import parse_duration
from ..errors import ValidationError, combined, show
from ..fields import EMPTY_MAP, INT32_MAX, Fields, FrozenMap
from .reader import Reader
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
    JSON path, unknown spec fields included (`spec.estimater: unknown field`); several wrong fields raise one
    `ValidationErrors` holding each (`.errors`).
    """
    config, errors = read_config(data)
    if errors:
        raise combined(errors)
    return config


def read_config(data: Any) -> tuple[SchedulerConfig, list[ValidationError]]:
    """The configuration and every error found in it, in the order of the object's fields (unknown fields of a
    section first). A wrong field reads as its default, so the configuration returned is the one to use only
    when there is no error; the rules that tie fields together are checked only between fields without one.
    An object of another kind is not read past its `apiVersion` and `kind`."""
    try:
        root = Reader(Fields(data, ""))
    except ValidationError as error:
        return DEFAULT_CONFIG, [error]
    root.read("apiVersion", "", _expected(API_VERSION))
    root.read("kind", "", _expected(KIND))
    if not root.ok("kind") and isinstance(root.raw("kind"), str) and root.raw("kind"):
        return DEFAULT_CONFIG, root.errors  # another kind's spec means something else
    spec = root.section("spec", SchedulerConfig)
    if spec is None:
        return DEFAULT_CONFIG, root.errors
    config = SchedulerConfig(
        scheduler_name=spec.read("schedulerName", DEFAULT_SCHEDULER_NAME, _name),
        workers=spec.read("workers", 1, _integer(1, INT32_MAX)),
        plugins=_plugins(spec),
        allow_unknown_plugins=spec.read("allowUnknownPlugins", False, Fields.flag),
        enable_empty_workload_propagation=spec.read("enableEmptyWorkloadPropagation", False, Fields.flag),
        decision_cpu_limit=spec.read("decisionCPULimit", SchedulerConfig().decision_cpu_limit, _positive_duration),
        decision_processes=spec.read("decisionProcesses", 0, _integer(0, MAX_DECISION_PROCESSES)),
        estimator=_estimator(spec.section("estimator", EstimatorConfig)),
        queue=_queue(spec.section("queue", QueueConfig)),
        shutdown=_shutdown(spec.section("shutdown", ShutdownConfig)),
        preemption=_preemption(spec.section("preemption", PreemptionConfig)),
        leader_election=_leader_election(spec.section("leaderElection", LeaderElectionConfig)),
        metrics=_metrics(spec.section("metrics", MetricsConfig)),
        kube_api=_kube_api(spec.section("kubeAPI", KubeAPIConfig)),
        feature_gates=_feature_gates(spec.section("featureGates", FeatureGatesConfig)),
    )
    return config, root.errors


MAX_DECISION_PROCESSES = 64
"""More decision processes than cores only adds contention; 64 bounds a typo."""


def _expected(wanted: str) -> Callable[[Fields, str, str], str]:
    def read(root: Fields, key: str, default: str) -> str:
        value = root.text(key, default)
        if not value:
            raise ValidationError(key, "is required")
        if value != wanted:
            raise ValidationError(key, f"{show(value)} is not {wanted}")
        return value

    return read


def _integer(minimum: int, maximum: int) -> Callable[[Fields, str, int], int]:
    def read(fields: Fields, key: str, default: int) -> int:
        return fields.integer(key, default, minimum=minimum, maximum=maximum)

    return read


def _name(fields: Fields, key: str, default: str) -> str:
    value = fields.text(key, default)
    if not value:
        raise ValidationError(fields.at(key), "must not be empty")
    return value


def _dns(pattern: re.Pattern[str], *, what: str, limit: int) -> Callable[[Fields, str, str], str]:
    def read(fields: Fields, key: str, default: str) -> str:
        value = _name(fields, key, default)
        if len(value) > limit or not pattern.fullmatch(value):
            raise ValidationError(fields.at(key), f"{show(value)} is not a valid {what}")
        return value

    return read


_namespace = _dns(_DNS_LABEL, what="namespace name (a DNS-1123 label)", limit=63)
_lease_name = _dns(_DNS_SUBDOMAIN, what="Lease name (a DNS-1123 subdomain)", limit=253)


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


def _quote(fields: Reader, key: str, seconds: float) -> str:
    """The value as the user wrote it, or the default in seconds when they wrote nothing."""
    raw = fields.raw(key)
    return show(raw) if raw is not None else f"{seconds:g}s"


def _plugins(spec: Reader) -> tuple[str, ...]:
    plugins = spec.raw("plugins")
    if plugins is None:
        return DEFAULT_CONFIG.plugins
    if not isinstance(plugins, list | tuple):
        spec.fail("plugins", f"expected a list, got {show(plugins)}")
        return DEFAULT_CONFIG.plugins
    for i, entry in enumerate(plugins):
        if not isinstance(entry, str):
            spec.fail("plugins", f"expected a string, got {show(entry)}", at=f"{spec.at('plugins')}[{i}]")
        elif entry in ("", "-"):
            spec.fail("plugins", f"{show(entry)} is not a plugin name", at=f"{spec.at('plugins')}[{i}]")
    return tuple(plugins) if spec.ok("plugins") else DEFAULT_CONFIG.plugins


def _estimator(est: Reader | None) -> EstimatorConfig:
    if est is None:
        return EstimatorConfig()
    defaults = EstimatorConfig()
    return EstimatorConfig(
        enabled=est.read("enabled", False, Fields.flag),
        timeout=est.read("timeout", defaults.timeout, _duration),
        service=_service(est.section("service", EstimatorServiceConfig)),
        endpoints=_endpoints(est),
        tls=_tls(est.section("tls", EstimatorTLSConfig)),
        partial_failure=est.read("partialFailure", defaults.partial_failure, _partial_failure),
        disable_in_pull_mode=est.read("disableInPullMode", False, Fields.flag),
    )


def _partial_failure(est: Fields, key: str, default: str) -> str:
    partial = est.text(key, default)
    if partial not in PARTIAL_FAILURE_MODES:
        raise ValidationError(est.at(key), f"{show(partial)} is not one of fallback, discard")
    return partial


def _service(service: Reader | None) -> EstimatorServiceConfig:
    if service is None:
        return EstimatorServiceConfig()
    defaults = EstimatorServiceConfig()
    return EstimatorServiceConfig(
        namespace=service.read("namespace", defaults.namespace, _namespace),
        prefix=service.read("prefix", defaults.prefix, _name),
        port=service.read("port", defaults.port, _port),
    )


def _endpoints(est: Reader) -> Mapping[str, str]:
    endpoints = est.raw("endpoints")
    if endpoints is None:
        return EMPTY_MAP
    if not isinstance(endpoints, Mapping):
        est.fail("endpoints", f"expected an object, got {show(endpoints)}")
        return EMPTY_MAP
    for cluster, address in endpoints.items():
        if not isinstance(cluster, str):
            est.fail("endpoints", f"expected string keys, got {show(cluster)}")
        elif not cluster:
            est.fail("endpoints", "a cluster name must not be empty")
        elif not isinstance(address, str):
            est.fail("endpoints", f"expected a string, got {show(address)}", at=f"{est.at('endpoints')}.{cluster}")
        elif not _is_host_port(address):
            est.fail("endpoints", f"{show(address)} is not host:port (a port from 1 to 65535)",
                     at=f"{est.at('endpoints')}.{cluster}")
    if not endpoints or not est.ok("endpoints"):
        return EMPTY_MAP
    return FrozenMap(endpoints)


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


def _tls(tls: Reader | None) -> EstimatorTLSConfig:
    if tls is None:
        return EstimatorTLSConfig()
    ca_file = tls.read("caFile", "", Fields.text)
    cert, key = tls.read("certFile", "", Fields.text), tls.read("keyFile", "", Fields.text)
    if cert and not key and tls.ok("keyFile"):
        tls.broken("keyFile", "is required when certFile is set")
    if key and not cert and tls.ok("certFile"):
        tls.broken("certFile", "is required when keyFile is set")
    return EstimatorTLSConfig(
        ca_file=ca_file,
        cert_file=cert,
        key_file=key,
        insecure_skip_verify=tls.read("insecureSkipVerify", False, Fields.flag),
    )


def _queue(queue: Reader | None) -> QueueConfig:
    if queue is None:
        return QueueConfig()
    defaults = QueueConfig()
    initial = queue.read("initialBackoff", defaults.initial_backoff, _positive_duration)
    maximum = queue.read("maxBackoff", defaults.max_backoff, _duration)
    if initial > maximum and queue.ok("initialBackoff", "maxBackoff"):
        queue.broken(
            "initialBackoff",
            f"{_quote(queue, 'initialBackoff', initial)} is greater than maxBackoff "
            f"({_quote(queue, 'maxBackoff', maximum)})",
        )
    return QueueConfig(
        initial_backoff=initial,
        max_backoff=maximum,
        unschedulable_timeout=queue.read("unschedulableTimeout", defaults.unschedulable_timeout, _duration),
    )


def _shutdown(shutdown: Reader | None) -> ShutdownConfig:
    if shutdown is None:
        return ShutdownConfig()
    return ShutdownConfig(drain_timeout=shutdown.read("drainTimeout", ShutdownConfig().drain_timeout, _duration))


def _preemption(preemption: Reader | None) -> PreemptionConfig:
    if preemption is None:
        return PreemptionConfig()
    defaults = PreemptionConfig()
    return PreemptionConfig(
        max_victims=preemption.read("maxVictims", defaults.max_victims, _integer(1, INT32_MAX)),
        max_per_minute=preemption.read("maxPerMinute", defaults.max_per_minute, _integer(1, INT32_MAX)),
    )


def _leader_election(le: Reader | None) -> LeaderElectionConfig:
    if le is None:
        return LeaderElectionConfig()
    defaults = LeaderElectionConfig()
    enabled = le.read("enabled", defaults.enabled, Fields.flag)
    lease_name = le.read("leaseName", defaults.lease_name, _lease_name)
    lease_namespace = le.read("leaseNamespace", defaults.lease_namespace, _namespace)
    lease = le.read("leaseDuration", defaults.lease_duration, _positive_duration)
    renew = le.read("renewDeadline", defaults.renew_deadline, _positive_duration)
    retry = le.read("retryPeriod", defaults.retry_period, _positive_duration)
    if renew >= lease and le.ok("leaseDuration", "renewDeadline"):
        le.broken(
            "renewDeadline",
            f"{_quote(le, 'renewDeadline', renew)} must be less than leaseDuration "
            f"({_quote(le, 'leaseDuration', lease)})",
        )
    if renew <= LEADER_ELECTION_JITTER * retry and le.ok("renewDeadline", "retryPeriod"):
        le.broken(
            "retryPeriod",
            f"{_quote(le, 'retryPeriod', retry)} is too long: renewDeadline ({_quote(le, 'renewDeadline', renew)})"
            f" must be greater than {LEADER_ELECTION_JITTER:g} x retryPeriod",
        )
    return LeaderElectionConfig(
        enabled=enabled,
        lease_name=lease_name,
        lease_namespace=lease_namespace,
        lease_duration=lease,
        renew_deadline=renew,
        retry_period=retry,
    )


def _metrics(metrics: Reader | None) -> MetricsConfig:
    if metrics is None:
        return MetricsConfig()
    defaults = MetricsConfig()
    config = MetricsConfig(
        port=metrics.read("port", defaults.port, _port),
        health_port=metrics.read("healthPort", defaults.health_port, _port),
        host=metrics.read("host", defaults.host, _host),
        health_host=metrics.read("healthHost", defaults.health_host, _host),
    )
    one_server = config.port and config.port == config.health_port
    if one_server and config.host != config.health_host and metrics.ok("port", "healthPort", "host", "healthHost"):
        metrics.broken(
            "healthHost",
            f"{show(config.health_host)} differs from host ({show(config.host)}) while healthPort equals port "
            f"({config.port}): one server serves both, on one address",
        )
    return config


def _host(fields: Fields, key: str, default: str) -> str:
    value = fields.text(key, default)
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


def _kube_api(api: Reader | None) -> KubeAPIConfig:
    if api is None:
        return KubeAPIConfig()
    defaults = KubeAPIConfig()
    return KubeAPIConfig(qps=api.read("qps", defaults.qps, _qps),
                         burst=api.read("burst", defaults.burst, _integer(1, INT32_MAX)))


def _qps(api: Fields, key: str, default: float) -> float:
    qps: Any = api.raw(key)
    if qps is None:
        return default
    if isinstance(qps, bool) or not isinstance(qps, int | float):
        raise ValidationError(api.at(key), f"expected a number, got {show(qps)}")
    if not 0 < qps <= MAX_QPS:  # also false for NaN; an int of any size compares without conversion
        raise ValidationError(api.at(key), f"{show(qps)} is not a number greater than 0 and at most {MAX_QPS:.0f}")
    return float(qps)


def _feature_gates(gates: Reader | None) -> FeatureGatesConfig:
    if gates is None:
        return FeatureGatesConfig()
    overcommit = gates.raw("SchedulingOvercommitProtection")
    return FeatureGatesConfig(
        multiple_pod_templates_scheduling=gates.read("MultiplePodTemplatesScheduling", False, Fields.flag),
        scheduling_overcommit_protection=(
            None if overcommit is None else gates.read("SchedulingOvercommitProtection", False, Fields.flag)
        ),
        workload_affinity=gates.read("WorkloadAffinity", False, Fields.flag),
        priority_based_scheduling=gates.read("PriorityBasedScheduling", False, Fields.flag),
        priority_based_preemptive_scheduling=gates.read("PriorityBasedPreemptiveScheduling", False, Fields.flag),
    )
