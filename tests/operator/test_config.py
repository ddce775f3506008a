"""`--config NAME`: a valid change applies to the next pass, an invalid one is reported and ignored, and a change
that needs a restart says so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from binding_scheduler.devcluster import DevCluster
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
    request,
    scheduled,
    wait_until,
)

TAINT = [{"key": "maintenance", "effect": "NoSchedule"}]


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


def start(api: DevCluster) -> OperatorThread:
    return OperatorThread(api, config_name="sched").start()


def test_named_configuration_is_used_and_reported_valid(api: DevCluster) -> None:
    create_config(api, config_spec(workers=2))
    apply(api, cluster_doc("m1"), binding_doc("web"))
    operator = start(api)
    try:
        wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        found = wait_until(lambda: valid_condition(api, 1), what="the Valid condition")
        workers = operator.app.service.config.workers  # type: ignore[union-attr]
    finally:
        assert operator.stop() == 0
    assert (found["status"], found["reason"], found["message"]) == ("True", "Valid", "applied")
    assert workers == 2


def test_plugin_change_applies_to_next_pass(api: DevCluster) -> None:
    create_config(api, config_spec())
    apply(api, cluster_doc("m1", taints=TAINT), binding_doc("web", replicas=1))
    operator = start(api)
    try:
        body = wait_until(lambda: scheduled(api, "web"), what="web to get a condition")
        assert condition(body)["reason"] == "NoClusterFit"  # type: ignore[index]
        patch(api, config_path("sched"), {"spec": {"plugins": ["*", "-TaintToleration"]}})
        wait_until(lambda: valid_condition(api, 2), what="the new configuration to be applied")
        patch(api, rb_path("web"), {"spec": {"replicas": 2}})
        wait_until(lambda: (get(api, "resourcebindings", "web", "default") or {})["spec"].get("clusters")
                   == [{"name": "m1", "replicas": 2}], what="web to land on the tainted cluster")
    finally:
        assert operator.stop() == 0
    final = get(api, "resourcebindings", "web", "default")
    assert final is not None and condition(final)["reason"] == "Success"  # type: ignore[index]


def test_invalid_spec_reported_last_valid_stays(api: DevCluster) -> None:
    create_config(api, config_spec(workers=3))
    apply(api, cluster_doc("m1"))
    operator = start(api)
    try:
        wait_until(lambda: valid_condition(api, 1), what="the first Valid condition")
        patch(api, config_path("sched"), {"spec": {"plugins": ["-"]}})  # the schema admits it, the model not
        found = wait_until(lambda: valid_condition(api, 2), what="the Invalid condition")
        apply_binding_later(api)
        wait_until(lambda: scheduled(api, "late"), what="a new binding to be scheduled under the old config")
        workers = operator.app.service.config.workers  # type: ignore[union-attr]
        valid_metric = operator.app.service.metrics.registry.get_sample_value(  # type: ignore[union-attr]
            "binding_scheduler_config_valid")
    finally:
        assert operator.stop() == 0
    assert found["status"] == "False"
    assert "spec.plugins[0]" in found["message"]
    assert found["message"].endswith("the last valid configuration stays in force")
    assert workers == 3
    assert valid_metric == 0


def test_invalid_spec_reports_every_wrong_field_in_condition(api: DevCluster) -> None:
    create_config(api, config_spec())
    operator = start(api)
    try:
        wait_until(lambda: valid_condition(api, 1), what="the first Valid condition")
        patch(api, config_path("sched"), {"spec": {"plugins": ["-"], "shutdown": {"drainTimeout": "soon"}}})
        found = wait_until(lambda: valid_condition(api, 2), what="the Invalid condition")
    finally:
        assert operator.stop() == 0
    assert (found["status"], found["reason"], found["message"]) == (
        "False", "InvalidSpec", "spec.plugins[0]: '-' is not a plugin name; spec.shutdown.drainTimeout: 'soon' is "
        "not a duration (examples: 3s, 500ms, 1m30s); the last valid configuration stays in force")


def apply_binding_later(api: DevCluster) -> None:
    doc = binding_doc("late", replicas=1)
    status, answer = request(api, "POST", "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings", doc)
    assert status == 201, answer


def test_scheduler_name_change_needs_restart_and_is_not_applied(api: DevCluster) -> None:
    create_config(api, config_spec())
    apply(api, cluster_doc("m1"))
    operator = start(api)
    try:
        wait_until(lambda: valid_condition(api, 1), what="the first Valid condition")
        patch(api, config_path("sched"), {"spec": {"schedulerName": "other-scheduler"}})
        found = wait_until(lambda: valid_condition(api, 2), what="the RestartRequired condition")
        apply_binding_later(api)
        wait_until(lambda: scheduled(api, "late"), what="a default-scheduler binding to be scheduled still")
    finally:
        assert operator.stop() == 0
    assert (found["status"], found["reason"]) == ("True", "RestartRequired")
    assert "spec.schedulerName" in found["message"]


def test_invalid_config_at_start_stops_start(
    api: DevCluster, caplog: Any
) -> None:
    create_config(api, config_spec(schedulerName="mine", shutdown={"drainTimeout": "soon"}))
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    operator = OperatorThread(api, config_name="sched").start(wait_leading=False)
    wait_until(lambda: not operator.alive, timeout=30, what="the start to fail")
    assert operator.exit_code == 1
    found = valid_condition(api, 1)
    assert found is not None and found["status"] == "False"
    assert found["message"].startswith("spec.shutdown.drainTimeout")
    assert found["message"].endswith("the scheduler did not start (no valid configuration yet)")
    said = "cannot start: SchedulerConfiguration karmada-system/sched is invalid: spec.shutdown.drainTimeout"
    assert said in caplog.text
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None and "clusters" not in body["spec"]  # nothing ran on the defaults
    assert get(api, "leases", "karmada-scheduler", "karmada-system") is None


def test_missing_configuration_at_start_stops_start(api: DevCluster, caplog: Any) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    operator = OperatorThread(api, config_name="sched").start(wait_leading=False)
    wait_until(lambda: not operator.alive, timeout=30, what="the start to fail")
    assert operator.exit_code == 1
    assert "cannot start: SchedulerConfiguration karmada-system/sched (--config) does not exist" in caplog.text
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None and "clusters" not in body["spec"]


def test_missing_tls_file_at_start_stops_start(
    api: DevCluster, caplog: Any, tmp_path: Any
) -> None:
    missing = tmp_path / "ca.crt"
    create_config(api, config_spec(estimator={"enabled": True, "tls": {"caFile": str(missing)}}))
    operator = OperatorThread(api, config_name="sched").start(wait_leading=False)
    wait_until(lambda: not operator.alive, timeout=30, what="the start to fail")
    assert operator.exit_code == 1
    assert f"cannot start: spec.estimator.tls.caFile: {missing}: No such file or directory" in caplog.text
    assert "Traceback" not in caplog.text


def test_unknown_plugin_at_start_stops_start(
    api: DevCluster, caplog: Any
) -> None:
    create_config(api, config_spec(plugins=["*", "-TaintTolerations"]))
    operator = OperatorThread(api, config_name="sched").start(wait_leading=False)
    wait_until(lambda: not operator.alive, timeout=30, what="the start to fail")
    assert operator.exit_code == 1
    assert "cannot start: spec.plugins: names 'TaintTolerations', which is no plugin (known: " in caplog.text
    assert "Traceback" not in caplog.text


def test_unknown_plugin_change_keeps_last_valid_config(api: DevCluster) -> None:
    create_config(api, config_spec(workers=3))
    operator = start(api)
    try:
        wait_until(lambda: valid_condition(api, 1), what="the first Valid condition")
        patch(api, config_path("sched"), {"spec": {"plugins": ["*", "-TaintTolerations"]}})
        found = wait_until(lambda: valid_condition(api, 2), what="the Invalid condition")
        running = operator.app.service.scheduler.settings.plugins.names  # type: ignore[union-attr]
    finally:
        assert operator.stop() == 0
    assert found["status"] == "False"
    assert found["message"].startswith("spec.plugins: names 'TaintTolerations', which is no plugin (known: ")
    assert "TaintToleration" in running


def test_missing_tls_file_change_keeps_last_valid(
    api: DevCluster, tmp_path: Any
) -> None:
    create_config(api, config_spec(workers=3))
    apply(api, cluster_doc("m1"))
    operator = start(api)
    try:
        wait_until(lambda: valid_condition(api, 1), what="the first Valid condition")
        missing = tmp_path / "ca.crt"
        patch(api, config_path("sched"), {"spec": {"estimator": {"enabled": True, "tls": {"caFile": str(missing)}}}})
        found = wait_until(lambda: valid_condition(api, 2), what="the Invalid condition")
        apply_binding_later(api)
        wait_until(lambda: scheduled(api, "late"), what="a new binding to be scheduled under the old config")
        enabled = operator.app.service.config.estimator.enabled  # type: ignore[union-attr]
    finally:
        assert operator.stop() == 0
    assert found["status"] == "False"
    assert found["message"].startswith(f"spec.estimator.tls.caFile: {missing}: No such file or directory")
    assert found["message"].endswith("the last valid configuration stays in force")
    assert enabled is False
