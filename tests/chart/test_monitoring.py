"""What operators look at: the chart's PrometheusRule alerts and Grafana dashboard, off by default; their every
expression parses with Prometheus's own parsers (tools/promcheck, as `promtool check rules` does) and names only
metrics the scheduler exports."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from binding_scheduler.estimation.failures import failure_counter
from binding_scheduler.scheduling.metrics import SchedulerMetrics
from tests.chart.helm import CHART, find, one, render
from tests.realcluster.controlplane import ROOT, go_available

ALERTS = CHART / "files" / "alerts.yaml"
DASHBOARD = CHART / "files" / "dashboard.json"
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$namespace": "karmada-system"}
EXPOSED_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",),
                    "info": ("_info",), "summary": ("_sum", "_count")}


@functools.cache
def promcheck() -> Path:
    if not go_available():
        pytest.skip("promcheck: Go is not installed, so Prometheus's parsers cannot be built")
    result = subprocess.run(["bash", str(ROOT / "tools" / "promcheck" / "build.sh")], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def check(rules: str = "", exprs: list[str] | None = None) -> dict[str, Any]:
    result = subprocess.run([str(promcheck())], input=json.dumps({"rules": rules, "exprs": exprs or []}),
                            capture_output=True, text=True, check=False, timeout=60)
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def exported_metrics() -> set[str]:
    """Every series name the scheduler can expose: its own metrics and the estimator's failure counter."""
    registry = CollectorRegistry()
    SchedulerMetrics(registry)
    failure_counter(registry)
    return {family.name + suffix for family in registry.collect() for suffix in EXPOSED_SUFFIXES[family.type]}


def dashboard_exprs(dashboard: dict[str, Any]) -> list[str]:
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", ())]
    exprs += [v["query"].removeprefix("label_values(").split(",")[0] for v in dashboard["templating"]["list"]
              if v["type"] == "query"]
    for variable, value in GRAFANA_VARIABLES.items():
        exprs = [expr.replace(variable, value) for expr in exprs]
    return exprs


def test_alerts_and_dashboard_are_off_by_default() -> None:
    documents = render()
    assert find(documents, "PrometheusRule") == []
    assert [c for c in find(documents, "ConfigMap") if c["metadata"]["name"].endswith("-dashboard")] == []


def test_the_prometheus_rule_holds_the_alerts_file() -> None:
    documents = render({"metrics.prometheusRule.enabled": True, "metrics.prometheusRule.labels": {"release": "kp"}})
    rule = one(documents, "PrometheusRule")
    assert rule["spec"] == yaml.safe_load(ALERTS.read_text())
    assert rule["metadata"]["labels"]["release"] == "kp"
    assert {r["alert"] for group in rule["spec"]["groups"] for r in group["rules"]} == {
        "BindingSchedulerNoLeader", "BindingSchedulerScheduleErrorsRising", "BindingSchedulerEstimatorFailures",
        "BindingSchedulerQueueGrowing", "BindingSchedulerShutdownCutPasses"}


def test_the_dashboard_configmap_holds_the_dashboard_for_grafanas_sidecar() -> None:
    documents = render({"metrics.dashboard.enabled": True}, namespace="sched")
    (configmap,) = [c for c in find(documents, "ConfigMap") if c["metadata"]["name"].endswith("-dashboard")]
    assert configmap["metadata"]["namespace"] == "sched"
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(configmap["data"]["binding-scheduler.json"]) == json.loads(DASHBOARD.read_text())


def test_the_alerts_parse_as_promtool_parses_a_rule_file() -> None:
    assert check(rules=ALERTS.read_text())["errors"] == []


def test_every_dashboard_query_parses_as_promql() -> None:
    assert check(exprs=dashboard_exprs(json.loads(DASHBOARD.read_text())))["errors"] == []


def test_the_alerts_and_the_dashboard_name_only_metrics_the_scheduler_exports() -> None:
    named = check(rules=ALERTS.read_text(), exprs=dashboard_exprs(json.loads(DASHBOARD.read_text())))["metrics"]
    assert named and set(named) <= exported_metrics(), set(named) - exported_metrics()


def test_the_check_catches_a_metric_that_does_not_exist_and_a_broken_rule() -> None:
    answer = check(rules="groups:\n- name: g\n  rules:\n  - alert: A\n    expr: sum(\n",
                   exprs=["rate(binding_scheduler_no_such_metric_total[5m])"])
    assert answer["errors"][0].startswith('rules: 5:11: group "g", rule 1, "A": could not parse expression')
    assert "binding_scheduler_no_such_metric_total" not in exported_metrics()
    assert answer["metrics"] == ["binding_scheduler_no_such_metric_total"]
