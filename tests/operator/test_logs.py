"""What the operator says in its log: one line per decision (INFO when scheduled, WARNING when the fleet cannot take
it), each configuration change once."""

from __future__ import annotations

import logging
import re

import pytest

from binding_scheduler.devcluster import DevCluster
from tests.operator.test_config import create_config, valid_condition
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    config_path,
    config_spec,
    patch,
    running_operator,
    scheduled,
    wait_until,
)

PASSES = "binding_scheduler.scheduling.passes.run"
TAINT = [{"key": "maintenance", "effect": "NoSchedule"}]


def lines(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


def test_each_decision_is_one_line_at_level_of_who_acts(
    api: DevCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="binding_scheduler")
    apply(api, cluster_doc("m1"), cluster_doc("m2", taints=TAINT), binding_doc("web", replicas=3),
          binding_doc("stuck", placement={"clusterAffinity": {"clusterNames": ["m2"]}}))
    with running_operator(api):
        wait_until(lambda: scheduled(api, "web") and scheduled(api, "stuck"), what="both decisions")
    records = sorted((r.getMessage(), r.levelno) for r in caplog.records
                     if r.name == PASSES and r.getMessage().startswith("binding default/"))
    assert [level for _, level in records] == [logging.WARNING, logging.INFO]
    stuck, web = (line for line, _ in records)
    assert stuck.startswith("binding default/stuck (ResourceBinding): not scheduled: NoClusterFit: 0/2 clusters are "
                            "available:")
    assert re.fullmatch(r".*untolerated taint \{maintenance:NoSchedule\}\. \(\w+Schedule, \d+ ms, attempt 1\)", stuck)
    assert re.fullmatch(r"binding default/web \(ResourceBinding\): scheduled to m1:3 \(\w+Schedule, \d+ ms, "
                        r"attempt 1\)", web)


def test_configuration_change_is_logged_once_with_what_changed(
    api: DevCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="binding_scheduler")
    create_config(api, config_spec())
    with running_operator(api, config_name="sched"):
        patch(api, config_path("sched"), {"spec": {"workers": 3, "schedulerName": "other"}})
        wait_until(lambda: valid_condition(api, 2), what="the change to be applied")
        patch(api, config_path("sched"), {"spec": {"queue": {"initialBackoff": "20s"}}})
        wait_until(lambda: valid_condition(api, 3), what="the invalid change to be reported")
    said = lines(caplog, "binding_scheduler.operator.app")
    assert said.count("SchedulerConfiguration karmada-system/sched generation 2 applied: spec.workers") == 1
    assert said.count("SchedulerConfiguration karmada-system/sched generation 2 changes spec.schedulerName, which "
                      "takes effect at restart") == 1
    invalid = [line for line in said if "generation 3 is invalid" in line]
    assert invalid == ["SchedulerConfiguration karmada-system/sched generation 3 is invalid, keeping the last valid "
                       "one: spec.queue.initialBackoff: '20s' is greater than maxBackoff ('10s')"]
