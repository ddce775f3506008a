"""A port of the original report's scenario: shutdown while a pass is in flight.

Karmada's scheduler returns from shutdown while the pass still runs and still writes. Ours: `shutdown()`
returns only after every pass has ended, a pass that had not reached its commit point saw cancellation,
and the emulator's journal shows no write after shutdown returned.
"""

from __future__ import annotations

from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.estimation.stub import EstimatorStub
from tests.shutdown.helpers import HeldPasses, binding_writes, stubs_in_thread, writes_after
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    get,
    wait_until,
    write_config,
)


def report_of(operator: OperatorThread) -> tuple[int, int, int]:
    service = operator.app.service
    assert service is not None and service.report is not None
    report = service.report
    return report.cancelled, report.drained, report.cut


def finished_at(operator: OperatorThread) -> float:
    service = operator.app.service
    assert service is not None and service.finished_at is not None
    return service.finished_at


def test_pass_in_algorithm_cancelled_nothing_written(
    api: DevCluster, config_file: Path
) -> None:
    placement = {"clusterAffinity": {"clusterNames": ["cluster1"]}}
    apply(api, cluster_doc("cluster1"), binding_doc("test-binding", placement=placement))
    held = HeldPasses()
    operator = OperatorThread(api, config_file, plugins=[held]).start()
    held.wait_entered()

    assert operator.stop() == 0

    assert held.cancelled == ["default/test-binding"]
    assert report_of(operator) == (1, 0, 0)
    assert writes_after(api, finished_at(operator)) == []
    assert binding_writes(api, "test-binding") == []
    assert (get(api, "resourcebindings", "test-binding", "default") or {}).get("status") in (None, {})


def test_estimator_sees_held_pass_cancelled(
    api: DevCluster, tmp_path: Path
) -> None:
    with stubs_in_thread(EstimatorStub("cluster1", replicas=10, mode="hang")) as (stub,):
        spec = config_spec(estimator={"enabled": True, "timeout": "60s", "endpoints": {"cluster1": stub.address}})
        apply(api, cluster_doc("cluster1"), binding_doc("web", replicas=2))
        operator = OperatorThread(api, write_config(tmp_path / "c.yaml", spec)).start()
        wait_until(lambda: stub.calls, what="the estimator call")

        assert operator.stop() == 0

        wait_until(stub.cancelled.is_set, what="the estimator to see the call cancelled")
        assert stub.outcomes() == ["cancelled"]
        assert report_of(operator) == (1, 0, 0)
        assert writes_after(api, finished_at(operator)) == []
        assert binding_writes(api, "web") == []


def test_pass_held_in_spec_write_is_drained_and_both_writes_land(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=2))
    fault = api.faults.add(method="PATCH", path=r"/resourcebindings/web$", hang=True, times=1)
    operator = OperatorThread(api, config_file).start()
    wait_until(lambda: fault.hits, what="the spec write to reach the emulator")

    operator.call(operator.app.request_stop)
    fault.release()
    assert operator.stop() == 0

    assert report_of(operator) == (0, 1, 0)
    assert binding_writes(api, "web") == [
        "PATCH /apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web 200",
        "PATCH /apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web/status 200",
    ]
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]
    assert [c["reason"] for c in body["status"]["conditions"]] == ["Success"]
    assert writes_after(api, finished_at(operator)) == []


def test_spec_write_past_deadline_is_cut_leaving_binding(
    api: DevCluster, tmp_path: Path
) -> None:
    spec = config_spec(shutdown={"drainTimeout": "200ms"})
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=2))
    fault = api.faults.add(method="PATCH", path=r"/resourcebindings/web$", hang=True, times=1)
    operator = OperatorThread(api, write_config(tmp_path / "c.yaml", spec)).start()
    wait_until(lambda: fault.hits, what="the spec write to reach the emulator")

    assert operator.stop() == 0
    fault.release()

    assert report_of(operator) == (0, 0, 1)
    assert writes_after(api, finished_at(operator)) == []
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None
    assert "clusters" not in body["spec"]
    assert not (body.get("status") or {}).get("conditions")


def test_pass_held_between_spec_and_status_writes_is_drained(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=2))
    fault = api.faults.add(method="PATCH", path=r"/resourcebindings/web/status$", hang=True, times=1)
    operator = OperatorThread(api, config_file).start()
    wait_until(lambda: fault.hits, what="the status write to reach the emulator")

    operator.call(operator.app.request_stop)
    fault.release()
    assert operator.stop() == 0

    assert report_of(operator) == (0, 1, 0)
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None
    assert body["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]
    assert [c["reason"] for c in body["status"]["conditions"]] == ["Success"]
    assert writes_after(api, finished_at(operator)) == []


def test_thirty_two_passes_in_flight_are_all_cancelled(api: DevCluster, tmp_path: Path) -> None:
    apply(api, cluster_doc("m1"), *(binding_doc(f"web-{i}") for i in range(32)))
    held = HeldPasses()
    operator = OperatorThread(api, write_config(tmp_path / "c.yaml", config_spec(workers=32)), plugins=[held]).start()
    held.wait_entered(32)

    assert operator.stop() == 0

    assert sorted(held.cancelled) == sorted(f"default/web-{i}" for i in range(32))
    assert report_of(operator) == (32, 0, 0)
    assert writes_after(api, finished_at(operator)) == []
    assert [w for i in range(32) for w in binding_writes(api, f"web-{i}")] == []
