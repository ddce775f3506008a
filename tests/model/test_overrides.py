"""SpecOverrides: a partial spec merged onto a SchedulerConfiguration's spec, errors named after who set the
field."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.model import ValidationError
from binding_scheduler.model.config import API_VERSION, DEFAULT_CONFIG, KIND
from binding_scheduler.model.overrides import NO_OVERRIDES, SpecOverrides, deep_merge


def doc(spec: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "c"}}
    if spec is not None:
        body["spec"] = spec
    return body


def test_no_overrides_is_object() -> None:
    body = doc({"workers": 3})
    assert NO_OVERRIDES.merged(body) is body
    assert NO_OVERRIDES.parse(body).workers == 3


def test_no_object_is_defaults() -> None:
    assert NO_OVERRIDES.parse() == DEFAULT_CONFIG


def test_set_builds_nested_sections_and_records_source() -> None:
    overrides = SpecOverrides().set("kubeAPI.qps", 100, "--kube-api-qps").set("schedulerName", "x", "--scheduler-name")
    assert (overrides.spec, overrides.paths) == (
        {"kubeAPI": {"qps": 100}, "schedulerName": "x"}, ["spec.kubeAPI.qps", "spec.schedulerName"])


def test_set_leaves_original_unchanged() -> None:
    first = SpecOverrides().set("kubeAPI.qps", 100, "--kube-api-qps")
    first.set("kubeAPI.burst", 5, "--kube-api-burst")
    assert first.spec == {"kubeAPI": {"qps": 100}}


def test_override_wins_and_fields_it_does_not_set_are_objects() -> None:
    overrides = SpecOverrides().set("leaderElection.leaseName", "flag", "--leader-elect-resource-name")
    config = overrides.parse(doc({"leaderElection": {"leaseName": "object", "leaseDuration": "30s"}, "workers": 2}))
    assert (config.leader_election.lease_name, config.leader_election.lease_duration, config.workers) == (
        "flag", 30.0, 2)


def test_merging_does_not_change_object() -> None:
    body = doc({"kubeAPI": {"qps": 5}})
    SpecOverrides().set("kubeAPI.qps", 100, "--kube-api-qps").merged(body)
    assert body["spec"] == {"kubeAPI": {"qps": 5}}


def test_error_at_overridden_field_names_source() -> None:
    with pytest.raises(ValidationError) as caught:
        SpecOverrides().set("kubeAPI.qps", 0, "--kube-api-qps").parse()
    assert str(caught.value) == "--kube-api-qps: 0 is not a number greater than 0 and at most 1000000"


def test_error_inside_overridden_list_names_source() -> None:
    with pytest.raises(ValidationError) as caught:
        SpecOverrides().set("plugins", ["*", "-"], "--plugins").parse()
    assert str(caught.value) == "--plugins: '-' is not a plugin name"


def test_error_at_field_of_object_keeps_path() -> None:
    overrides = SpecOverrides().set("leaderElection.renewDeadline", "5s", "--leader-elect-renew-deadline")
    with pytest.raises(ValidationError) as caught:
        overrides.parse(doc({"leaderElection": {"retryPeriod": "5s"}}))
    assert caught.value.path == "spec.leaderElection.retryPeriod"


def test_cross_field_error_at_overridden_field_names_source() -> None:
    overrides = SpecOverrides().set("leaderElection.renewDeadline", "20s", "--leader-elect-renew-deadline")
    with pytest.raises(ValidationError) as caught:
        overrides.parse(doc({"leaderElection": {"leaseDuration": "10s"}}))
    assert str(caught.value) == "--leader-elect-renew-deadline: '20s' must be less than leaseDuration ('10s')"


def test_object_section_that_is_not_mapping_keeps_own_error() -> None:
    with pytest.raises(ValidationError) as caught:
        SpecOverrides().set("kubeAPI.qps", 100, "--kube-api-qps").parse(doc({"kubeAPI": 5}))
    assert caught.value.path == "spec.kubeAPI"


def test_deep_merge_replaces_lists_and_merges_mappings() -> None:
    base = {"plugins": ["a"], "featureGates": {"A": True}, "workers": 1}
    assert deep_merge(base, {"plugins": ["b"], "featureGates": {"B": False}}) == {
        "plugins": ["b"], "featureGates": {"A": True, "B": False}, "workers": 1}
