"""The Helm chart, rendered by a real helm: what it deploys by default, what values change, what it refuses."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import yaml

from binding_scheduler.model.config import parse_config
from testsupport.chart.helm import CHART, HelmError, find, lint, one, render
from testsupport.realcluster.controlplane import RBAC_RULES, ROOT

pytestmark = pytest.mark.usefixtures("helm")

IN_CLUSTER = {"karmadaAPI.mode": "inCluster"}


def container(documents: list[dict[str, Any]]) -> dict[str, Any]:
    containers = one(documents, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def pod(documents: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(one(documents, "Deployment")["spec"]["template"]["spec"])


def expected_rules(*when: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rules file's rules granted under `when` (plus `always`): (cluster-wide, namespaced)."""
    rules = [r for r in yaml.safe_load(RBAC_RULES.read_text())["rules"] if r["when"] in ("always", *when)]

    def bare(rule: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in rule.items() if k not in ("scope", "when")}

    return [bare(r) for r in rules if r["scope"] == "cluster"], [bare(r) for r in rules if r["scope"] != "cluster"]


def refusal(values: dict[str, Any]) -> str:
    with pytest.raises(HelmError) as error:
        render(values)
    return str(error.value)


# --- lint ----------------------------------------------------------------------------------------------------


def test_helm_lint_passes_strict_on_defaults() -> None:
    assert "1 chart(s) linted, 0 chart(s) failed" in lint()


def test_helm_lint_strict_passes_every_option() -> None:
    values = {
        **IN_CLUSTER, "replicas": 3, "config.estimator.enabled": True, "metrics.serviceMonitor.enabled": True,
        "networkPolicy.enabled": True, "podAntiAffinity": "hard",
    }
    assert "1 chart(s) linted, 0 chart(s) failed" in lint(values)


# --- the Deployment ------------------------------------------------------------------------------------------


def test_two_replicas_roll_one_pod_at_time_by_default() -> None:
    deployment = one(render(), "Deployment")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }


def test_grace_period_is_drain_timeout_plus_margin() -> None:
    assert pod(render())["terminationGracePeriodSeconds"] == 5 + 10
    assert pod(render({"config.shutdown.drainTimeout": "1m30s"}))["terminationGracePeriodSeconds"] == 90 + 10
    assert pod(render({"config.shutdown.drainTimeout": "2500ms",
                       "terminationGracePeriodMarginSeconds": 6}))["terminationGracePeriodSeconds"] == 3 + 6


def test_margin_shorter_than_stops_tail_and_exit_is_refused() -> None:
    assert "terminationGracePeriodMarginSeconds" in refusal({"terminationGracePeriodMarginSeconds": 5})


def test_sufficient_grace_period_is_kept() -> None:
    assert pod(render({"terminationGracePeriodSeconds": 11}))["terminationGracePeriodSeconds"] == 11


def test_probes_use_healthz_and_readyz() -> None:
    main = container(render({"config.metrics.healthPort": 10400}))
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 10400}
    assert main["startupProbe"]["httpGet"] == {"path": "/healthz", "port": 10400}
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 10400}


def test_container_runs_unprivileged_on_read_only_root() -> None:
    documents = render()
    assert container(documents)["securityContext"] == {
        "allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    security = pod(documents)["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}


def test_replicas_prefer_distinct_nodes_and_spread_over_zones() -> None:
    spec = pod(render())
    term = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert spec["topologySpreadConstraints"][0]["topologyKey"] == "topology.kubernetes.io/zone"
    assert spec["topologySpreadConstraints"][0]["whenUnsatisfiable"] == "ScheduleAnyway"


def test_hard_anti_affinity_requires_distinct_nodes() -> None:
    spec = pod(render({"podAntiAffinity": "hard"}))
    assert "requiredDuringSchedulingIgnoredDuringExecution" in spec["affinity"]["podAntiAffinity"]


def test_disruption_budget_keeps_all_but_one_pod() -> None:
    budget = one(render(), "PodDisruptionBudget")
    assert budget["spec"]["maxUnavailable"] == 1


# --- the two topologies --------------------------------------------------------------------------------------


def test_by_default_reads_apiserver_through_karmadas_secret() -> None:
    documents = render()
    main, spec = container(documents), pod(documents)
    assert "--kubeconfig=/etc/karmada/config/karmada.config" in main["args"]
    assert {"name": "karmada-config", "secret": {
        "secretName": "karmada-scheduler-config", "items": [{"key": "karmada.config", "path": "karmada.config"}],
    }} in spec["volumes"]
    assert spec["automountServiceAccountToken"] is False
    assert "--config-file=/etc/binding-scheduler/scheduler-configuration.yaml" in main["args"]
    assert find(documents, "SchedulerConfiguration") == []


def test_in_cluster_uses_token_and_config() -> None:
    documents = render(IN_CLUSTER)
    main, spec = container(documents), pod(documents)
    assert spec["automountServiceAccountToken"] is True
    assert not any(arg.startswith("--kubeconfig") for arg in main["args"])
    assert "--config=bs-binding-scheduler" in main["args"]
    assert one(documents, "SchedulerConfiguration")["metadata"]["name"] == "bs-binding-scheduler"
    assert find(documents, "ConfigMap") == []


def test_config_object_refused_on_another_api_server() -> None:
    assert "configuration.source=object needs karmadaAPI.mode=inCluster" in refusal({"configuration.source": "object"})


# --- the configuration ---------------------------------------------------------------------------------------


def test_config_values_become_configuration_scheduler_parses() -> None:
    documents = render({"config": {"workers": 4, "schedulerName": "fast", "shutdown": {"drainTimeout": "20s"}}},
                       namespace="sched")
    document = yaml.safe_load(one(documents, "ConfigMap")["data"]["scheduler-configuration.yaml"])
    config = parse_config(document)
    assert (config.workers, config.scheduler_name, config.shutdown.drain_timeout) == (4, "fast", 20.0)
    assert config.leader_election.lease_namespace == "karmada-system"
    assert config.estimator.service.namespace == "karmada-system"


def test_changed_configuration_file_rolls_pods() -> None:
    annotations = [pod_annotations(render({"config.workers": n})) for n in (1, 2)]
    assert annotations[0]["checksum/configuration"] != annotations[1]["checksum/configuration"]


def pod_annotations(documents: list[dict[str, Any]]) -> dict[str, str]:
    return dict(one(documents, "Deployment")["spec"]["template"]["metadata"]["annotations"])


def test_extra_args_pass_karmada_flags_after_charts_own() -> None:
    main = container(render({"extraArgs": ["--kube-api-qps=100", "--v=4"]}))
    assert main["args"][-2:] == ["--kube-api-qps=100", "--v=4"]
    assert main["args"][0] == "run"


# --- RBAC ----------------------------------------------------------------------------------------------------


def test_default_rbac_grants_always_rules() -> None:
    documents = render(namespace="sched")
    cluster_rules, namespaced = expected_rules("leaderElection")
    assert one(documents, "ClusterRole")["rules"] == cluster_rules
    assert [role["metadata"]["namespace"] for role in find(documents, "Role")] == ["karmada-system"]
    assert one(documents, "Role")["rules"] == namespaced


def test_rbac_with_estimators_grants_rules_file() -> None:
    documents = render({**IN_CLUSTER, "config.estimator.enabled": True}, namespace="sched")
    cluster_rules, namespaced = expected_rules("configObject", "leaderElection", "estimator")
    assert one(documents, "ClusterRole")["rules"] == cluster_rules
    roles = find(documents, "Role")
    assert sorted(role["metadata"]["namespace"] for role in roles) == ["karmada-system", "sched"]
    assert sorted(str(rule) for role in roles for rule in role["rules"]) == sorted(map(str, namespaced))


def test_rbac_without_leader_election_grants_no_lease() -> None:
    documents = render({"config.leaderElection": {"enabled": False}})
    assert find(documents, "Role") == []


def test_rbac_puts_lease_rule_where_lease_lives() -> None:
    documents = render({"config.leaderElection": {"leaseNamespace": "leases"}}, namespace="sched")
    (role,) = find(documents, "Role", "leases")
    assert [r["resources"] for r in role["rules"]] == [["leases"]]
    assert find(documents, "RoleBinding", "leases")[0]["subjects"][0]["namespace"] == "sched"


def test_rbac_follows_extra_args_flags() -> None:
    documents = render({"extraArgs": ["--leader-elect-resource-namespace=leases", "--enable-scheduler-estimator=True",
                                      "--scheduler-estimator-service-namespace", "estimators"]}, namespace="sched")
    roles = {role["metadata"]["namespace"]: [r["resources"] for r in role["rules"]] for role in find(documents, "Role")}
    _, namespaced = expected_rules("leaderElection", "estimator")
    assert roles == {"leases": [["leases"]],
                     "estimators": [r["resources"] for r in namespaced if r["resources"] != ["leases"]]}


def test_flag_in_extra_args_wins_over_config_values_for_rbac() -> None:
    documents = render({"config.estimator.enabled": True, "config.leaderElection": {"leaseNamespace": "leases"},
                        "extraArgs": ["-enable-scheduler-estimator=false", "--leader-elect-resource-namespace=mine"]},
                       namespace="sched")
    assert [role["metadata"]["namespace"] for role in find(documents, "Role")] == ["mine"]


@pytest.mark.parametrize("flag", ["--leader-elect=false", "--leader-elect=0", "-leader-elect=False"])
def test_election_off_grants_no_lease(flag: str) -> None:
    assert find(render({"extraArgs": [flag]}), "Role") == []


def test_non_boolean_extra_flag_fails_render() -> None:
    assert "extraArgs: --enable-scheduler-estimator=yes is not a boolean (true or false)" in refusal(
        {"extraArgs": ["--enable-scheduler-estimator=yes"]})


def test_rbac_binds_extra_subjects() -> None:
    subject = {"kind": "User", "name": "system:karmada:binding-scheduler", "apiGroup": "rbac.authorization.k8s.io"}
    documents = render({"rbac.extraSubjects": [subject]})
    assert one(documents, "ClusterRoleBinding")["subjects"][1] == subject


# --- optional objects ----------------------------------------------------------------------------------------


def test_service_monitor_is_rendered_only_when_asked() -> None:
    assert find(render(), "ServiceMonitor") == []
    monitor = one(render({"metrics.serviceMonitor.enabled": True}), "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"


def test_network_policy_admits_metrics_and_probe_ports() -> None:
    policy = one(render({"networkPolicy.enabled": True}), "NetworkPolicy")
    assert [rule["ports"][0]["port"] for rule in policy["spec"]["ingress"]] == [8080, 10351]


def test_no_metrics_service_when_metrics_server_is_off() -> None:
    assert find(render({"config.metrics.port": 0}), "Service") == []


# --- refusals (values.schema.json and the templates' checks) ------------------------------------------------


def test_negative_replicas_are_refused() -> None:
    assert "at '/replicas': minimum: got -1, want 0" in refusal({"replicas": -1})


def test_unknown_top_level_key_is_refused() -> None:
    assert "additional properties 'replica' not allowed" in refusal({"replica": 2})


def test_grace_period_too_short_is_refused() -> None:
    message = refusal({"terminationGracePeriodSeconds": 35, "config.shutdown.drainTimeout": "30s"})
    assert ("terminationGracePeriodSeconds (35) must be at least config.shutdown.drainTimeout (30s) + 6 s (4 s for "
            "the Events, the Lease release and closing after the drain, 2 s to exit)") in message


def test_unknown_configuration_field_is_refused_with_path() -> None:
    assert "at '/config/estimator': additional properties 'enable' not allowed" in refusal(
        {"config.estimator": {"enable": True}})


def test_configuration_value_scheduler_rejects_is_refused() -> None:
    assert "at '/config/workers': minimum: got 0, want 1" in refusal({"config.workers": 0})


def test_drain_timeout_that_is_not_duration_is_refused() -> None:
    assert 'config.shutdown.drainTimeout: "soon" is not a duration' in refusal({"config.shutdown.drainTimeout": "soon"})


def test_probes_cannot_lose_their_port() -> None:
    assert "config.metrics.healthPort must not be 0" in refusal({"config.metrics.healthPort": 0})


# --- generated files -----------------------------------------------------------------------------------------


def test_charts_crd_and_values_schema_are_generated_from_crd() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_chart.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_chart_installs_only_own_crd() -> None:
    assert sorted(p.name for p in (CHART / "crds").iterdir()) == [
        "config.binding-scheduler.io_schedulerconfigurations.yaml"]


def test_chart_files_name_no_outside_path() -> None:
    for path in CHART.rglob("*"):
        if path.is_file():
            assert "../" not in path.read_text(), f"{path.relative_to(ROOT)} points outside the repository"
