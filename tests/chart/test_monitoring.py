"""What operators look at: the chart's PrometheusRule alerts and Grafana dashboard, off by default; their every
expression parses with Prometheus's own parsers (tools/promcheck, as `promtool check rules` does) and names only
metrics the scheduler exports."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from testsupport.chart.helm import CHART, find, one, render
from testsupport.realcluster.controlplane import ROOT, go_available

ALERTS = CHART / "files" / "alerts.yaml"
DASHBOARD = CHART / "files" / "dashboard.json"
DOCS = ROOT / "docs" / "metrics.md"
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


def exported_families() -> dict[str, str]:
    """Every series name the scheduler can expose -> its family's name as docs/metrics.md writes it (a counter
    with `_total`, a histogram without its suffixes)."""
    registry = CollectorRegistry()
    SchedulerMetrics(registry)
    return {family.name + suffix: family.name + ("_total" if family.type == "counter" else "")
            for family in registry.collect() for suffix in EXPOSED_SUFFIXES[family.type]}


def exported_metrics() -> set[str]:
    return set(exported_families())


def documented_for_the_chart() -> set[str]:
    """The metrics of the table of docs/metrics.md's section on the chart's alerts and dashboard."""
    section = DOCS.read_text(encoding="utf-8").split("## What the chart's alerts and dashboard read", 1)[1]
    section = section.split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_:][a-z0-9_:]*)`", section, flags=re.MULTILINE))


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


def test_prometheus_rule_holds_alerts_file() -> None:
    documents = render({"metrics.prometheusRule.enabled": True, "metrics.prometheusRule.labels": {"release": "kp"}})
    rule = one(documents, "PrometheusRule")
    assert rule["spec"] == yaml.safe_load(ALERTS.read_text())
    assert rule["metadata"]["labels"]["release"] == "kp"
    assert {r["alert"] for group in rule["spec"]["groups"] for r in group["rules"]} == {
        "BindingSchedulerNoLeader", "BindingSchedulerScheduleErrorsRising", "BindingSchedulerEstimatorFailures",
        "BindingSchedulerQueueGrowing", "BindingSchedulerShutdownCutPasses"}


def test_dashboard_configmap_holds_dashboard_for_grafanas_sidecar() -> None:
    documents = render({"metrics.dashboard.enabled": True}, namespace="sched")
    (configmap,) = [c for c in find(documents, "ConfigMap") if c["metadata"]["name"].endswith("-dashboard")]
    assert configmap["metadata"]["namespace"] == "sched"
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(configmap["data"]["binding-scheduler.json"]) == json.loads(DASHBOARD.read_text())


def test_alerts_parse_as_promtool_parses_rule_file() -> None:
    assert check(rules=ALERTS.read_text())["errors"] == []


def test_every_dashboard_query_parses_as_promql() -> None:
    assert check(exprs=dashboard_exprs(json.loads(DASHBOARD.read_text())))["errors"] == []


def test_alerts_name_only_exported_metrics() -> None:
    named = check(rules=ALERTS.read_text(), exprs=dashboard_exprs(json.loads(DASHBOARD.read_text())))["metrics"]
    assert named and set(named) <= exported_metrics(), set(named) - exported_metrics()


def test_metrics_md_lists_metrics_alerts_read() -> None:
    named = check(rules=ALERTS.read_text(), exprs=dashboard_exprs(json.loads(DASHBOARD.read_text())))["metrics"]
    families = exported_families()
    assert {families.get(series, series) for series in named} == documented_for_the_chart()


def test_check_catches_metric_that_does_not_exist_and_broken_rule() -> None:
    answer = check(rules="groups:\n- name: g\n  rules:\n  - alert: A\n    expr: sum(\n",
                   exprs=["rate(binding_scheduler_no_such_metric_total[5m])"])
    assert answer["errors"][0].startswith('rules: 5:11: group "g", rule 1, "A": could not parse expression')
    assert "binding_scheduler_no_such_metric_total" not in exported_metrics()
    assert answer["metrics"] == ["binding_scheduler_no_such_metric_total"]
