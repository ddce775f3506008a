"""The chart beside each Karmada install (karmadaAPI.layout): the pods mount exactly the Secrets and keys that
install creates for its karmada-scheduler, and pass them as the flags the scheduler reads; the Lease and the
estimator Services are looked up in karmada-system whatever the release namespace; the memory limit is the one
docs/operations.md gives."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from binding_scheduler.cli.main import build_parser
from binding_scheduler.model.config import parse_config
from tests.chart.test_chart import IN_CLUSTER, container, pod
from testsupport.chart.helm import HelmError, find, one, render
from testsupport.realcluster.controlplane import ROOT

pytestmark = pytest.mark.usefixtures("helm")

ESTIMATOR_ON = {"config.estimator.enabled": True}
FLAGS = ("kubeconfig", "scheduler-estimator-ca-file", "scheduler-estimator-cert-file", "scheduler-estimator-key-file")


def secret_files(documents: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Every file the container sees from a Secret: its path -> (the Secret's name, its key)."""
    volumes = {volume["name"]: volume["secret"] for volume in pod(documents)["volumes"] if "secret" in volume}
    files: dict[str, tuple[str, str]] = {}
    for mount in container(documents)["volumeMounts"]:
        if mount["name"] in volumes:
            secret = volumes[mount["name"]]
            assert mount["readOnly"] is True
            assert "items" in secret, f"Secret {secret['secretName']} is mounted whole, not key by key"
            for item in secret["items"]:
                files[f"{mount['mountPath']}/{item['path']}"] = (secret["secretName"], item["key"])
    return files


def mounted_flags(values: dict[str, Any], **kwargs: Any) -> dict[str, tuple[str, str]]:
    """The Secret files the container's args name: flag -> (Secret, key). Every mounted Secret file is named by one
    flag, and the scheduler's own flag parser reads the args to the same files."""
    documents = render(values, **kwargs)
    files = secret_files(documents)
    args = container(documents)["args"]
    named = {arg.partition("=")[0].lstrip("-"): arg.partition("=")[2] for arg in args if arg.startswith("--")}
    flags = {flag: files[named[flag]] for flag in FLAGS if flag in named}
    assert sorted(flags.values()) == sorted(files.values()), "a mounted Secret file that no flag names"
    assert all(named[flag] in files for flag in FLAGS if flag in named), "a flag naming a file not mounted"
    karmada = build_parser().parse_args(args).karmada
    tls = karmada.overrides.parse().estimator.tls
    assert karmada.kubeconfig == named["kubeconfig"]
    assert (tls.ca_file, tls.cert_file, tls.key_file) == tuple(named.get(flag, "") for flag in FLAGS[1:])
    return flags


def expected(kubeconfig: tuple[str, str], certificate: str, ca: str, cert: str, key: str) -> dict[str, Any]:
    return {
        "kubeconfig": kubeconfig, "scheduler-estimator-ca-file": (certificate, ca),
        "scheduler-estimator-cert-file": (certificate, cert), "scheduler-estimator-key-file": (certificate, key),
    }


# --- each layout ---------------------------------------------------------------------------------------------


def test_local_up_mounts_secrets_deploy_karmada_creates() -> None:
    """hack/local-up-karmada.sh runs hack/deploy-karmada.sh, which fills artifacts/deploy/karmada-config-secret.yaml
    as karmada-scheduler-config (key karmada.config) and artifacts/deploy/karmada-cert-secret.yaml as
    karmada-scheduler-scheduler-estimator-client-cert (ca.crt, tls.crt, tls.key);
    artifacts/deploy/karmada-scheduler.yaml passes those files as --kubeconfig and --scheduler-estimator-ca-file,
    -cert-file and -key-file."""
    assert mounted_flags({"karmadaAPI.layout": "local-up", **ESTIMATOR_ON}) == expected(
        ("karmada-scheduler-config", "karmada.config"),
        "karmada-scheduler-scheduler-estimator-client-cert", "ca.crt", "tls.crt", "tls.key")


def test_local_up_is_default_layout() -> None:
    """hack/local-up-karmada.sh and artifacts/deploy/karmada-scheduler.yaml, as above."""
    assert mounted_flags(ESTIMATOR_ON) == mounted_flags({"karmadaAPI.layout": "local-up", **ESTIMATOR_ON})


def test_karmadactl_init_mounts_secrets_it_creates() -> None:
    """pkg/karmadactl/cmdinit/kubernetes/deploy.go creates karmada-scheduler-config with the key karmada.config
    (pkg/karmadactl/util/global.go) and karmada-cert (pkg/karmadactl/options/global.go) holding ca.crt, karmada.crt
    and karmada.key; pkg/karmadactl/cmdinit/kubernetes/command.go passes those three to karmada-scheduler."""
    assert mounted_flags({"karmadaAPI.layout": "karmadactl-init", **ESTIMATOR_ON}) == expected(
        ("karmada-scheduler-config", "karmada.config"), "karmada-cert", "ca.crt", "karmada.crt", "karmada.key")


def test_helm_mounts_karmadas_chart_secrets() -> None:
    """charts/karmada/templates/pre-install-job.yaml creates <release>-kubeconfig (key kubeconfig) and
    <release>-cert (server-ca.crt, karmada.crt, karmada.key); charts/karmada/templates/karmada-scheduler.yaml passes
    them; charts/karmada/README.md installs the release karmada."""
    assert mounted_flags({"karmadaAPI.layout": "helm", **ESTIMATOR_ON}) == expected(
        ("karmada-kubeconfig", "kubeconfig"), "karmada-cert", "server-ca.crt", "karmada.crt", "karmada.key")


def test_helm_follows_release_name_of_karmadas_chart() -> None:
    """charts/karmada/templates/_helpers.tpl names both Secrets after the release name."""
    flags = mounted_flags({"karmadaAPI.layout": "helm", "karmadaAPI.helm.releaseName": "kd", **ESTIMATOR_ON})
    assert flags == expected(("kd-kubeconfig", "kubeconfig"), "kd-cert", "server-ca.crt", "karmada.crt", "karmada.key")


def test_operator_mounts_secrets_of_sample_instance() -> None:
    """operator/pkg/tasks/init/upload.go creates <prefix>-scheduler-config (key karmada.config) and <prefix>-cert
    (ca.crt, karmada.crt, karmada.key), the prefix being the instance name when it contains karmada
    (operator/pkg/util/naming.go); operator/pkg/controlplane/manifests.go passes them; the instance of
    operator/config/samples/karmada.yaml is karmada-demo."""
    assert mounted_flags({"karmadaAPI.layout": "operator", **ESTIMATOR_ON}) == expected(
        ("karmada-demo-scheduler-config", "karmada.config"),
        "karmada-demo-cert", "ca.crt", "karmada.crt", "karmada.key")


def test_instance_name_without_karmada() -> None:
    """operator/pkg/util/naming.go: <instance>-karmada-<suffix> when the instance name lacks karmada."""
    flags = mounted_flags({"karmadaAPI.layout": "operator", "karmadaAPI.operator.instanceName": "prod", **ESTIMATOR_ON})
    assert flags == expected(
        ("prod-karmada-scheduler-config", "karmada.config"),
        "prod-karmada-cert", "ca.crt", "karmada.crt", "karmada.key")


# --- values over the layout, and when nothing is mounted -----------------------------------------------------


def test_explicit_secret_names_and_keys_win_over_layouts() -> None:
    flags = mounted_flags({
        "karmadaAPI.layout": "helm", "karmadaAPI.kubeconfigSecret": {"name": "mine", "key": "config"},
        "karmadaAPI.estimatorClientCertificate": {"secretName": "certs", "keys": {"ca": "root.pem"}}, **ESTIMATOR_ON,
    })
    assert flags == expected(("mine", "config"), "certs", "root.pem", "karmada.crt", "karmada.key")


def test_only_kubeconfig_is_mounted_while_estimator_is_off() -> None:
    assert mounted_flags({"karmadaAPI.layout": "operator"}) == {
        "kubeconfig": ("karmada-demo-scheduler-config", "karmada.config")}


def test_extra_args_estimator_mounts_certificate() -> None:
    flags = mounted_flags({"karmadaAPI.layout": "karmadactl-init", "extraArgs": ["--enable-scheduler-estimator"]})
    assert flags["scheduler-estimator-cert-file"] == ("karmada-cert", "karmada.crt")


def test_estimator_tls_needs_no_client_cert() -> None:
    values = {**ESTIMATOR_ON, "karmadaAPI.estimatorClientCertificate.enabled": False,
              "config.estimator.tls": {"insecureSkipVerify": True}}
    assert list(mounted_flags(values)) == ["kubeconfig"]


def test_estimator_tls_beside_client_cert_refused() -> None:
    with pytest.raises(HelmError) as error:
        render({**ESTIMATOR_ON, "config.estimator.tls": {"caFile": "/ca.crt"}})
    assert ("config.estimator.tls.caFile is set, but the chart passes the client certificate of "
            "karmadaAPI.estimatorClientCertificate as Karmada's --scheduler-estimator-*-file flags") in str(error.value)


@pytest.mark.parametrize("layout", ["local-up", "helm", "operator"])
def test_in_cluster_mounts_no_secret_whatever_layout(layout: str) -> None:
    documents = render({**IN_CLUSTER, "karmadaAPI.layout": layout, **ESTIMATOR_ON})
    assert secret_files(documents) == {}
    assert not [arg for arg in container(documents)["args"] if arg.partition("=")[0].lstrip("-") in FLAGS]
    assert pod(documents)["automountServiceAccountToken"] is True


def test_unknown_layout_is_refused_naming_layouts() -> None:
    with pytest.raises(HelmError) as error:
        render({"karmadaAPI.layout": "kind"})
    assert ("at '/karmadaAPI/layout': value must be one of 'local-up', 'karmadactl-init', 'helm', 'operator'"
            in str(error.value))


# --- namespaces and memory -----------------------------------------------------------------------------------


@pytest.mark.parametrize("values", [{"config.estimator.enabled": True}, {**IN_CLUSTER, **ESTIMATOR_ON}])
def test_lease_and_estimators_live_in_karmada_system(
    values: dict[str, Any],
) -> None:
    documents = render(values, namespace="binding-scheduler")
    files = find(documents, "ConfigMap")
    document = (yaml.safe_load(files[0]["data"]["scheduler-configuration.yaml"]) if files
                else one(documents, "SchedulerConfiguration"))
    config = parse_config(document)
    assert (config.leader_election.lease_namespace, config.estimator.service.namespace) == (
        "karmada-system", "karmada-system")
    roles = {role["metadata"]["namespace"]: {r for rule in role["rules"] for r in rule["resources"]}
             for role in find(documents, "Role")}
    assert {"leases", "services"} <= roles["karmada-system"]


def test_lease_and_estimator_namespaces_can_still_be_set() -> None:
    documents = render({"config.leaderElection.leaseNamespace": "leases",
                        "config.estimator": {"enabled": True, "service": {"namespace": "estimators"}}},
                       namespace="binding-scheduler")
    spec = yaml.safe_load(one(documents, "ConfigMap")["data"]["scheduler-configuration.yaml"])["spec"]
    assert (spec["leaderElection"]["leaseNamespace"], spec["estimator"]["service"]["namespace"]) == (
        "leases", "estimators")
    assert sorted(role["metadata"]["namespace"] for role in find(documents, "Role")) == ["estimators", "leases"]


def bytes_of(quantity: str) -> float:
    parts = re.fullmatch(r"([0-9.]+)(Ki|Mi|Gi|)", quantity)
    assert parts, f"{quantity!r} is not a quantity in bytes, Ki, Mi or Gi"
    return float(parts[1]) * {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}[parts[2]]


def test_memory_limit_matches_operations_guide() -> None:
    guide = (ROOT / "docs" / "operations.md").read_text()
    memory = guide[guide.index("## Memory"):]
    assert "50,000 bindings" in memory
    found = re.search(r"memory limit of ([0-9.]+) GiB", memory)
    assert found, "docs/operations.md's Memory section names no memory limit"
    limit = container(render())["resources"]["limits"]["memory"]
    assert bytes_of(limit) == float(found.group(1)) * 2**30
