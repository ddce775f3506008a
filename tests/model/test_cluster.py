"""Cluster parsing (Karmada's pkg/apis/cluster/v1alpha1/types.go: Cluster): the fields the scheduler reads, and exact
errors."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from binding_scheduler.model import Taint, ValidationError, parse_cluster
from testsupport.builders import cluster, make_cluster, taint


def error_of(data: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        parse_cluster(data)
    return str(caught.value)


def test_name_labels_and_topology_are_read() -> None:
    c = make_cluster("m1", labels={"env": "prod"}, provider="aws", region="eu", zones=["eu-1", "eu-2"])
    assert (c.name, dict(c.labels), c.provider, c.region, c.zones) == (
        "m1", {"env": "prod"}, "aws", "eu", ("eu-1", "eu-2"),
    )


def test_pseudo_labels_hold_only_non_empty_provider_and_region() -> None:
    assert dict(make_cluster("m1", provider="aws", region="eu").pseudo_labels) == {"provider": "aws", "region": "eu"}
    assert dict(make_cluster("m1", region="eu").pseudo_labels) == {"region": "eu"}
    assert dict(make_cluster("m1").pseudo_labels) == {}


def test_deletion_timestamp_means_deleting() -> None:
    assert make_cluster("m1", deleting=True).deleting
    assert not make_cluster("m1").deleting


def test_sync_mode_defaults_to_push() -> None:
    data = cluster("m1")
    del data["spec"]["syncMode"]
    assert parse_cluster(data).sync_mode == "Push"
    assert make_cluster("m1", sync_mode="Pull").sync_mode == "Pull"


def test_cluster_without_spec_or_status_is_fine() -> None:
    c = parse_cluster({"metadata": {"name": "m1"}})
    assert (c.name, c.taints, c.api_enablements, c.resource_summary) == ("m1", (), (), None)


def test_taints_keep_their_order() -> None:
    c = make_cluster("m1", taints=[taint("b", "NoExecute", "x"), taint("a")])
    assert c.taints == (Taint("b", "NoExecute", "x"), Taint("a", "NoSchedule"))


def test_api_enabled_needs_group_version_and_kind() -> None:
    c = make_cluster("m1", apis=[("apps/v1", "Deployment"), ("v1", "Pod")])
    assert c.api_enabled("apps/v1", "Deployment")
    assert c.api_enabled("v1", "Pod")
    assert not c.api_enabled("apps/v1", "StatefulSet")
    assert not c.api_enabled("apps/v1beta1", "Deployment")


def test_complete_api_enablements_comes_from_condition() -> None:
    data = cluster("m1")
    data["status"]["conditions"] = [{"type": "CompleteAPIEnablements", "status": "True"}]
    assert parse_cluster(data).complete_api_enablements
    assert not make_cluster("m1").complete_api_enablements


def test_resource_summary_is_read_as_quantities() -> None:
    data = cluster("m1", allocatable={"cpu": "4", "memory": "8Gi"})
    data["status"]["resourceSummary"]["allocated"] = {"cpu": "500m"}
    data["status"]["resourceSummary"]["allocatableModelings"] = [{"grade": 0, "count": 2}]
    summary = parse_cluster(data).resource_summary
    assert summary is not None
    assert summary.allocatable["memory"].value() == 8 * 2**30
    assert summary.allocated["cpu"].amount == Fraction(1, 2)
    assert summary.allocatable_modelings == ((0, 2),)


def test_resource_models_are_read() -> None:
    data = cluster("m1")
    data["spec"]["resourceModels"] = [{"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "2"}]}]
    (model,) = parse_cluster(data).resource_models
    assert model.grade == 1
    assert [(r.name, r.min.value(), r.max.value()) for r in model.ranges] == [("cpu", 1, 2)]


# --- errors ------------------------------------------------------------------------------------------------


def test_kind_must_be_cluster() -> None:
    data = cluster("m1")
    data["kind"] = "Node"
    assert error_of(data) == "kind: 'Node' is not Cluster"


def test_name_is_required() -> None:
    assert error_of({"metadata": {}}) == "metadata.name: is required"


def test_sync_mode_is_enum() -> None:
    assert error_of(cluster("m1", sync_mode="Poll")) == "spec.syncMode: 'Poll' is not one of Push, Pull"


def test_taint_effect_is_enum() -> None:
    assert error_of(cluster("m1", taints=[taint("a", "NoRun")])) == (
        "spec.taints[0].effect: 'NoRun' is not one of NoSchedule, PreferNoSchedule, NoExecute"
    )


def test_taint_needs_effect() -> None:
    assert error_of(cluster("m1", taints=[{"key": "a"}])) == "spec.taints[0].effect: is required"


def test_taint_needs_key() -> None:
    assert error_of(cluster("m1", taints=[{"effect": "NoSchedule"}])) == "spec.taints[0].key: is required"


def test_zones_must_be_list() -> None:
    data = cluster("m1")
    data["spec"]["zones"] = "eu-1"
    assert error_of(data) == "spec.zones: expected a list, got 'eu-1'"


def test_resource_model_range_needs_min_and_max() -> None:
    data = cluster("m1")
    data["spec"]["resourceModels"] = [{"grade": 0, "ranges": [{"name": "cpu", "min": "1"}]}]
    assert error_of(data) == "spec.resourceModels[0].ranges[0].max: is required"


def test_bad_quantity_names_resource() -> None:
    assert error_of(cluster("m1", allocatable={"cpu": "lots"})) == (
        "status.resourceSummary.allocatable.cpu: 'lots' is not a valid quantity"
    )


def test_deletion_timestamp_must_be_time() -> None:
    data = cluster("m1")
    data["metadata"]["deletionTimestamp"] = "2024-13-01T00:00:00Z"
    assert error_of(data) == "metadata.deletionTimestamp: '2024-13-01T00:00:00Z' is not an RFC 3339 time"
