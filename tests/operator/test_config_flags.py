"""Karmada's flags given to `run` win over the watched `--config` object, every version of it; the bind-address
flags decide where the HTTP servers listen."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Mapping
from typing import Any

from binding_scheduler.cli import goflags
from binding_scheduler.cli.karmada_flags import karmada_flags, read
from binding_scheduler.devcluster import DevCluster
from binding_scheduler.model.overrides import SpecOverrides
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    cluster_doc,
    condition,
    config_path,
    config_spec,
    get,
    patch,
    rb_path,
    running_operator,
    scheduled,
    wait_until,
)

TAINT = [{"key": "maintenance", "effect": "NoSchedule"}]


def flags(*argv: str) -> SpecOverrides:
    return read(goflags.parse(argv, karmada_flags())).overrides


def create_config(api: DevCluster, spec: Mapping[str, Any]) -> None:
    api.store.create("schedulerconfigurations", {
        "apiVersion": "config.binding-scheduler.io/v1alpha1",
        "kind": "SchedulerConfiguration",
        "metadata": {"name": "sched", "namespace": "karmada-system"},
        "spec": dict(spec),
    })


def valid_condition(api: DevCluster, generation: int) -> dict[str, Any] | None:
    body = get(api, "schedulerconfigurations", "sched", "karmada-system")
    found = condition(body, "Valid") if body is not None else None
    return found if found is not None and found.get("observedGeneration") == generation else None


def placed(api: DevCluster, name: str) -> list[Any] | None:
    body = get(api, "resourcebindings", name, "default") or {}
    return (body.get("spec") or {}).get("clusters") or None


def test_flags_reapplied_to_new_versions(api: DevCluster) -> None:
    create_config(api, config_spec(workers=1))
    apply(api, cluster_doc("m1", taints=TAINT), binding_doc("web", replicas=1))
    with running_operator(api, config_name="sched", overrides=flags("--plugins=*,-TaintToleration")) as operator:
        assert wait_until(lambda: placed(api, "web"), what="web on the tainted cluster") == [
            {"name": "m1", "replicas": 1}]
        patch(api, config_path("sched"), {"spec": {"workers": 3, "plugins": ["*"]}})
        found = wait_until(lambda: valid_condition(api, 2), what="the new version to be applied")
        service = operator.app.service
        assert service is not None
        workers, plugins = service.config.workers, service.config.plugins
        patch(api, rb_path("web"), {"spec": {"replicas": 2}})
        assert wait_until(lambda: placed(api, "web") == [{"name": "m1", "replicas": 2}] or None,
                          what="web to stay on the tainted cluster")
    assert (workers, plugins) == (3, ("*", "-TaintToleration"))
    assert (found["status"], found["reason"], found["message"]) == (
        "True", "Valid", "applied (command-line flags set spec.plugins, over the object)")


def test_object_only_field_flags_no_restart(api: DevCluster) -> None:
    create_config(api, config_spec())
    with running_operator(api, config_name="sched", overrides=flags("--kube-api-qps=100")) as operator:
        patch(api, config_path("sched"), {"spec": {"kubeAPI": {"qps": 5}}})
        found = wait_until(lambda: valid_condition(api, 2), what="the new version to be applied")
        qps = operator.app.service.config.kube_api.qps  # type: ignore[union-attr]
    assert (qps, found["reason"]) == (100.0, "Valid")


def test_version_invalid_with_flags_is_reported_naming_flag(api: DevCluster) -> None:
    create_config(api, config_spec())  # leaseDuration 3s, retryPeriod 500ms
    operator = OperatorThread(api, config_name="sched", overrides=flags("--leader-elect-renew-deadline=2500ms"))
    operator.start()
    try:
        assert operator.app.service is not None and operator.app.service.config.leader_election.renew_deadline == 2.5
        patch(api, config_path("sched"), {"spec": {"leaderElection": {"leaseDuration": "2s"}}})
        found = wait_until(lambda: valid_condition(api, 2), what="the invalid version to be reported")
        lease = operator.app.service.config.leader_election.lease_duration
    finally:
        assert operator.stop() == 0
    assert (found["status"], found["reason"], found["message"]) == (
        "False", "InvalidSpec",
        "--leader-elect-renew-deadline: '2500ms' must be less than leaseDuration ('2s'); the last valid "
        "configuration stays in force (command-line flags set spec.leaderElection.renewDeadline, over the object)")
    assert lease == 3.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fetch(host: str, port: int | None, path: str) -> tuple[int, str]:
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=5) as answer:
        return answer.status, answer.read().decode()


def refused(host: str, port: int | None) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            return sock.connect_ex((host, port or 0)) != 0
    except OSError:
        return True  # no IPv6 here: nothing listens there either


def test_bind_address_flags_decide_where_servers_listen(api: DevCluster) -> None:
    create_config(api, config_spec())  # its metrics section has both servers off
    metrics, health = free_port(), free_port()
    overrides = flags(f"--metrics-bind-address=127.0.0.1:{metrics}", f"--health-probe-bind-address=127.0.0.1:{health}")
    with running_operator(api, config_name="sched", overrides=overrides):
        metrics_text = fetch("127.0.0.1", metrics, "/metrics")[1]
        healthz = fetch("127.0.0.1", health, "/healthz")
        elsewhere = refused("::1", metrics), refused("::1", health)
    assert "# TYPE karmada_scheduler_schedule_attempts_total counter" in metrics_text
    assert healthz == (200, "ok")
    assert elsewhere == (True, True)


def test_bind_address_of_0_turns_that_server_off(api: DevCluster) -> None:
    create_config(api, config_spec(metrics={"port": free_port(), "healthPort": free_port()}))
    with running_operator(api, config_name="sched", overrides=flags("--metrics-bind-address=0")) as operator:
        health = operator.app.service.health  # type: ignore[union-attr]
        ports = health.metrics_port, health.health_port
    assert ports[0] is None and ports[1] is not None


def test_run_with_karmada_flags_schedules_against_devcluster(api: DevCluster) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", scheduler_name="x"), binding_doc("not-ours"))
    health = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "binding_scheduler.cli.main", "run", "--leader-elect=true", "--scheduler-name=x",
         "--kube-api-qps=100", "--kubeconfig", str(api.kubeconfig_path), "--metrics-bind-address=0",
         f"--health-probe-bind-address=127.0.0.1:{health}", "--rate-limiter-qps=10"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        body = wait_until(lambda: scheduled(api, "web"), timeout=60, what="web to be scheduled")
        readyz = wait_until(lambda: fetch("127.0.0.1", health, "/readyz"), what="/readyz")
        lease = get(api, "leases", "karmada-scheduler", "karmada-system")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert condition(body)["reason"] == "Success"  # type: ignore[index]
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 1}]
    assert condition(get(api, "resourcebindings", "not-ours", "default") or {}) is None
    assert readyz == (200, "ok")
    assert lease is not None and lease["spec"]["holderIdentity"]
    assert "command-line flags set spec.leaderElection.enabled, spec.schedulerName, spec.kubeAPI.qps, " in stderr
    assert "--rate-limiter-qps is ignored" in stderr
