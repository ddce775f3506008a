"""The 409 path: a conflict drops the decision, writes no condition, and requeues the key at once."""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    at_rest,
    binding_doc,
    binding_writes,
    cluster_doc,
    get,
    metric,
    patch,
    rb_path,
    running_operator,
    scheduled,
    wait_until,
)

SPEC_PATH = r"/namespaces/default/resourcebindings/web$"


def test_spec_409_retries_without_backoff(
    api: DevCluster, config_file: Path
) -> None:
    """The refused decision is not put in backoff: when its retry reaches the server, the backoff queue depth the
    runtime reported after the 409 pass is 0 (a backoff would have reported 1, and nothing reports the depth
    again before the retry)."""
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3))
    fault = api.faults.add(method="PATCH", path=SPEC_PATH, status=409, times=1)
    retry = api.faults.add(method="PATCH", path=SPEC_PATH, hang=True, times=1)  # the next spec write waits here
    with running_operator(api, config_file) as operator:
        wait_until(lambda: retry.hits, what="the decision to be sent again")
        backoff_depth = metric(operator, "binding_scheduler_queue_depth", queue="backoff")
        retry.release()
        body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
        conflicts = metric(operator, "binding_scheduler_writes_total", kind="spec", result="conflict")
        failures = metric(operator, "karmada_scheduler_queue_incoming_bindings_total", event="ScheduleAttemptFailure")
    assert (fault.hits, retry.hits) == (1, 1)
    assert backoff_depth == 0
    writes = binding_writes(api, "web")
    assert [(w.path.endswith("/status"), w.status) for w in writes] == [(False, 409), (False, 200), (True, 200)]
    assert writes[0].body == writes[1].body  # the same decision from the same read, sent again
    assert [c["reason"] for c in body["status"]["conditions"]] == ["Success"]
    assert conflicts == 1
    assert failures == 1  # counted as a failed attempt, but requeued without backoff


def test_concurrent_write_between_read_and_write_fences_decision(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3))
    held = api.faults.add(method="PATCH", path=SPEC_PATH, hang=True, times=1)
    with running_operator(api, config_file) as operator:
        wait_until(lambda: held.hits, what="the spec write to be held")
        patch(api, rb_path("web"), {"spec": {"replicas": 4}})  # lands while our write is held
        held.release()
        body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert [(w.path.endswith("/status"), w.status) for w in writes] == [(False, 409), (False, 200), (True, 200)]
    assert writes[1].body["spec"] == {"clusters": [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}]}
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 2}]
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]


def test_status_409_next_pass_finishes(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=1))
    api.faults.add(method="PATCH", path=r"/resourcebindings/web/status$", status=409, times=1)
    with running_operator(api, config_file) as operator:
        body = wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
        at_rest(api, operator)
    writes = binding_writes(api, "web")
    assert [(w.path.endswith("/status"), w.status) for w in writes] == [(False, 200), (True, 409), (True, 200)]
    assert body["status"]["schedulerObservedGeneration"] == body["metadata"]["generation"]
    final = get(api, "resourcebindings", "web", "default")
    assert final is not None and final["spec"]["clusters"] == [{"name": "m1", "replicas": 1}]
