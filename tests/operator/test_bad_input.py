"""A binding the model rejects: Scheduled=False/SchedulerError naming the field, one Warning event, retried with
backoff, and every other binding keeps flowing."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    binding_doc,
    binding_writes,
    cluster_doc,
    condition,
    config_spec,
    events,
    metric,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)

BAD_PLACEMENT = {  # the CRD takes a negative minGroups; no policy can carry one, and the model refuses it
    "spreadConstraints": [{"spreadByField": "cluster", "minGroups": -1}],
    "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
}


def test_bad_binding_errs_warns_and_backs_off(
    tmp_path: Path, api: DevCluster
) -> None:
    fast_backoff = config_spec(queue={"initialBackoff": "50ms", "maxBackoff": "100ms"})
    config = write_config(tmp_path / "config.yaml", fast_backoff)
    apply(api, cluster_doc("m1"), binding_doc("bad", replicas=1, placement=BAD_PLACEMENT),
          binding_doc("good", replicas=1))
    with running_operator(api, config) as operator:
        good = wait_until(lambda: scheduled(api, "good"), what="the good binding to be scheduled")
        bad = wait_until(lambda: scheduled(api, "bad"), what="the bad binding's condition")
        wait_until(lambda: metric(operator, "karmada_scheduler_queue_incoming_bindings_total",
                                  event="ScheduleAttemptFailure") >= 3, what="retries")
        # The bad binding backs off forever, so the operator never comes to rest; each counted retry has made its
        # writes and queued its Events before it was counted: once those are posted, all of them are in.
        service = operator.app.service
        assert service is not None
        wait_until(lambda: operator.call(lambda: service.background_events.pending == 0),
                   what="the retries' Events to be posted")
    assert condition(good)["reason"] == "Success"  # type: ignore[index]
    found = condition(bad)
    assert found is not None
    assert (found["status"], found["reason"]) == ("False", "SchedulerError")
    assert found["message"] == "invalid binding: spec.placement.spreadConstraints[0].minGroups: -1 is less than 0"
    warnings = [e for e in events(api, name="bad") if e["type"] == "Warning"]
    assert len(warnings) == 1
    assert (warnings[0]["reason"], warnings[0]["message"]) == ("ScheduleBindingFailed", found["message"])
    writes = binding_writes(api, "bad")
    assert [w.path.endswith("/status") for w in writes] == [True]  # the retries write nothing new
    assert "clusters" not in bad["spec"]
