"""Every command-line error is one line on stderr naming what is at fault, with exit status 2 for bad usage or
input and 1 for a failure at run time; a traceback only with --debug."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from binding_scheduler.cli import simulate as simulate_command
from binding_scheduler.cli.main import main
from testsupport.operator.harness import binding_doc, cluster_doc, config_spec, write_config

ROOT = Path(__file__).resolve().parents[2]

KNOWN = "APIEnablement, TaintToleration, ClusterAffinity, SpreadConstraint, ClusterLocality, ClusterEviction"
"""Every plugin there is, in the order the warnings list them."""


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "binding_scheduler.cli.main", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.mark.parametrize(("args", "message"), [
    (["demo", "--examples", "/nonexistent"], "argument --examples: /nonexistent: no such folder"),
    (["devcluster", "--port", "99999"], "argument --port: 99999 is not a port (0 to 65535; 0 picks a free one)"),
    (["devcluster", "--history", "-5"], "argument --history: -5 is not at least 1"),
    (["estimator-stub", "--cluster", "a", "--port", "99999"],
     "argument --port: 99999 is not a port (0 to 65535; 0 picks a free one)"),
    (["estimator-stub", "--cluster", "a", "--replicas", "-1"], "argument --replicas: -1 is negative"),
    (["estimator-stub", "--cluster", "a", "--latency", "soon"],
     "argument --latency: 'soon' is not a number of seconds"),
    (["simulate", "-f", "examples", "--bogus"], "unrecognized arguments: --bogus"),
    (["demo", "--workers", "0"], "argument --workers: 0 is not at least 1"),
    (["simulate", "-f", "examples", "--estimator-timeout", "abc"],
     "argument --estimator-timeout: 'abc' is not a duration (examples: 3s, 500ms, 1m30s)"),
    (["explain", "-f", "examples", "--binding", "a/b", "--estimator-timeout=-1s"],
     "argument --estimator-timeout: '-1s' is not a duration (examples: 3s, 500ms, 1m30s)"),
])
def test_bad_usage_is_one_line_and_status_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.splitlines()[-1] == f"binding-scheduler {args[0]}: error: {message}"
    assert err.startswith(f"usage: binding-scheduler {args[0]} ")


def test_missing_input_file_is_stderr_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "-f", "/nonexistent", "-o", "json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["/nonexistent: No such file or directory"]


def test_run_with_missing_kubeconfig_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--kubeconfig", "/nonexistent"]) == 2
    assert capsys.readouterr().err == "error: kubeconfig /nonexistent does not exist\n"


def test_failure_at_run_time_is_one_line_with_status_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def broken(*_: object, **__: object) -> None:
        raise RuntimeError("the estimator exploded")

    monkeypatch.setattr(simulate_command, "simulate", broken)
    assert main(["simulate", "-f", str(ROOT / "examples"), "-o", "json"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == "error: RuntimeError: the estimator exploded (--debug shows where)"
    assert "Traceback" not in err


def test_debug_anywhere_on_command_line_shows_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*_: object, **__: object) -> None:
        raise RuntimeError("the estimator exploded")

    monkeypatch.setattr(simulate_command, "simulate", broken)
    with pytest.raises(RuntimeError, match="the estimator exploded"):
        main(["simulate", "-f", str(ROOT / "examples"), "--debug", "-o", "json"])


def test_reader_that_goes_away_ends_output_quietly() -> None:
    process = subprocess.Popen([sys.executable, "-m", "binding_scheduler.cli.main", "simulate", "-f",
                                str(ROOT / "examples"), "-o", "json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # as `| head -0` does
    process.wait(timeout=60)
    err = process.stderr.read()
    process.stderr.close()
    assert process.returncode == 128 + signal.SIGPIPE
    assert "Traceback" not in err and "BrokenPipeError" not in err


UNKNOWN_PLUGIN = (
    "names 'TaintTolerations', which is no plugin (known: " + KNOWN + "); Karmada ignores such a name, so a "
    "misspelt '-Name' leaves that plugin on and a list of misspelt names leaves every filter off: fix the spelling, "
    "or set allowUnknownPlugins (--allow-unknown-plugins) to ignore unknown names as Karmada does"
)


def test_unknown_plugin_name_is_bad_input_naming_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "-f", str(ROOT / "examples"), "--binding", "shop/checkout-deployment",
                 "--plugins", "*,-TaintTolerations"]) == 2
    assert capsys.readouterr() == ("", f"error: --plugins {UNKNOWN_PLUGIN}\n")


def test_allowed_unknown_plugin_is_ignored_with_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", "-f", str(ROOT / "examples"), "--binding", "shop/checkout-deployment",
                 "--plugins", "*,-TaintTolerations", "--allow-unknown-plugins"]) == 0
    out, err = capsys.readouterr()
    assert f"warning: --plugins names 'TaintTolerations', which is no plugin: ignored (known: {KNOWN})" in err
    assert "plugins: APIEnablement, TaintToleration, ClusterAffinity, SpreadConstraint, ClusterEviction, " \
           "ClusterLocality (unknown, ignored: TaintTolerations)" in out


def test_run_refuses_unknown_plugin_name_before_anything_starts() -> None:
    result = cli("run", "--kubeconfig=/nonexistent", "--plugins=*,-TaintTolerations")
    assert (result.returncode, result.stderr) == (2, f"error: --plugins: {UNKNOWN_PLUGIN}\n")


def test_busy_port_stops_run_with_status_1(tmp_path: Path) -> None:
    import socket

    from binding_scheduler.devcluster import DevCluster

    with socket.socket() as taken, DevCluster.in_thread() as api:
        api.store.ensure_namespace("karmada-system")
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_config(tmp_path / "config.yaml", config_spec(metrics={"port": 0, "healthPort": port,
                                                                             "healthHost": "127.0.0.1"}))
        result = cli("run", "--kubeconfig", str(api.kubeconfig_path), "--config-file", str(config))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "cannot start" in line]
    assert line.endswith(f"cannot start: cannot serve /healthz, /readyz on 127.0.0.1:{port}: " + line.split(
        f"127.0.0.1:{port}: ")[1])
    assert "(set by spec.metrics.healthHost/healthPort, or --metrics-bind-address/--health-probe-bind-address)" in line
    lines = result.stderr.splitlines()
    reports = [i for i, text in enumerate(lines) if "shutdown complete" in text]
    assert reports and all(lines.index(line) < i for i in reports), "the cause comes before the shutdown's report"


def test_run_logs_one_json_object_per_line_with_log_format_json(tmp_path: Path) -> None:
    from binding_scheduler.devcluster import DevCluster
    from testsupport.operator.harness import apply, binding_doc, cluster_doc, namespaces, scheduled, wait_until

    with DevCluster.in_thread() as api:
        namespaces(api, "default", "karmada-system")
        apply(api, cluster_doc("m1"), binding_doc("web", replicas=2))
        process = subprocess.Popen(
            [sys.executable, "-m", "binding_scheduler.cli.main", "run", "--kubeconfig", str(api.kubeconfig_path),
             "--logging-format=json", "--config-file", str(write_config(tmp_path / "c.yaml", config_spec()))],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert process.returncode == 0, err
    entries = [json.loads(line) for line in err.splitlines()]
    assert all({"ts", "level", "logger", "msg"} <= set(entry) for entry in entries)
    decisions = [e for e in entries if e["logger"] == "binding_scheduler.scheduling.passes.run"
                 and e["msg"].startswith("binding default/web (ResourceBinding): scheduled to m1:2 (")]
    assert [e["level"] for e in decisions] == ["info"]
    (decision,) = decisions
    assert {key: decision[key] for key in ("binding", "kind", "scheduled", "reason", "clusters", "attempt")} == {
        "binding": "default/web", "kind": "ResourceBinding", "scheduled": True, "reason": "Success",
        "clusters": [{"name": "m1", "replicas": 2}], "attempt": 1}
    assert re.search(rf"\({decision['trigger']}, \d+ ms, attempt 1\)$", decision["msg"])
    assert decision["duration_ms"] > 0
    assert all(set(entry) == {"ts", "level", "logger", "msg"} for entry in entries if entry is not decision)
    assert entries[-1]["msg"].startswith("shutdown complete in ")


def test_missing_estimator_tls_file_is_status_1(
    tmp_path: Path,
) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("not checked here: only whether it can be read\n")
    result = cli("run", f"--kubeconfig={tmp_path / 'kubeconfig'}", "--enable-scheduler-estimator=true",
                 f"--scheduler-estimator-ca-file={ca}", f"--scheduler-estimator-cert-file={tmp_path / 'tls.crt'}",
                 f"--scheduler-estimator-key-file={tmp_path / 'tls.key'}", timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"error: --scheduler-estimator-key-file: {tmp_path / 'tls.key'}: "
                             "No such file or directory\n")


def test_missing_tls_file_names_its_field(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.yaml", config_spec(
        estimator={"enabled": True, "tls": {"caFile": str(tmp_path / "nope.crt")}}))
    result = cli("run", f"--kubeconfig={tmp_path / 'kubeconfig'}", "--config-file", str(config), timeout=30)
    assert (result.returncode, result.stderr) == (
        1, f"error: spec.estimator.tls.caFile: {tmp_path / 'nope.crt'}: No such file or directory\n")


def test_missing_tls_file_is_not_checked_while_estimator_is_off(tmp_path: Path) -> None:
    result = cli("run", f"--kubeconfig={tmp_path / 'kubeconfig'}", f"--scheduler-estimator-ca-file={tmp_path}/x",
                 timeout=30)
    assert (result.returncode, result.stderr) == (2, f"error: kubeconfig {tmp_path / 'kubeconfig'} does not exist\n")


def test_warning_lists_every_known_plugin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "-f", str(ROOT / "examples"), "--plugins", "TaintToleration,Typo", "-o", "json",
                 "--allow-unknown-plugins"]) == 0
    err = capsys.readouterr().err
    assert f"warning: --plugins names 'Typo', which is no plugin: ignored (known: {KNOWN})" in err


def test_config_from_flags_refuses_unknown_plugin_unless_allowed() -> None:
    refused = cli("config", "from-flags", "--plugins=NoSuchPlugin")
    allowed = cli("config", "from-flags", "--plugins=NoSuchPlugin", "--allow-unknown-plugins")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr.startswith("error: --plugins: names 'NoSuchPlugin', which is no plugin (known: ")
    assert allowed.returncode == 0
    assert allowed.stderr.splitlines() == [
        f"warning: --plugins names 'NoSuchPlugin', which is no plugin: ignored (known: {KNOWN})",
        "warning: --plugins enables no filter plugin: every cluster passes the filters ('*' enables every "
        "plugin, '-Name' then disables one)",
    ]
    assert "- NoSuchPlugin" in allowed.stdout  # Karmada's syntax, kept as given


def test_config_without_namespace_is_read_in_karmada_system(
    tmp_path: Path,
) -> None:
    import yaml

    from binding_scheduler.devcluster import DevCluster

    with DevCluster.in_thread() as api:
        api.store.ensure_namespace("karmada-system")
        kubeconfig = yaml.safe_load(api.kubeconfig_path.read_text())
        for context in kubeconfig["contexts"]:
            context["context"]["namespace"] = "elsewhere"
        (tmp_path / "kubeconfig").write_text(yaml.safe_dump(kubeconfig))
        result = cli("run", f"--kubeconfig={tmp_path / 'kubeconfig'}", "--config", "sched",
                     "--metrics-bind-address=0", "--health-probe-bind-address=0")
    assert result.returncode == 1
    assert "cannot start: SchedulerConfiguration karmada-system/sched (--config) does not exist" in result.stderr


def test_version_prints_version_and_compatibility() -> None:
    from binding_scheduler import COMPATIBILITY, __version__

    result = cli("--version")
    assert (result.returncode, result.stdout) == (0, f"binding-scheduler {__version__}\n{COMPATIBILITY}\n")


def test_readme_and_compatibility_agree_on_versions() -> None:
    from binding_scheduler import COMPATIBILITY

    for page in (ROOT / "README.md", ROOT / "docs" / "compatibility.md"):
        assert COMPATIBILITY in " ".join(page.read_text().split()), page


def test_fail_on_unscheduled_exits_3_after_summary(
    tmp_path: Path,
) -> None:
    import yaml

    (tmp_path / "inputs.yaml").write_text(yaml.safe_dump_all([
        cluster_doc("m1"),
        binding_doc("fits", placement={"clusterAffinity": {"clusterNames": ["m1"]}}),
        binding_doc("nowhere", placement={"clusterAffinity": {"clusterNames": ["gone"]}}),
    ]))
    plain = cli("simulate", "-f", str(tmp_path), "-o", "json")
    strict = cli("simulate", "-f", str(tmp_path), "-o", "json", "--fail-on-unscheduled")
    assert (plain.returncode, strict.returncode) == (0, 3)
    assert plain.stderr.splitlines()[-1] == "2 bindings: 1 scheduled, 1 not"
    assert json.loads(strict.stdout) == json.loads(plain.stdout)


def test_simulate_of_folder_without_bindings_is_bad_input(tmp_path: Path) -> None:
    result = cli("simulate", "-f", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == f"{tmp_path}: no ResourceBinding or ClusterResourceBinding found\n"


def misspelt_binding(tmp_path: Path, **changes: Any) -> Path:
    import yaml

    binding = binding_doc("web", placement={"clusterAffinity": {"clusterNames": ["m1"]}})
    binding["spec"]["placment"] = {"clusterAffinity": {"clusterNames": ["m2"]}}
    binding.update(changes)
    (tmp_path / "inputs.yaml").write_text(yaml.safe_dump_all([cluster_doc("m1"), binding]))
    return tmp_path / "inputs.yaml"


def test_simulate_warns_of_unknown_field(tmp_path: Path) -> None:
    inputs = misspelt_binding(tmp_path)
    result = cli("simulate", "-f", str(inputs), "-o", "json")
    assert result.returncode == 0
    assert f'warning: {inputs}: ResourceBinding web: unknown field "spec.placment"' in result.stderr.splitlines()
    assert json.loads(result.stdout)["results"][0]["clusters"] == [{"name": "m1", "replicas": 1}]


def test_explain_with_strict_refuses_unknown_field(tmp_path: Path) -> None:
    inputs = misspelt_binding(tmp_path)
    result = cli("explain", "-f", str(inputs), "--binding", "default/web", "--strict")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f'{inputs}: ResourceBinding web: unknown field "spec.placment"\n'


def test_binding_at_apiversion_model_does_not_read_is_refused(tmp_path: Path) -> None:
    inputs = misspelt_binding(tmp_path, apiVersion="work.karmada.io/v1alpha1")
    result = cli("simulate", "-f", str(inputs))
    assert result.returncode == 2
    assert result.stderr == (f"{inputs}: ResourceBinding web: apiVersion: 'work.karmada.io/v1alpha1' is not read "
                             "here: a ResourceBinding is read as work.karmada.io/v1alpha2\n")


def test_estimator_stub_reads_cluster_from_kubectl_list_export(tmp_path: Path) -> None:
    import yaml

    from binding_scheduler.cli.estimator_stub import _load_cluster

    export = tmp_path / "clusters.yaml"
    export.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                      "items": [cluster_doc("m1"), cluster_doc("m2")]}))
    assert _load_cluster(export, "m2").name == "m2"


@pytest.mark.parametrize(("text", "message"), [
    ("kind: Cluster\nmetadata: {name: [\n", "--cluster-file {path}: not valid YAML or JSON: "),
    ("{}\n", "--cluster-file holds no Cluster, not cluster 'm1'"),
])
def test_stub_bad_cluster_file_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = cli("estimator-stub", "--cluster", "m1", "--port", "0", "--cluster-file", str(path), timeout=30)
    assert result.returncode != 0
    (line,) = result.stderr.splitlines()
    assert message.format(path=path) in line


def test_stub_on_busy_port_is_status_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("estimator-stub", "--cluster", "m1", "--replicas", "3", "--port", str(port), timeout=30)
    assert result.returncode == 1
    assert result.stderr == f"error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_estimator_stub_that_hangs_needs_no_answers_to_give() -> None:
    process = subprocess.Popen([sys.executable, "-m", "binding_scheduler.cli.main", "estimator-stub", "--cluster",
                                "m1", "--mode", "hang", "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert re.fullmatch(r"estimator-stub: cluster m1 serving on 127\.0\.0\.1:\d+\n", first), first


def test_empty_estimator_stub_says_so() -> None:
    result = cli("estimator-stub", "--cluster", "m1", "--port", "0", timeout=30)
    assert result.returncode != 0
    assert "--mode ok answers, so it needs --replicas (and optionally --sets) or --cluster-file" in result.stderr


# -- before the Lease: the API server is karmada-apiserver, with what --config and --namespace name --------------

WRITES = ("POST", "PUT", "PATCH", "DELETE")


def crds_without(tmp_path: Path, *left_out: str) -> Path:
    """devcluster's CRDs but those named: a server that lacks some of the APIs."""
    from binding_scheduler.crds import default_crds_dir

    folder = tmp_path / "crds"
    folder.mkdir()
    for crd in default_crds_dir().glob("*.yaml"):
        if not any(crd.name.startswith(name) for name in left_out):
            (folder / crd.name).write_bytes(crd.read_bytes())
    return folder


def run_against(api: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("run", "--kubeconfig", str(api.kubeconfig_path), *args, timeout=60)


def the_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "cannot start" in line]
    return line.split("cannot start: ", 1)[1]


def test_server_without_karmada_apis_is_named(tmp_path: Path) -> None:
    from binding_scheduler.devcluster import DevCluster

    with DevCluster.in_thread(crds_dir=crds_without(tmp_path, "cluster.karmada.io", "work.karmada.io")) as api:
        api.store.ensure_namespace("karmada-system")
        result = run_against(api)
        writes = [f"{e.method} {e.path}" for e in api.journal if e.method in WRITES]
    assert the_line(result) == (f"{api.url} does not serve cluster.karmada.io/v1alpha1 clusters (is --kubeconfig "
                                "karmada-apiserver's? The host cluster's kubeconfig, or ~/.kube/config, is not)")
    assert writes == []
    assert len(result.stderr.splitlines()) <= 3, result.stderr


def test_run_without_config_crd_says_crd_is_missing(
    tmp_path: Path,
) -> None:
    from binding_scheduler.devcluster import DevCluster

    with DevCluster.in_thread(crds_dir=crds_without(tmp_path, "config.binding-scheduler.io")) as api:
        api.store.ensure_namespace("karmada-system")
        result = run_against(api, "--config", "binding-scheduler")
        writes = [e for e in api.journal if e.method in WRITES]
    assert the_line(result) == (
        f"{api.url} has no SchedulerConfiguration CRD (schedulerconfigurations.config.binding-scheduler.io), so "
        "--config binding-scheduler cannot be read: install it with `kubectl apply -f crds/` against "
        "karmada-apiserver (the chart does it too), or start with --config-file")
    assert writes == []


def test_run_waits_for_silent_server_stops_at_sigterm(tmp_path: Path) -> None:
    """No answer is no verdict: an API server still starting (or away a while) is asked again, as the standby would
    wait for it; the pod must not crash-loop through an outage."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "x", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}], "users": [{"name": "x", "user": {}}],
    }))
    process = subprocess.Popen([sys.executable, "-m", "binding_scheduler.cli.main", "run", "--kubeconfig",
                                str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        waiting = []
        for line in process.stderr:
            if "before taking the lease" in line:
                waiting.append(line)
            if len(waiting) == 2:  # asked twice: long past the start's first steps
                break
        process.send_signal(signal.SIGTERM)
        _, rest = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert f"before taking the lease: cannot reach http://127.0.0.1:{port}: GET /apis/cluster.karmada.io/v1alpha1:" in (
        waiting[0])
    assert [line.rstrip().rsplit(";", 1)[1] for line in waiting] == [" asking again in 1s", " asking again in 2s"]
    assert process.returncode == 0, rest
    assert "Traceback" not in rest


def test_missing_lease_namespace_named_nothing_written() -> None:
    from binding_scheduler.devcluster import DevCluster

    with DevCluster.in_thread() as api:
        result = run_against(api, "--leader-elect-resource-namespace=nope", "--metrics-bind-address=0",
                             "--health-probe-bind-address=0")
        written = [f"{e.method} {e.path}" for e in api.journal if e.method in WRITES and 200 <= e.status < 300]
    assert the_line(result) == (f"{api.url} has no namespace nope, so the Lease cannot be created there "
                                "(--leader-elect-resource-namespace, spec.leaderElection.leaseNamespace)")
    assert written == []
