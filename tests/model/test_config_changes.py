"""What a new SchedulerConfiguration spec changes: which changes wait for a restart, which apply to the next pass,
and the `Valid` condition that reports the outcome."""

from __future__ import annotations

import pytest

from binding_scheduler.model import ValidationError
from binding_scheduler.model.config import (
    DEFAULT_CONFIG,
    changed_fields,
    config_field_paths,
    parse_config,
    restart_required,
    validity,
)
from tests.model.test_config import doc

RESTART = {
    "spec.schedulerName": {"schedulerName": "other"},
    "spec.decisionProcesses": {"decisionProcesses": 2},
    "spec.leaderElection.enabled": {"leaderElection": {"enabled": False}},
    "spec.leaderElection.leaseName": {"leaderElection": {"leaseName": "other"}},
    "spec.leaderElection.leaseNamespace": {"leaderElection": {"leaseNamespace": "other"}},
    "spec.leaderElection.leaseDuration": {"leaderElection": {"leaseDuration": "20s"}},
    "spec.leaderElection.renewDeadline": {"leaderElection": {"renewDeadline": "5s"}},
    "spec.leaderElection.retryPeriod": {"leaderElection": {"retryPeriod": "1s"}},
    "spec.metrics.port": {"metrics": {"port": 9090}},
    "spec.metrics.healthPort": {"metrics": {"healthPort": 9091}},
    "spec.metrics.host": {"metrics": {"host": "127.0.0.1"}},
    "spec.metrics.healthHost": {"metrics": {"healthHost": "127.0.0.1"}},
    "spec.kubeAPI.qps": {"kubeAPI": {"qps": 5}},
    "spec.kubeAPI.burst": {"kubeAPI": {"burst": 5}},
}
LIVE = {
    "spec.workers": {"workers": 4},
    "spec.plugins": {"plugins": ["-TaintToleration"]},
    "spec.allowUnknownPlugins": {"allowUnknownPlugins": True},
    "spec.enableEmptyWorkloadPropagation": {"enableEmptyWorkloadPropagation": True},
    "spec.decisionCPULimit": {"decisionCPULimit": "2s"},
    "spec.estimator.enabled": {"estimator": {"enabled": True}},
    "spec.estimator.timeout": {"estimator": {"timeout": "1s"}},
    "spec.estimator.service.namespace": {"estimator": {"service": {"namespace": "x"}}},
    "spec.estimator.service.prefix": {"estimator": {"service": {"prefix": "x"}}},
    "spec.estimator.service.port": {"estimator": {"service": {"port": 1}}},
    "spec.estimator.endpoints": {"estimator": {"endpoints": {"m1": "h:1"}}},
    "spec.estimator.tls.caFile": {"estimator": {"tls": {"caFile": "/ca"}}},
    "spec.estimator.tls.insecureSkipVerify": {"estimator": {"tls": {"insecureSkipVerify": True}}},
    "spec.estimator.partialFailure": {"estimator": {"partialFailure": "discard"}},
    "spec.estimator.disableInPullMode": {"estimator": {"disableInPullMode": True}},
    "spec.queue.initialBackoff": {"queue": {"initialBackoff": "2s"}},
    "spec.queue.maxBackoff": {"queue": {"maxBackoff": "20s"}},
    "spec.queue.unschedulableTimeout": {"queue": {"unschedulableTimeout": "1m"}},
    "spec.shutdown.drainTimeout": {"shutdown": {"drainTimeout": "1s"}},
    "spec.featureGates.MultiplePodTemplatesScheduling": {"featureGates": {"MultiplePodTemplatesScheduling": True}},
    "spec.featureGates.SchedulingOvercommitProtection": {"featureGates": {"SchedulingOvercommitProtection": True}},
    "spec.featureGates.WorkloadAffinity": {"featureGates": {"WorkloadAffinity": True}},
    "spec.featureGates.PriorityBasedScheduling": {"featureGates": {"PriorityBasedScheduling": True}},
    "spec.featureGates.PriorityBasedPreemptiveScheduling": {
        "featureGates": {"PriorityBasedPreemptiveScheduling": True}},
    "spec.preemption.maxVictims": {"preemption": {"maxVictims": 5}},
    "spec.preemption.maxPerMinute": {"preemption": {"maxPerMinute": 5}},
}


@pytest.mark.parametrize("path", sorted(RESTART))
def test_change_set_up_at_start_requires_restart(path: str) -> None:
    assert restart_required(DEFAULT_CONFIG, parse_config(doc(RESTART[path]))) == [path]


@pytest.mark.parametrize("path", sorted(LIVE))
def test_change_read_by_each_pass_applies_without_restart(path: str) -> None:
    new = parse_config(doc(LIVE[path]))
    assert (changed_fields(DEFAULT_CONFIG, new), restart_required(DEFAULT_CONFIG, new)) == ([path], [])


def test_every_field_is_classified_as_live_or_restart() -> None:
    assert sorted(config_field_paths()) == sorted(
        [*RESTART, *LIVE, "spec.estimator.tls.certFile", "spec.estimator.tls.keyFile"]
    )


def test_restart_fields_listed_in_spec_order() -> None:
    new = parse_config(doc({"kubeAPI": {"burst": 5}, "workers": 3, "schedulerName": "x",
                            "metrics": {"port": 1}}))
    assert restart_required(DEFAULT_CONFIG, new) == ["spec.schedulerName", "spec.metrics.port", "spec.kubeAPI.burst"]


def test_unchanged_config_needs_nothing() -> None:
    assert restart_required(DEFAULT_CONFIG, parse_config(doc({"workers": 1}))) == []


@pytest.mark.parametrize(
    ("error", "restart", "expected"),
    [
        (None, [], (True, "Valid", "applied")),
        (None, ["spec.metrics.port", "spec.kubeAPI.qps"],
         (True, "RestartRequired", "applied except spec.metrics.port, spec.kubeAPI.qps, which take effect at restart")),
        (None, ["spec.metrics.port"],
         (True, "RestartRequired", "applied except spec.metrics.port, which takes effect at restart")),
        (ValidationError("spec.workers", "0 is less than 1"), [],
         (False, "InvalidSpec", "spec.workers: 0 is less than 1; the last valid configuration stays in force")),
    ],
)
def test_valid_condition(
    error: ValidationError | None, restart: list[str], expected: tuple[bool, str, str]
) -> None:
    assert validity(error, restart) == expected
