"""A SchedulerConfiguration with several wrong fields: every one is found in one reading, each with its own path
(one wrong field keeps raising one plain ValidationError, as before)."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.model import ValidationError, ValidationErrors
from binding_scheduler.model.config import API_VERSION, DEFAULT_CONFIG, KIND, parse_config, read_config, validity
from binding_scheduler.model.overrides import SpecOverrides


def doc(spec: Any = None, **root: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "c"}, **root}
    if spec is not None:
        body["spec"] = spec
    return body


def errors_of(body: Any) -> list[str]:
    return [str(error) for error in read_config(body)[1]]


THREE_WRONG = {"workers": 0, "estimater": {}, "queue": {"maxBackoff": "soon"}}


def test_every_wrong_field_is_found_in_one_reading() -> None:
    assert errors_of(doc(THREE_WRONG)) == [
        "spec.estimater: unknown field",
        "spec.workers: 0 is less than 1",
        "spec.queue.maxBackoff: 'soon' is not a duration (examples: 3s, 500ms, 1m30s)",
    ]


def test_parse_config_raises_all_together() -> None:
    with pytest.raises(ValidationErrors) as caught:
        parse_config(doc(THREE_WRONG))
    error = caught.value
    assert (error.path, error.problem, [one.path for one in error.errors]) == (
        "spec.estimater", "unknown field", ["spec.estimater", "spec.workers", "spec.queue.maxBackoff"])


def test_several_errors_read_as_one_line_joined_by_semicolons() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_config(doc({"workers": 0, "decisionProcesses": 65}))
    assert str(caught.value) == "spec.workers: 0 is less than 1; spec.decisionProcesses: 65 is greater than 64"


def test_one_wrong_field_raises_plain_validation_error() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_config(doc({"workers": 0}))
    assert (type(caught.value), caught.value.errors) == (ValidationError, (caught.value,))


def test_valid_object_reads_with_no_error() -> None:
    assert read_config(doc({"workers": 4})) == (parse_config(doc({"workers": 4})), [])


def test_unknown_fields_and_bad_values_reported() -> None:
    spec = {"estimator": {"tmeout": "3s", "enabled": "yes", "service": {"port": -1, "prt": 1}}}
    assert errors_of(doc(spec)) == [
        "spec.estimator.tmeout: unknown field",
        "spec.estimator.enabled: expected true or false, got 'yes'",
        "spec.estimator.service.prt: unknown field",
        "spec.estimator.service.port: -1 is less than 0",
    ]


def test_non_object_section_is_one_error() -> None:
    assert errors_of(doc({"metrics": 3, "kubeAPI": {"burst": 0}})) == [
        "spec.metrics: expected an object, got 3", "spec.kubeAPI.burst: 0 is less than 1"]


def test_rule_between_fields_is_not_checked_against_wrong_one() -> None:
    assert errors_of(doc({"queue": {"initialBackoff": "x", "maxBackoff": "500ms"}})) == [
        "spec.queue.initialBackoff: 'x' is not a duration (examples: 3s, 500ms, 1m30s)"]


def test_both_broken_election_rules_reported() -> None:
    assert errors_of(doc({"leaderElection": {"leaseDuration": "1s", "retryPeriod": "9s"}})) == [
        "spec.leaderElection.renewDeadline: 10s must be less than leaseDuration ('1s')",
        "spec.leaderElection.retryPeriod: '9s' is too long: renewDeadline (10s) must be greater than 1.2 x "
        "retryPeriod",
    ]


def test_each_wrong_plugin_entry_is_reported() -> None:
    assert errors_of(doc({"plugins": [3, "*", "", "-"]})) == [
        "spec.plugins[0]: expected a string, got 3",
        "spec.plugins[2]: '' is not a plugin name",
        "spec.plugins[3]: '-' is not a plugin name",
    ]


def test_each_wrong_estimator_endpoint_is_reported() -> None:
    assert errors_of(doc({"estimator": {"endpoints": {"m1": "h", "m2": 7, "m3": "h:1", "": "h:2"}}})) == [
        "spec.estimator.endpoints.m1: 'h' is not host:port (a port from 1 to 65535)",
        "spec.estimator.endpoints.m2: expected a string, got 7",
        "spec.estimator.endpoints: a cluster name must not be empty",
    ]


def test_every_unknown_and_mistyped_feature_gate_is_reported() -> None:
    assert errors_of(doc({"featureGates": {"Failover": True, "WorkloadAffinity": "on", "Nope": False}})) == [
        "spec.featureGates.Failover: unknown field",
        "spec.featureGates.Nope: unknown field",
        "spec.featureGates.WorkloadAffinity: expected true or false, got 'on'",
    ]


def test_another_kind_is_not_read_past_api_version_and_kind() -> None:
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 3}}
    assert errors_of(body) == [f"apiVersion: 'apps/v1' is not {API_VERSION}",
                               f"kind: 'Deployment' is not {KIND}"]


def test_without_api_version_and_kind_spec_is_still_read() -> None:
    assert errors_of({"spec": {"workers": 0}}) == [
        "apiVersion: is required", "kind: is required", "spec.workers: 0 is less than 1"]


def test_object_that_is_no_object_is_one_error() -> None:
    config, errors = read_config("text")
    assert (config, [str(error) for error in errors]) == (DEFAULT_CONFIG, ["<root>: expected an object, got 'text'"])


def test_override_names_each_of_its_errors_after_flag() -> None:
    overrides = SpecOverrides().set("workers", 0, "--workers").set("kubeAPI.burst", 0, "--kube-api-burst")
    with pytest.raises(ValidationError) as caught:
        overrides.parse(doc({"estimater": {}}))
    assert str(caught.value) == ("spec.estimater: unknown field; --workers: 0 is less than 1; "
                                 "--kube-api-burst: 0 is less than 1")


def test_valid_condition_message_carries_every_error() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_config(doc({"workers": 0, "estimater": {}}))
    assert validity(caught.value) == (
        False, "InvalidSpec",
        "spec.estimater: unknown field; spec.workers: 0 is less than 1; the last valid configuration stays in force")


def test_validation_errors_need_two_errors_or_more() -> None:
    with pytest.raises(ValueError, match="two errors or more"):
        ValidationErrors([ValidationError("spec.workers", "0 is less than 1")])
