"""SchedulerConfiguration: defaults, parsing, validation with exact paths, and the CRD, the example and the model
agreeing with each other (what a change needs, restart or not, is in test_config_changes.py)."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binding_scheduler.model import ValidationError
from binding_scheduler.model.config import (
    API_VERSION,
    DEFAULT_CONFIG,
    KIND,
    PARTIAL_FAILURE_MODES,
    EstimatorConfig,
    EstimatorServiceConfig,
    EstimatorTLSConfig,
    KubeAPIConfig,
    LeaderElectionConfig,
    MetricsConfig,
    QueueConfig,
    SchedulerConfig,
    ShutdownConfig,
    changed_fields,
    config_field_paths,
    overcommit_protected,
    parse_config,
)
from tests.model.test_fuzz import JSON, mutated

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "crds" / "config.binding-scheduler.io_schedulerconfigurations.yaml"
EXAMPLE = ROOT / "examples" / "scheduler-configuration.yaml"


def example_config() -> Any:
    """The example file's SchedulerConfiguration (its Namespace comes first, for `kubectl apply -f examples/`)."""
    (config,) = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d and d["kind"] == "SchedulerConfiguration"]
    return config
MAPS = {"spec.estimator.endpoints"}  # leaves whose value is an object of arbitrary keys


def doc(spec: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "c", "namespace": "ns"}}
    if spec is not None:
        body["spec"] = spec
    return body


def rejected(spec: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        parse_config(doc(spec))
    return str(caught.value)


def crd() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(CRD.read_text())
    return loaded


def crd_schema() -> dict[str, Any]:
    (version,) = crd()["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def schema_leaves(schema: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    if schema["type"] != "object" or "properties" not in schema:
        return {path: schema}
    found: dict[str, dict[str, Any]] = {}
    for key, child in schema["properties"].items():
        found.update(schema_leaves(child, f"{path}.{key}"))
    return found


def document_leaves(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict) or path in MAPS:
        return {path: value}
    found: dict[str, Any] = {}
    for key, child in value.items():
        found.update(document_leaves(child, f"{path}.{key}"))
    return found


def unflatten(leaves: dict[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path, value in leaves.items():
        *parents, last = path.split(".")[1:]
        node = root
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return root


# --- defaults -------------------------------------------------------------------------------------------------


def test_defaults_are_karmadas() -> None:
    assert SchedulerConfig(
        scheduler_name="default-scheduler",
        workers=1,
        plugins=("*",),
        enable_empty_workload_propagation=False,
        estimator=EstimatorConfig(
            enabled=False,
            timeout=3.0,
            service=EstimatorServiceConfig(namespace="karmada-system", prefix="karmada-scheduler-estimator",
                                           port=10352),
            endpoints={},
            tls=EstimatorTLSConfig(ca_file="", cert_file="", key_file="", insecure_skip_verify=False),
            partial_failure="fallback",
            disable_in_pull_mode=False,
        ),
        queue=QueueConfig(initial_backoff=1.0, max_backoff=10.0, unschedulable_timeout=300.0),
        shutdown=ShutdownConfig(drain_timeout=5.0),
        leader_election=LeaderElectionConfig(enabled=True, lease_name="karmada-scheduler",
                                             lease_namespace="karmada-system", lease_duration=15.0,
                                             renew_deadline=10.0, retry_period=2.0),
        metrics=MetricsConfig(port=8080, health_port=10351, host="", health_host=""),
        kube_api=KubeAPIConfig(qps=40.0, burst=60),
    ) == DEFAULT_CONFIG


@pytest.mark.parametrize("spec", [None, {}, {"estimator": {}, "queue": {}, "leaderElection": None}])
def test_missing_spec_or_section_takes_defaults(spec: Any) -> None:
    assert parse_config(doc(spec)) == DEFAULT_CONFIG


def test_metadata_and_status_are_not_read() -> None:
    body = doc({"workers": 2})
    body["status"] = {"conditions": [{"type": "Valid", "status": "False"}], "anything": 1}
    body["metadata"] = {"whatever": [1]}
    assert parse_config(body).workers == 2


def test_config_is_frozen_and_hashable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_CONFIG.workers = 2  # type: ignore[misc]
    assert hash(parse_config(doc({"estimator": {"endpoints": {"m1": "h:1"}}}))) != hash(DEFAULT_CONFIG)


# --- each field ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "attribute", "expected"),
    [
        ({"schedulerName": "mine"}, "scheduler_name", "mine"),
        ({"workers": 8}, "workers", 8),
        ({"workers": 8.0}, "workers", 8),
        ({"plugins": ["*", "-TaintToleration"]}, "plugins", ("*", "-TaintToleration")),
        ({"plugins": []}, "plugins", ()),
        ({"enableEmptyWorkloadPropagation": True}, "enable_empty_workload_propagation", True),
        ({"estimator": {"enabled": True}}, "estimator.enabled", True),
        ({"estimator": {"timeout": "500ms"}}, "estimator.timeout", 0.5),
        ({"estimator": {"timeout": "0"}}, "estimator.timeout", 0.0),
        ({"estimator": {"service": {"namespace": "est"}}}, "estimator.service.namespace", "est"),
        ({"estimator": {"service": {"prefix": "p"}}}, "estimator.service.prefix", "p"),
        ({"estimator": {"service": {"port": 0}}}, "estimator.service.port", 0),
        ({"estimator": {"service": {"port": 65535}}}, "estimator.service.port", 65535),
        ({"estimator": {"endpoints": {"m1": "10.0.0.1:10352", "m2": "[::1]:1"}}}, "estimator.endpoints",
         {"m1": "10.0.0.1:10352", "m2": "[::1]:1"}),
        ({"estimator": {"tls": {"caFile": "/ca"}}}, "estimator.tls.ca_file", "/ca"),
        ({"estimator": {"tls": {"certFile": "/c", "keyFile": "/k"}}}, "estimator.tls.cert_file", "/c"),
        ({"estimator": {"tls": {"certFile": "/c", "keyFile": "/k"}}}, "estimator.tls.key_file", "/k"),
        ({"estimator": {"tls": {"insecureSkipVerify": True}}}, "estimator.tls.insecure_skip_verify", True),
        ({"estimator": {"partialFailure": "discard"}}, "estimator.partial_failure", "discard"),
        ({"estimator": {"disableInPullMode": True}}, "estimator.disable_in_pull_mode", True),
        ({"queue": {"initialBackoff": "250ms"}}, "queue.initial_backoff", 0.25),
        ({"queue": {"maxBackoff": "1m"}}, "queue.max_backoff", 60.0),
        ({"queue": {"unschedulableTimeout": "1m30s"}}, "queue.unschedulable_timeout", 90.0),
        ({"queue": {"unschedulableTimeout": "0"}}, "queue.unschedulable_timeout", 0.0),
        ({"shutdown": {"drainTimeout": "30s"}}, "shutdown.drain_timeout", 30.0),
        ({"shutdown": {"drainTimeout": "0"}}, "shutdown.drain_timeout", 0.0),
        ({"leaderElection": {"enabled": False}}, "leader_election.enabled", False),
        ({"leaderElection": {"leaseName": "a.b-c"}}, "leader_election.lease_name", "a.b-c"),
        ({"leaderElection": {"leaseNamespace": "kube-system"}}, "leader_election.lease_namespace", "kube-system"),
        ({"leaderElection": {"leaseDuration": "1m"}}, "leader_election.lease_duration", 60.0),
        ({"leaderElection": {"renewDeadline": "5s"}}, "leader_election.renew_deadline", 5.0),
        ({"leaderElection": {"retryPeriod": "1s"}}, "leader_election.retry_period", 1.0),
        ({"metrics": {"port": 0}}, "metrics.port", 0),
        ({"metrics": {"healthPort": 8080}}, "metrics.health_port", 8080),
        ({"metrics": {"host": "127.0.0.1"}}, "metrics.host", "127.0.0.1"),
        ({"metrics": {"host": "::1"}}, "metrics.host", "::1"),
        ({"metrics": {"host": "metrics.example.com"}}, "metrics.host", "metrics.example.com"),
        ({"metrics": {"healthHost": "10.0.0.5"}}, "metrics.health_host", "10.0.0.5"),
        ({"metrics": {"healthHost": "localhost"}}, "metrics.health_host", "localhost"),
        ({"metrics": {"port": 9000, "healthPort": 9000, "host": "::1", "healthHost": "::1"}}, "metrics.health_host",
         "::1"),
        ({"kubeAPI": {"qps": 12.5}}, "kube_api.qps", 12.5),
        ({"kubeAPI": {"qps": 100}}, "kube_api.qps", 100.0),
        ({"kubeAPI": {"burst": 1}}, "kube_api.burst", 1),
    ],
)
def test_each_field_is_read(spec: dict[str, Any], attribute: str, expected: Any) -> None:
    value: Any = parse_config(doc(spec))
    for part in attribute.split("."):
        value = getattr(value, part)
    assert value == expected


def test_setting_one_field_changes_nothing_else() -> None:
    assert changed_fields(DEFAULT_CONFIG, parse_config(doc({"queue": {"maxBackoff": "20s"}}))) == [
        "spec.queue.maxBackoff"
    ]


# --- validation ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([], "spec: expected an object, got list"),
        ({"estimater": {}}, "spec.estimater: unknown field"),
        ({"estimator": {"tmeout": "3s"}}, "spec.estimator.tmeout: unknown field"),
        ({"estimator": {"service": {"ports": 1}}}, "spec.estimator.service.ports: unknown field"),
        ({"estimator": {"tls": {"ca": "/ca"}}}, "spec.estimator.tls.ca: unknown field"),
        ({"queue": {"backoff": "1s"}}, "spec.queue.backoff: unknown field"),
        ({"shutdown": {"timeout": "1s"}}, "spec.shutdown.timeout: unknown field"),
        ({"leaderElection": {"lease": "x"}}, "spec.leaderElection.lease: unknown field"),
        ({"metrics": {"bindAddress": ":8080"}}, "spec.metrics.bindAddress: unknown field"),
        ({"kubeApi": {}}, "spec.kubeApi: unknown field"),
        ({"kubeAPI": {"QPS": 1}}, "spec.kubeAPI.QPS: unknown field"),
        ({"schedulerName": ""}, "spec.schedulerName: must not be empty"),
        ({"schedulerName": 7}, "spec.schedulerName: expected a string, got 7"),
        ({"workers": 0}, "spec.workers: 0 is less than 1"),
        ({"workers": -3}, "spec.workers: -3 is less than 1"),
        ({"workers": 2**31}, "spec.workers: 2147483648 is greater than 2147483647"),
        ({"workers": "2"}, "spec.workers: expected an integer, got '2'"),
        ({"workers": 1.5}, "spec.workers: expected an integer, got 1.5"),
        ({"plugins": "*"}, "spec.plugins: expected a list, got '*'"),
        ({"plugins": ["*", 3]}, "spec.plugins[1]: expected a string, got 3"),
        ({"plugins": ["*", ""]}, "spec.plugins[1]: '' is not a plugin name"),
        ({"plugins": ["-"]}, "spec.plugins[0]: '-' is not a plugin name"),
        ({"enableEmptyWorkloadPropagation": "yes"},
         "spec.enableEmptyWorkloadPropagation: expected true or false, got 'yes'"),
        ({"estimator": []}, "spec.estimator: expected an object, got list"),
        ({"estimator": {"enabled": 1}}, "spec.estimator.enabled: expected true or false, got 1"),
        ({"estimator": {"timeout": "-1s"}},
         "spec.estimator.timeout: '-1s' is not a duration (examples: 3s, 500ms, 1m30s)"),
        ({"estimator": {"timeout": 3}}, "spec.estimator.timeout: expected a string, got 3"),
        ({"estimator": {"timeout": ""}}, "spec.estimator.timeout: empty duration"),
        ({"estimator": {"timeout": "9" * 400 + "h"}}, f"spec.estimator.timeout: {'9' * 400 + 'h'!r} is out of range"),
        ({"estimator": {"service": {"port": 65536}}}, "spec.estimator.service.port: 65536 is greater than 65535"),
        ({"estimator": {"service": {"port": -1}}}, "spec.estimator.service.port: -1 is less than 0"),
        ({"estimator": {"service": {"namespace": ""}}}, "spec.estimator.service.namespace: must not be empty"),
        ({"estimator": {"service": {"namespace": "Karmada"}}},
         "spec.estimator.service.namespace: 'Karmada' is not a valid namespace name (a DNS-1123 label)"),
        ({"estimator": {"service": {"prefix": ""}}}, "spec.estimator.service.prefix: must not be empty"),
        ({"estimator": {"endpoints": ["m1"]}}, "spec.estimator.endpoints: expected an object, got list"),
        ({"estimator": {"endpoints": {"m1": 10352}}}, "spec.estimator.endpoints.m1: expected a string, got 10352"),
        ({"estimator": {"endpoints": {"m1": "host"}}},
         "spec.estimator.endpoints.m1: 'host' is not host:port (a port from 1 to 65535)"),
        ({"estimator": {"endpoints": {"m1": ":10352"}}},
         "spec.estimator.endpoints.m1: ':10352' is not host:port (a port from 1 to 65535)"),
        ({"estimator": {"endpoints": {"m1": "host:"}}},
         "spec.estimator.endpoints.m1: 'host:' is not host:port (a port from 1 to 65535)"),
        ({"estimator": {"endpoints": {"m1": "host:0"}}},
         "spec.estimator.endpoints.m1: 'host:0' is not host:port (a port from 1 to 65535)"),
        ({"estimator": {"endpoints": {"m1": "host:65536"}}},
         "spec.estimator.endpoints.m1: 'host:65536' is not host:port (a port from 1 to 65535)"),
        ({"estimator": {"endpoints": {"m1": "::1:10352"}}},
         "spec.estimator.endpoints.m1: '::1:10352' is not host:port (a port from 1 to 65535)"),
        ({"estimator": {"endpoints": {"m1": "http://h:1"}}},
         "spec.estimator.endpoints.m1: 'http://h:1' is not host:port (a port from 1 to 65535)"),
        ({"estimator": {"endpoints": {"": "h:1"}}}, "spec.estimator.endpoints: a cluster name must not be empty"),
        ({"estimator": {"tls": {"certFile": "/c"}}}, "spec.estimator.tls.keyFile: is required when certFile is set"),
        ({"estimator": {"tls": {"keyFile": "/k"}}}, "spec.estimator.tls.certFile: is required when keyFile is set"),
        ({"estimator": {"tls": {"insecureSkipVerify": "true"}}},
         "spec.estimator.tls.insecureSkipVerify: expected true or false, got 'true'"),
        ({"estimator": {"partialFailure": "Fallback"}},
         "spec.estimator.partialFailure: 'Fallback' is not one of fallback, discard"),
        ({"estimator": {"partialFailure": ""}}, "spec.estimator.partialFailure: '' is not one of fallback, discard"),
        ({"queue": {"initialBackoff": "0"}}, "spec.queue.initialBackoff: '0' must be greater than 0"),
        ({"queue": {"initialBackoff": "11s"}}, "spec.queue.initialBackoff: '11s' is greater than maxBackoff (10s)"),
        ({"queue": {"initialBackoff": "2s", "maxBackoff": "1s"}},
         "spec.queue.initialBackoff: '2s' is greater than maxBackoff ('1s')"),
        ({"queue": {"maxBackoff": "500ms"}}, "spec.queue.initialBackoff: 1s is greater than maxBackoff ('500ms')"),
        ({"queue": {"unschedulableTimeout": "5 m"}},
         "spec.queue.unschedulableTimeout: '5 m' is not a duration (examples: 3s, 500ms, 1m30s)"),
        ({"shutdown": {"drainTimeout": "5"}},
         "spec.shutdown.drainTimeout: '5' is not a duration (examples: 3s, 500ms, 1m30s)"),
        ({"leaderElection": {"enabled": "false"}},
         "spec.leaderElection.enabled: expected true or false, got 'false'"),
        ({"leaderElection": {"leaseName": ""}}, "spec.leaderElection.leaseName: must not be empty"),
        ({"leaderElection": {"leaseName": "my_lease"}},
         "spec.leaderElection.leaseName: 'my_lease' is not a valid Lease name (a DNS-1123 subdomain)"),
        ({"leaderElection": {"leaseNamespace": "a.b"}},
         "spec.leaderElection.leaseNamespace: 'a.b' is not a valid namespace name (a DNS-1123 label)"),
        ({"leaderElection": {"leaseDuration": "0"}}, "spec.leaderElection.leaseDuration: '0' must be greater than 0"),
        ({"leaderElection": {"renewDeadline": "0"}}, "spec.leaderElection.renewDeadline: '0' must be greater than 0"),
        ({"leaderElection": {"retryPeriod": "0"}}, "spec.leaderElection.retryPeriod: '0' must be greater than 0"),
        ({"leaderElection": {"renewDeadline": "15s"}},
         "spec.leaderElection.renewDeadline: '15s' must be less than leaseDuration (15s)"),
        ({"leaderElection": {"leaseDuration": "10s"}},
         "spec.leaderElection.renewDeadline: 10s must be less than leaseDuration ('10s')"),
        ({"leaderElection": {"retryPeriod": "10s"}},
         "spec.leaderElection.retryPeriod: '10s' is too long: renewDeadline (10s) must be greater than "
         "1.2 x retryPeriod"),
        ({"leaderElection": {"renewDeadline": "12s", "retryPeriod": "10s"}},
         "spec.leaderElection.retryPeriod: '10s' is too long: renewDeadline ('12s') must be greater than "
         "1.2 x retryPeriod"),
        ({"metrics": {"port": 70000}}, "spec.metrics.port: 70000 is greater than 65535"),
        ({"metrics": {"healthPort": -1}}, "spec.metrics.healthPort: -1 is less than 0"),
        ({"metrics": {"host": "[::1]"}}, "spec.metrics.host: '[::1]' is not an IP address or a hostname"),
        ({"metrics": {"host": "0.0.0.0:8080"}},
         "spec.metrics.host: '0.0.0.0:8080' is not an IP address or a hostname"),
        ({"metrics": {"healthHost": "-bad"}}, "spec.metrics.healthHost: '-bad' is not an IP address or a hostname"),
        ({"metrics": {"healthHost": 1}}, "spec.metrics.healthHost: expected a string, got 1"),
        ({"metrics": {"port": 9000, "healthPort": 9000, "host": "127.0.0.1"}},
         "spec.metrics.healthHost: '' differs from host ('127.0.0.1') while healthPort equals port (9000): one "
         "server serves both, on one address"),
        ({"kubeAPI": {"qps": 0}}, "spec.kubeAPI.qps: 0 is not a number greater than 0 and at most 1000000"),
        ({"kubeAPI": {"qps": float("nan")}},
         "spec.kubeAPI.qps: nan is not a number greater than 0 and at most 1000000"),
        ({"kubeAPI": {"qps": 2**80}},
         "spec.kubeAPI.qps: an integer out of range is not a number greater than 0 and at most 1000000"),
        ({"kubeAPI": {"qps": "40"}}, "spec.kubeAPI.qps: expected a number, got '40'"),
        ({"kubeAPI": {"qps": True}}, "spec.kubeAPI.qps: expected a number, got true"),
        ({"kubeAPI": {"burst": 0}}, "spec.kubeAPI.burst: 0 is less than 1"),
    ],
)
def test_invalid_values_name_field_and_value(spec: Any, message: str) -> None:
    assert rejected(spec) == message


def test_error_carries_path_separately() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_config(doc({"estimator": {"service": {"port": 65536}}}))
    assert (caught.value.path, caught.value.problem) == ("spec.estimator.service.port", "65536 is greater than 65535")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "<root>: expected an object, got list"),
        ({"kind": KIND, "spec": {}}, "apiVersion: is required"),
        ({"apiVersion": API_VERSION, "spec": {}}, "kind: is required"),
        ({"apiVersion": "config.binding-scheduler.io/v1", "kind": KIND},
         "apiVersion: 'config.binding-scheduler.io/v1' is not config.binding-scheduler.io/v1alpha1"),
        ({"apiVersion": API_VERSION, "kind": "Cluster"}, "kind: 'Cluster' is not SchedulerConfiguration"),
    ],
)
def test_object_must_be_scheduler_configuration(body: Any, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_config(body)
    assert str(caught.value) == message


# --- the CRD, the example and the model agree ------------------------------------------------------------------


def test_crd_schema_has_exactly_model_fields() -> None:
    leaves = schema_leaves(crd_schema()["properties"]["spec"], "spec")
    assert sorted(leaves) == sorted(config_field_paths())


def test_crd_defaults_are_model_defaults() -> None:
    leaves = schema_leaves(crd_schema()["properties"]["spec"], "spec")
    defaults = {path: leaf["default"] for path, leaf in leaves.items() if "default" in leaf}
    assert set(leaves) - set(defaults) == {"spec.estimator.endpoints", "spec.estimator.tls.caFile",
                                           "spec.estimator.tls.certFile", "spec.estimator.tls.keyFile",
                                           "spec.featureGates.SchedulingOvercommitProtection"}
    assert parse_config(doc(unflatten(defaults))) == DEFAULT_CONFIG


def test_crd_partial_failure_enum_is_models() -> None:
    leaves = schema_leaves(crd_schema()["properties"]["spec"], "spec")
    assert tuple(leaves["spec.estimator.partialFailure"]["enum"]) == PARTIAL_FAILURE_MODES


def test_crd_names_scope_and_columns() -> None:
    spec = crd()["spec"]
    (version,) = spec["versions"]
    assert (spec["group"], version["name"], spec["scope"], spec["names"]["kind"], spec["names"]["shortNames"]) == (
        "config.binding-scheduler.io", "v1alpha1", "Namespaced", KIND, ["schedconf"])
    assert f"{spec['group']}/{version['name']}" == API_VERSION
    assert (version["served"], version["storage"], version["subresources"]) == (True, True, {"status": {}})
    assert [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]] == [
        ("SchedulerName", ".spec.schedulerName"),
        ("Valid", '.status.conditions[?(@.type=="Valid")].status'),
        ("Age", ".metadata.creationTimestamp"),
    ]


def test_crd_status_holds_conditions_and_observed_generation() -> None:
    status = crd_schema()["properties"]["status"]["properties"]
    assert sorted(status) == ["conditions", "observedGeneration"]
    assert sorted(status["conditions"]["items"]["properties"]) == [
        "lastTransitionTime", "message", "observedGeneration", "reason", "status", "type"]


def untyped(schema: dict[str, Any], where: str) -> list[str]:
    problems = [] if "type" in schema else [where]
    for key, child in (schema.get("properties") or {}).items():
        problems += untyped(child, f"{where}.{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            problems += untyped(schema[key], f"{where}[{key}]")
    return problems


def test_crd_schema_is_structural() -> None:
    assert untyped(crd_schema(), "") == []


def test_example_has_every_field() -> None:
    """All but the one whose default is to be unset (the example shows it in a comment)."""
    example = example_config()
    unset = "spec.featureGates.SchedulingOvercommitProtection"
    assert f"# {unset.rsplit('.', 1)[1]}: true" in EXAMPLE.read_text()
    assert sorted(document_leaves(example["spec"], "spec")) == sorted(set(config_field_paths()) - {unset})


def test_example_is_valid_and_shows_defaults_except_endpoints() -> None:
    parsed = parse_config(example_config())
    assert changed_fields(DEFAULT_CONFIG, parsed) == ["spec.estimator.endpoints"]


# --- fuzz --------------------------------------------------------------------------------------------------------


FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALID = example_config()
SECTIONS = st.sampled_from([p.split(".")[1] for p in config_field_paths()] + ["other"])


def parses_or_rejects(data: Any) -> None:
    with contextlib.suppress(ValidationError):
        parse_config(data)


@FUZZ
@given(JSON)
def test_arbitrary_json_as_spec(spec: Any) -> None:
    parses_or_rejects(doc(spec))


@FUZZ
@given(st.dictionaries(SECTIONS, JSON, max_size=4))
def test_arbitrary_sections(spec: dict[str, Any]) -> None:
    parses_or_rejects(doc(spec))


@FUZZ
@given(mutated(VALID))
def test_mutated_example(data: Any) -> None:
    parses_or_rejects(copy.deepcopy(data))


def test_feature_gates_default_off_and_parse() -> None:
    assert DEFAULT_CONFIG.feature_gates.multiple_pod_templates_scheduling is False
    config = parse_config(doc({"featureGates": {"MultiplePodTemplatesScheduling": True}}))
    assert config.feature_gates.multiple_pod_templates_scheduling is True


def test_unknown_feature_gate_is_error() -> None:
    with pytest.raises(ValidationError, match=r"^spec\.featureGates\.ResourceQuotaEstimate: unknown field$"):
        parse_config(doc({"featureGates": {"ResourceQuotaEstimate": True}}))


def test_preemption_is_on_only_with_both_of_its_gates() -> None:
    def gates(**on: bool) -> bool:
        return parse_config(doc({"featureGates": on})).feature_gates.preemption

    assert (gates(), gates(PriorityBasedScheduling=True), gates(PriorityBasedPreemptiveScheduling=True)) == (
        False, False, False)
    assert gates(PriorityBasedScheduling=True, PriorityBasedPreemptiveScheduling=True) is True


def test_preemption_victims_are_bounded_by_at_least_one() -> None:
    assert DEFAULT_CONFIG.preemption.max_victims == 100
    assert parse_config(doc({"preemption": {"maxVictims": 3}})).preemption.max_victims == 3
    with pytest.raises(ValidationError, match=r"^spec\.preemption\.maxVictims: 0 is less than 1$"):
        parse_config(doc({"preemption": {"maxVictims": 0}}))


@pytest.mark.parametrize(("workers", "gate", "protected"), [
    (1, None, False), (2, None, True), (16, None, True), (1, True, True), (8, False, False),
])
def test_overcommit_protection_follows_gate_or_else_workers(
    workers: int, gate: bool | None, protected: bool
) -> None:
    gates = {} if gate is None else {"featureGates": {"SchedulingOvercommitProtection": gate}}
    config = parse_config(doc({"workers": workers, **gates}))
    assert (config.feature_gates.scheduling_overcommit_protection, overcommit_protected(config)) == (gate, protected)
