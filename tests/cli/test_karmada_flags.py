"""`binding-scheduler run` takes karmada-scheduler's flags (Karmada v1.18.2) in Go's syntax, and
`binding-scheduler config from-flags` prints the SchedulerConfiguration they mean."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli import goflags
from binding_scheduler.cli.goflags import FlagError
from binding_scheduler.cli.karmada_flags import IGNORED, MAPPED, KarmadaSettings, karmada_flags, read
from binding_scheduler.cli.main import build_parser, main
from binding_scheduler.model.config import API_VERSION, KIND, KubeAPIConfig, SchedulerConfig, parse_config
from binding_scheduler.operator.config_file import load_config_file

KARMADA_FLAG_NAMES = sorted([
    # cmd/scheduler/app/options/options.go AddFlags
    "leader-elect", "leader-elect-resource-name", "leader-elect-resource-namespace", "leader-elect-lease-duration",
    "leader-elect-renew-deadline", "leader-elect-retry-period", "kubeconfig", "master", "metrics-bind-address",
    "health-probe-bind-address", "kube-api-qps", "kube-api-burst", "enable-scheduler-estimator",
    "disable-scheduler-estimator-in-pull-mode", "scheduler-estimator-timeout",
    "scheduler-estimator-service-namespace", "scheduler-estimator-service-prefix", "scheduler-estimator-port",
    "scheduler-estimator-cert-file", "scheduler-estimator-key-file", "scheduler-estimator-ca-file",
    "insecure-skip-estimator-verify", "enable-empty-workload-propagation", "plugins", "scheduler-name",
    "feature-gates",
    # pkg/sharedcli/profileflag and ratelimiterflag
    "enable-pprof", "profiling-bind-address", "rate-limiter-base-delay", "rate-limiter-max-delay",
    "rate-limiter-qps", "rate-limiter-bucket-size",
    # component-base logs/api/v1 (JSON registered), then klog's own flags (klogflag.Add), `_` read as `-`
    "logging-format", "log-flush-frequency", "v", "vmodule", "log-text-split-stream", "log-text-info-buffer-size",
    "log-json-split-stream", "log-json-info-buffer-size", "log-dir", "log-file", "log-file-max-size",
    "logtostderr", "alsologtostderr", "add-dir-header", "skip-headers", "one-output", "skip-log-headers",
    "stderrthreshold", "log-backtrace-at",
])


def settings(*argv: str) -> KarmadaSettings:
    return read(goflags.parse(argv, karmada_flags()))


def config(*argv: str) -> SchedulerConfig:
    return settings(*argv).overrides.parse()


def run_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["run", *argv])


def attribute(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


# --- every flag ------------------------------------------------------------------------------------------------


OUR_FLAGS = ["allow-unknown-plugins"]
"""Flags `run` reads beside Karmada's, in its syntax."""


def test_every_karmada_flag_is_known() -> None:
    assert sorted(karmada_flags()) == sorted([*KARMADA_FLAG_NAMES, *OUR_FLAGS])


MAPPINGS = [
    (["--leader-elect=false"], "leader_election.enabled", False),
    (["--leader-elect-resource-name=my-lease"], "leader_election.lease_name", "my-lease"),
    (["--leader-elect-resource-namespace=kube-system"], "leader_election.lease_namespace", "kube-system"),
    (["--leader-elect-lease-duration=30s"], "leader_election.lease_duration", 30.0),
    (["--leader-elect-renew-deadline=5s"], "leader_election.renew_deadline", 5.0),
    (["--leader-elect-retry-period=1s"], "leader_election.retry_period", 1.0),
    (["--scheduler-name=mine"], "scheduler_name", "mine"),
    (["--allow-unknown-plugins"], "allow_unknown_plugins", True),
    (["--enable-scheduler-estimator"], "estimator.enabled", True),
    (["--disable-scheduler-estimator-in-pull-mode"], "estimator.disable_in_pull_mode", True),
    (["--scheduler-estimator-timeout=500ms"], "estimator.timeout", 0.5),
    (["--scheduler-estimator-service-namespace=estimators"], "estimator.service.namespace", "estimators"),
    (["--scheduler-estimator-service-prefix=est"], "estimator.service.prefix", "est"),
    (["--scheduler-estimator-port=9000"], "estimator.service.port", 9000),
    (["--scheduler-estimator-cert-file=/pki/c.crt", "--scheduler-estimator-key-file=/pki/c.key"],
     "estimator.tls.cert_file", "/pki/c.crt"),
    (["--scheduler-estimator-key-file=/pki/c.key", "--scheduler-estimator-cert-file=/pki/c.crt"],
     "estimator.tls.key_file", "/pki/c.key"),
    (["--scheduler-estimator-ca-file=/pki/ca.crt"], "estimator.tls.ca_file", "/pki/ca.crt"),
    (["--insecure-skip-estimator-verify"], "estimator.tls.insecure_skip_verify", True),
    (["--plugins=*,-TaintToleration"], "plugins", ("*", "-TaintToleration")),
    (["--feature-gates=MultiplePodTemplatesScheduling=true"], "feature_gates.multiple_pod_templates_scheduling",
     True),
    (["--kube-api-qps=100"], "kube_api.qps", 100.0),
    (["--kube-api-burst=200"], "kube_api.burst", 200),
    (["--metrics-bind-address=127.0.0.1:9090"], "metrics.host", "127.0.0.1"),
    (["--metrics-bind-address=127.0.0.1:9090"], "metrics.port", 9090),
    (["--health-probe-bind-address=[::1]:9091"], "metrics.health_host", "::1"),
    (["--health-probe-bind-address=[::1]:9091"], "metrics.health_port", 9091),
    (["--enable-empty-workload-propagation"], "enable_empty_workload_propagation", True),
]


@pytest.mark.parametrize(("argv", "field", "expected"), MAPPINGS)
def test_mapped_flag_sets_field(argv: list[str], field: str, expected: Any) -> None:
    assert attribute(config(*argv), field) == expected


def test_every_mapped_flag_is_tested() -> None:
    tested = {arg[2:].partition("=")[0] for argv, _, _ in MAPPINGS for arg in argv}
    assert tested == set(MAPPED)


def test_mapped_flag_sets_only_field() -> None:
    assert config("--kube-api-burst=200") == SchedulerConfig(kube_api=KubeAPIConfig(burst=200))


def test_kubeconfig_and_master_are_not_fields() -> None:
    args = run_args("--kubeconfig", "/etc/kubeconfig", "--master=https://karmada-apiserver:5443")
    assert (args.kubeconfig, args.master, args.karmada.overrides.paths) == (
        "/etc/kubeconfig", "https://karmada-apiserver:5443", [])


# --- Go's flag syntax --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "expected"), [
    (["--leader-elect"], True),
    (["--leader-elect=true"], True),
    (["--leader-elect=T"], True),
    (["--leader-elect=1"], True),
    (["--leader-elect=false"], False),
    (["--leader-elect=FALSE"], False),
    (["--leader-elect=0"], False),
    (["--leader-elect=false", "--leader-elect"], True),
])
def test_boolean_is_bare_flag_or_takes_value_after_equals(argv: list[str], expected: bool) -> None:
    assert config(*argv).leader_election.enabled is expected


def test_boolean_does_not_take_next_argument(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", "--leader-elect", "false"]) == 2
    assert capsys.readouterr().err.endswith(
        "binding-scheduler run: error: takes no arguments, got 'false' (a boolean takes its value after '=': "
        "--leader-elect=false)\n")


def test_value_is_after_equals_or_next_argument() -> None:
    assert config("--scheduler-name", "a").scheduler_name == config("--scheduler-name=a").scheduler_name == "a"


def test_next_argument_is_value_even_when_it_starts_with_dash() -> None:
    assert config("--scheduler-name", "--leader-elect").scheduler_name == "--leader-elect"


def test_underscore_in_name_is_dash() -> None:
    assert config("--leader_elect_resource_name=x").leader_election.lease_name == "x"


def test_last_value_wins() -> None:
    assert config("--scheduler-name=a", "--scheduler-name=b").scheduler_name == "b"


def test_repeated_plugins_flags_add_up() -> None:
    assert config("--plugins=*", "--plugins=-TaintToleration").plugins == ("*", "-TaintToleration")


def test_empty_plugins_flag_enables_none() -> None:
    assert config("--plugins=").plugins == ()


def test_feature_gates_flags_merge() -> None:
    assert settings("--feature-gates=MultiplePodTemplatesScheduling=true", "--feature-gates=Failover=false"
                    ).overrides.spec == {"featureGates": {"MultiplePodTemplatesScheduling": True}}


def test_all_alpha_sets_gate_unless_it_is_named() -> None:
    assert config("--feature-gates=AllAlpha=true").feature_gates.multiple_pod_templates_scheduling is True
    assert config("--feature-gates=AllAlpha=true,MultiplePodTemplatesScheduling=false"
                  ).feature_gates.multiple_pod_templates_scheduling is False


def test_empty_arguments_are_skipped() -> None:
    assert config("", "--scheduler-name=a", "").scheduler_name == "a"


def test_double_dash_ends_flags_and_argument_after_it_is_error() -> None:
    assert goflags.parse(["--leader-elect", "--"], karmada_flags()) == [goflags.Given("leader-elect", "true")]
    with pytest.raises(FlagError, match="takes no arguments, got 'x'"):
        goflags.parse(["--", "x"], karmada_flags())


def test_value_flag_at_end_needs_value() -> None:
    with pytest.raises(FlagError, match=r"^flag needs an argument: --scheduler-name$"):
        goflags.parse(["--scheduler-name"], karmada_flags())


def test_single_dash_long_flag_is_not_one() -> None:
    with pytest.raises(FlagError, match=r"^unknown shorthand flag: 'l' in -leader-elect \(did you mean "
                                        r"--leader-elect\?\)$"):
        goflags.parse(["-leader-elect"], karmada_flags())


# --- verbosity ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "verbosity"), [
    ([], 0),
    (["--v=2"], 2),
    (["--v=3"], 3),
    (["--v=4"], 4),
    (["--v", "6"], 6),
    (["-v=4"], 4),
    (["-v4"], 4),
    (["-v", "2"], 2),
    (["-v"], 6),
    (["-v", "--scheduler-name=x"], 6),
    (["--verbose"], 6),
])
def test_klog_verbosity_is_kept_and_bare_v_means_everything(argv: list[str], verbosity: int) -> None:
    assert run_args(*argv).verbosity == verbosity


@pytest.mark.parametrize(("argv", "log_format"), [
    ([], "text"),
    (["--logging-format=json"], "json"),
    (["--log-format=json"], "json"),
    (["--logging-format=text", "--log-format=json"], "json"),
])
def test_log_format_comes_from_our_flag_or_karmadas(argv: list[str], log_format: str) -> None:
    assert run_args(*argv).log_format == log_format


def test_unknown_log_format_is_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", "--logging-format=xml"]) == 2
    assert "--logging-format: 'xml' is not one of text, json" in capsys.readouterr().err


def test_verbosity_that_is_not_number_is_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", "--v=high"]) == 2
    assert "binding-scheduler run: error: --v: 'high' is not a verbosity level" in capsys.readouterr().err


# --- ignored and unknown flags -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(IGNORED))
def test_flag_with_no_meaning_here_is_ignored_with_one_warning(name: str) -> None:
    boolean, reason = IGNORED[name]
    argv = [f"--{name}"] if boolean else [f"--{name}", "x", f"--{name}=y"]
    found = settings(*argv)
    assert (found.warnings, found.overrides.paths) == ((f"--{name} is ignored: {reason}",), [])


def test_unimplemented_gates_accepted_with_warning() -> None:
    found = settings("--feature-gates=ResourceQuotaEstimate=true,Failover=false")
    assert found.warnings == (
        "--feature-gates: Failover is ignored: binding-scheduler does not implement this Karmada gate",
        "--feature-gates: ResourceQuotaEstimate is ignored: binding-scheduler does not implement this Karmada "
        "gate",
    )
    assert found.overrides.paths == []


def test_two_preemption_gates_set_their_configuration_fields() -> None:
    found = settings("--feature-gates=PriorityBasedScheduling=true,PriorityBasedPreemptiveScheduling=true")
    assert found.warnings == ()
    assert found.overrides.spec == {"featureGates": {"PriorityBasedScheduling": True,
                                                     "PriorityBasedPreemptiveScheduling": True}}
    assert found.overrides.parse().feature_gates.preemption is True


def test_workload_affinity_gate_sets_configuration_field() -> None:
    found = settings("--feature-gates=WorkloadAffinity=true")
    assert found.warnings == ()
    assert found.overrides.spec == {"featureGates": {"WorkloadAffinity": True}}
    assert found.overrides.parse().feature_gates.workload_affinity is True


def test_all_alpha_sets_workload_affinity_unless_it_is_named() -> None:
    assert config("--feature-gates=AllAlpha=true").feature_gates.workload_affinity is True
    assert config("--feature-gates=AllAlpha=true,WorkloadAffinity=false").feature_gates.workload_affinity is False


def test_overcommit_gate_is_karmadas_flag_too() -> None:
    gates = config("--feature-gates=SchedulingOvercommitProtection=false").feature_gates
    assert gates.scheduling_overcommit_protection is False
    assert config("--feature-gates=AllAlpha=true").feature_gates.scheduling_overcommit_protection is True
    assert config().feature_gates.scheduling_overcommit_protection is None


def test_run_logs_warnings(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="binding_scheduler.cli.run"):
        assert exit_code(["run", "--enable-pprof", "--logtostderr=false", "--leader-elect-renew-deadline=20s"]) == 2
    assert [r.getMessage() for r in caplog.records if r.name == "binding_scheduler.cli.run"] == [
        "--enable-pprof is ignored: binding-scheduler has no Go pprof endpoint",
        "--logtostderr is ignored: a klog output option; binding-scheduler writes its log to stderr",
    ]


def test_unknown_flag_exits_2_with_runs_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", "--kubeconfig=/k", "--scheduler-nmae=x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: binding-scheduler run ")
    assert err.endswith("binding-scheduler run: error: unknown flag: --scheduler-nmae\n")


def test_argument_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", "schedule"]) == 2
    assert capsys.readouterr().err.endswith("binding-scheduler run: error: takes no arguments, got 'schedule'\n")


def test_help_lists_karmadas_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--kube-api-qps NUMBER" in out and "spec.kubeAPI.qps" in out and "--rate-limiter-qps" in out


def test_config_and_config_file_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", "--config=a", "--config-file=b"]) == 2
    assert "--config and --config-file exclude each other" in capsys.readouterr().err


# --- bad values --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["--kube-api-qps=abc"], "--kube-api-qps: 'abc' is not a number"),
    (["--kube-api-qps=0"], "--kube-api-qps: 0 is not a number greater than 0 and at most 1000000"),
    (["--kube-api-burst=1.5"], "--kube-api-burst: '1.5' is not an integer"),
    (["--kube-api-burst=0"], "--kube-api-burst: 0 is less than 1"),
    (["--scheduler-estimator-port=70000"], "--scheduler-estimator-port: 70000 is greater than 65535"),
    (["--leader-elect=yes"], "--leader-elect: 'yes' is not a boolean (true or false)"),
    (["--leader-elect-lease-duration=5"],
     "--leader-elect-lease-duration: '5' is not a duration (examples: 3s, 500ms, 1m30s)"),
    (["--scheduler-estimator-timeout=-1s"],
     "--scheduler-estimator-timeout: '-1s' is not a duration (examples: 3s, 500ms, 1m30s)"),
    (["--leader-elect-renew-deadline=20s"],
     "--leader-elect-renew-deadline: '20s' must be less than leaseDuration (15s)"),
    (["--scheduler-estimator-cert-file=/c"], "spec.estimator.tls.keyFile: is required when certFile is set"),
    (["--scheduler-estimator-service-namespace=Bad_NS"],
     "--scheduler-estimator-service-namespace: 'Bad_NS' is not a valid namespace name (a DNS-1123 label)"),
    (["--leader-elect-resource-name=Bad"],
     "--leader-elect-resource-name: 'Bad' is not a valid Lease name (a DNS-1123 subdomain)"),
    (["--scheduler-name="], "--scheduler-name: must not be empty"),
    (["--plugins=*,-"], "--plugins: '-' is not a plugin name"),
    (["--feature-gates=Foo=true"], "--feature-gates: unrecognized feature gate: Foo"),
    (["--feature-gates=MultiplePodTemplatesScheduling"],
     "--feature-gates: missing bool value for MultiplePodTemplatesScheduling"),
    (["--feature-gates=MultiplePodTemplatesScheduling=yes"],
     "--feature-gates: invalid value of MultiplePodTemplatesScheduling=yes (true or false)"),
    (["--metrics-bind-address=8080"],
     "--metrics-bind-address: '8080' is not a listen address: give host:port (:8080, 127.0.0.1:8080, "
     "[::1]:8080), or 0 not to serve"),
    (["--metrics-bind-address=::1:8080"],
     "--metrics-bind-address: '::1:8080': an IPv6 address goes in brackets ([::1]:8080)"),
    (["--metrics-bind-address=:0"],
     "--metrics-bind-address: ':0' has port 0; binding-scheduler does not pick a free port: give host:port "
     "(:8080, 127.0.0.1:8080, [::1]:8080), or 0 not to serve"),
    (["--health-probe-bind-address=$(POD_IP):10351"],
     "--health-probe-bind-address: '$(POD_IP)' is not an IP address or a hostname"),
    (["--metrics-bind-address=127.0.0.1:9000", "--health-probe-bind-address=:9000"],
     "--health-probe-bind-address: '' differs from host ('127.0.0.1') while healthPort equals port (9000): one "
     "server serves both, on one address"),
])
def test_bad_value_exits_2_naming_flag(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_code(["run", *argv]) == 2
    assert capsys.readouterr().err.endswith(f"{message}\n")


# --- bind addresses ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "host", "port"), [
    (":8080", "", 8080),
    ("0.0.0.0:8080", "0.0.0.0", 8080),
    ("127.0.0.1:8080", "127.0.0.1", 8080),
    ("[::1]:8080", "::1", 8080),
    ("[::]:8080", "::", 8080),
    ("localhost:9090", "localhost", 9090),
    ("10.244.1.5:8080", "10.244.1.5", 8080),
])
def test_bind_address_sets_host_and_port(address: str, host: str, port: int) -> None:
    found = config(f"--metrics-bind-address={address}", f"--health-probe-bind-address={address}")
    assert (found.metrics.host, found.metrics.port, found.metrics.health_host, found.metrics.health_port) == (
        host, port, host, port)


def test_bind_address_of_0_disables_that_server_only() -> None:
    found = config("--metrics-bind-address=0")
    assert (found.metrics.port, found.metrics.health_port, found.metrics.host) == (0, 10351, "")


# --- precedence --------------------------------------------------------------------------------------------------


def config_file(tmp_path: Path, spec: dict[str, Any]) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "c"},
                                    "spec": spec}))
    return str(path)


FILE_SPEC = {"schedulerName": "from-file", "workers": 3, "leaderElection": {"enabled": False, "leaseDuration": "30s"}}


def test_flag_not_given_keeps_files_value(tmp_path: Path) -> None:
    found = load_config_file(config_file(tmp_path, FILE_SPEC), settings("--kube-api-qps=100").overrides)
    assert (found.scheduler_name, found.workers, found.leader_election.enabled, found.kube_api.qps) == (
        "from-file", 3, False, 100.0)


def test_flag_given_wins_over_file_even_at_default_value(tmp_path: Path) -> None:
    found = load_config_file(config_file(tmp_path, FILE_SPEC),
                             settings("--scheduler-name=from-flag", "--leader-elect=true").overrides)
    assert (found.scheduler_name, found.leader_election.enabled, found.leader_election.lease_duration) == (
        "from-flag", True, 30.0)


def test_flag_is_checked_against_file_it_is_merged_with(tmp_path: Path) -> None:
    flags = settings("--leader-elect-renew-deadline=20s").overrides
    assert load_config_file(config_file(tmp_path, FILE_SPEC), flags).leader_election.renew_deadline == 20.0


def test_run_reports_flag_invalid_with_file_naming_flag_and_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config_file(tmp_path, {"leaderElection": {"leaseDuration": "5s", "renewDeadline": "4s"}})
    assert exit_code(["run", "--config-file", path, "--leader-elect-renew-deadline=10s"]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: SchedulerConfiguration c: --leader-elect-renew-deadline: '10s' must be less than "
        "leaseDuration ('5s')\n")


# --- config from-flags -------------------------------------------------------------------------------------------


HELM_LIKE = [
    "--kubeconfig=/etc/kubeconfig", "--metrics-bind-address=10.244.1.5:8080",
    "--health-probe-bind-address=10.244.1.5:10351", "--leader-elect-resource-namespace=karmada-system",
    "--scheduler-estimator-ca-file=/etc/karmada/pki/server-ca.crt",
    "--scheduler-estimator-cert-file=/etc/karmada/pki/karmada.crt",
    "--scheduler-estimator-key-file=/etc/karmada/pki/karmada.key", "--v=2", "--enable-scheduler-estimator=true",
    "--feature-gates=MultiplePodTemplatesScheduling=true", "--scheduler-name=my-scheduler",
    "--plugins=*,-ClusterLocality",
    "--kube-api-qps=100", "--leader-elect-lease-duration=20s", "--enable-pprof",
]


def from_flags(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    assert exit_code(["config", "from-flags", *argv]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_from_flags_round_trips_to_what_run_uses(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = from_flags(capsys, *HELM_LIKE)
    assert parse_config(yaml.safe_load(out)) == run_args(*HELM_LIKE).karmada.overrides.parse()


def test_from_flags_prints_only_fields_flags_set(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = from_flags(capsys, "--kube-api-qps=100", "--leader-elect=false", "--metrics-bind-address=:9090")
    assert yaml.safe_load(out) == {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "binding-scheduler", "namespace": "karmada-system"},
        "spec": {"kubeAPI": {"qps": 100}, "leaderElection": {"enabled": False},
                 "metrics": {"host": "", "port": 9090}},
    }


def test_from_flags_names_object_after_scheduler_or_as_told(capsys: pytest.CaptureFixture[str]) -> None:
    assert yaml.safe_load(from_flags(capsys, "--scheduler-name=mine")[0])["metadata"] == {
        "name": "mine", "namespace": "karmada-system"}
    assert yaml.safe_load(from_flags(capsys, "--scheduler-name=mine", "--name=n", "--namespace=ns")[0])[
        "metadata"] == {"name": "n", "namespace": "ns"}


def test_from_flags_says_which_flags_stay_on_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = from_flags(capsys, "--kubeconfig", "/etc/kubeconfig", "--master=https://k:5443", "--v=2")
    assert out.splitlines()[0] == ("# not part of the object: these stay command-line flags of "
                                   "`binding-scheduler run`: --kubeconfig=/etc/kubeconfig --master=https://k:5443 "
                                   "--v=2")
    assert yaml.safe_load(out)["spec"] == {}


def test_from_flags_warns_about_ignored_flags_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    _, err = from_flags(capsys, "--rate-limiter-qps=10", "--log-flush-frequency=5s")
    assert err.splitlines() == [
        f"warning: --rate-limiter-qps is ignored: {IGNORED['rate-limiter-qps'][1]}",
        f"warning: --log-flush-frequency is ignored: {IGNORED['log-flush-frequency'][1]}",
    ]


def test_from_flags_rejects_bad_value_naming_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["config", "from-flags", "--kube-api-burst=0"]) == 2
    assert capsys.readouterr().err.endswith("binding-scheduler config from-flags: error: --kube-api-burst: 0 is less "
                                            "than 1\n")


# --- Karmada's own deployments of karmada-scheduler --------------------------------------------------------------

POD_IP = "10.244.1.5"  # what the kubelet substitutes for $(POD_IP)

# charts/karmada/templates/karmada-scheduler.yaml (values: logVerbosity 2, enableSchedulerEstimator true,
# featureGates {MultiplePodTemplatesScheduling: true}), after /bin/karmada-scheduler
HELM_CHART_ARGS = [
    "--kubeconfig=/etc/kubeconfig",
    "--metrics-bind-address=$(POD_IP):8080",
    "--health-probe-bind-address=$(POD_IP):10351",
    "--leader-elect-resource-namespace=karmada-system",
    "--scheduler-estimator-ca-file=/etc/karmada/pki/server-ca.crt",
    "--scheduler-estimator-cert-file=/etc/karmada/pki/karmada.crt",
    "--scheduler-estimator-key-file=/etc/karmada/pki/karmada.key",
    "--v=2",
    "--enable-scheduler-estimator=true",
    "--feature-gates=MultiplePodTemplatesScheduling=true",
]
# operator/pkg/controlplane/manifests.go (KarmadaSchedulerDeployment)
OPERATOR_ARGS = [
    "--kubeconfig=/etc/karmada/config/karmada.config",
    "--metrics-bind-address=$(POD_IP):8080",
    "--health-probe-bind-address=$(POD_IP):10351",
    "--enable-scheduler-estimator=true",
    "--leader-elect-resource-namespace=karmada-system",
    "--scheduler-estimator-ca-file=/etc/karmada/pki/ca.crt",
    "--scheduler-estimator-cert-file=/etc/karmada/pki/karmada.crt",
    "--scheduler-estimator-key-file=/etc/karmada/pki/karmada.key",
    "--v=2",
]
# artifacts/deploy/karmada-scheduler.yaml (hack/ local-up)
ARTIFACTS_ARGS = [
    "--kubeconfig=/etc/karmada/config/karmada.config",
    "--metrics-bind-address=$(POD_IP):8080",
    "--health-probe-bind-address=$(POD_IP):10351",
    "--enable-scheduler-estimator=true",
    "--scheduler-estimator-ca-file=/etc/karmada/pki/scheduler-estimator-client/ca.crt",
    "--scheduler-estimator-cert-file=/etc/karmada/pki/scheduler-estimator-client/tls.crt",
    "--scheduler-estimator-key-file=/etc/karmada/pki/scheduler-estimator-client/tls.key",
    "--feature-gates=AllAlpha=true,AllBeta=true",
    "--logging-format=json",
    "--v=4",
]


def substituted(args: list[str]) -> list[str]:
    return [arg.replace("$(POD_IP)", POD_IP) for arg in args]


@pytest.mark.parametrize("args", [HELM_CHART_ARGS, OPERATOR_ARGS, ARTIFACTS_ARGS], ids=["chart", "operator",
                                                                                         "artifacts"])
def test_karmadas_own_scheduler_args_parse(args: list[str]) -> None:
    parsed = run_args(*substituted(args))
    found = parsed.karmada.overrides.parse()
    assert parsed.kubeconfig == args[0].partition("=")[2]
    assert (found.metrics.host, found.metrics.port, found.metrics.health_host, found.metrics.health_port) == (
        POD_IP, 8080, POD_IP, 10351)
    assert (found.estimator.enabled, found.estimator.tls.key_file) == (True, args[args.index(
        next(a for a in args if a.startswith("--scheduler-estimator-key-file")))].partition("=")[2])
    assert found.leader_election.enabled and found.leader_election.lease_namespace == "karmada-system"
    assert found.feature_gates.multiple_pod_templates_scheduling is (args is not OPERATOR_ARGS)


def test_artifacts_args_log_json_at_debug_and_warn_about_gates() -> None:
    parsed = run_args(*substituted(ARTIFACTS_ARGS))
    assert (parsed.verbosity, parsed.log_format) == (4, "json")
    assert [line.partition(":")[0] for line in parsed.karmada.warnings] == ["--feature-gates", "--feature-gates"]


@pytest.mark.parametrize("flag", ["--v", "-v"])
def test_verbosity_that_is_not_number_names_flag(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["run", flag, "abc"]) == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"error: {flag}: 'abc' is not a number (the value is optional; given, it is a number: {flag}=4)")
