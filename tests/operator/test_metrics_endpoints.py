"""/metrics, /healthz and /readyz over real HTTP once a pass has run."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fetch(port: int, path: str) -> tuple[int, str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
        return answer.status, answer.read().decode()


def test_metrics_and_health_are_served_after_pass(tmp_path: Path, api: DevCluster) -> None:
    metrics_port, health_port = free_port(), free_port()
    config = write_config(tmp_path / "config.yaml", config_spec(metrics={"port": metrics_port,
                                                                          "healthPort": health_port}))
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    with running_operator(api, config):
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")

        def attempts_exported() -> str | None:
            text = fetch(metrics_port, "/metrics")[1]
            return text if 'schedule_type="ReconcileSchedule"} 1.0' in text else None

        text = wait_until(attempts_exported, what="the attempt in /metrics")
        healthz = fetch(health_port, "/healthz")
        readyz = fetch(health_port, "/readyz")
    assert 'karmada_scheduler_schedule_attempts_total{result="scheduled",schedule_type="ReconcileSchedule"} 1.0' in text
    assert 'karmada_scheduler_queue_incoming_bindings_total{event="BindingAdd"} 1.0' in text
    assert "karmada_scheduler_e2e_scheduling_duration_seconds_bucket" in text
    assert "binding_scheduler_leader 1.0" in text
    for step in ("Filter", "Score", "Select", "AssignReplicas"):
        assert f'karmada_scheduler_scheduling_algorithm_duration_seconds_count{{schedule_step="{step}"}} 1.0' in text
    assert 'karmada_scheduler_framework_extension_point_duration_seconds_count{extension_point="Filter",' \
        'result="Success"} 1.0' in text
    assert 'karmada_scheduler_plugin_execution_duration_seconds_count{extension_point="Filter",' \
        'plugin="APIEnablement",result="Success"} 1.0' in text
    assert "_created" not in text
    assert f'rest_client_requests_total{{code="200",host="127.0.0.1:{api.port}",method="PATCH"}}' in text
    assert "\nprocess_resident_memory_bytes " in text
    assert healthz == (200, "ok")
    assert readyz == (200, "ok")


def test_standby_is_ready_and_not_leading(tmp_path: Path, api: DevCluster) -> None:
    from tests.shutdown.helpers import lease_held_elsewhere

    metrics_port, health_port = free_port(), free_port()
    config = write_config(tmp_path / "config.yaml", config_spec(metrics={"port": metrics_port,
                                                                          "healthPort": health_port}))
    lease_held_elsewhere(api)
    with running_operator(api, config, identity="standby", wait_leading=False) as standby:
        wait_until(lambda: standby.app.service is not None and standby.app.service.probe_ready,
                   what="the standby to campaign")
        readyz = fetch(health_port, "/readyz")
        healthz = fetch(health_port, "/healthz")
        leader = fetch(metrics_port, "/metrics")[1]
    assert readyz == (200, "ok")
    assert healthz == (200, "ok")
    assert "binding_scheduler_leader 0.0" in leader


def test_stopping_instance_fails_readiness_probe(tmp_path: Path, api: DevCluster) -> None:
    config = write_config(tmp_path / "config.yaml", config_spec(metrics={"port": 0, "healthPort": free_port()}))
    operator = OperatorThread(api, config).start()
    service = operator.app.service
    assert service is not None and service.probe_ready
    operator.call(service.request_stop)

    assert not service.probe_ready
    assert operator.stop() == 0


def test_failing_watch_unready_until_relist(tmp_path: Path, api: DevCluster) -> None:
    health_port = free_port()
    config = write_config(tmp_path / "config.yaml", config_spec(metrics={"port": 0, "healthPort": health_port}))
    with running_operator(api, config):
        assert fetch(health_port, "/readyz") == (200, "ok")
        refused = api.faults.add(method="GET", path=r"/clusters$", status=403)
        cut = api.faults.add(method="GET", path=r"/clusters$", end_watch=True)
        wait_until(lambda: not ready(health_port), what="readiness to fail with the watch")
        refused.remove()
        cut.remove()
        wait_until(lambda: ready(health_port), timeout=40, what="readiness once the clusters list again")


def ready(port: int) -> bool:
    try:
        return fetch(port, "/readyz") == (200, "ok")
    except urllib.error.HTTPError as error:
        assert (error.code, error.read()) == (503, b"not ready")
        return False
