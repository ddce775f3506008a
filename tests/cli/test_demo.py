"""`binding-scheduler demo`: the product on its embedded default, end to end, with the rolling restart of
karmada-io/karmada #7819 (a pass held in a slow estimator when the first instance is stopped)."""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from binding_scheduler.cli.demo import DemoRun, play
from binding_scheduler.cli.demo_restart import FIRST, SCALER, SECOND, Restart
from binding_scheduler.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = "/apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings/checkout-deployment"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/karmada-scheduler"
OLD_RESULT = "Result: {aws-use1-a:6, azure-weu:2, gcp-usw1:4}"
LEGACY_WHY = (
    "0/9 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}, "
    "1 cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}, 7 cluster(s) did not match the placement "
    "cluster affinity constraint."
)
ANALYTICS_WHY = "failed to select clusters: just support cluster and region spread constraint"
FIRST_REPORT = (
    f"- {FIRST} stopped in ",
    " ms: 1 pass was cancelled before it wrote anything, 0 were finishing a write, 0 were cut at the deadline; "
    "the Lease was released; nothing was written after the stop.",
)


def test_demo_explains_failing_examples_and_stop(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["demo", "--workers", "2"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, captured.err
    lines = out.splitlines()
    rows = [line.split() for line in lines]
    assert ["shop/checkout-deployment", "True", "Success", "aws-use1-a:6,azure-weu:2,gcp-usw1:4"] in rows
    assert ["platform-viewer-clusterrole", "True", "Success",
            "aws-apse1,aws-use1-a,aws-use1-b,gcp-euw4,gcp-usw1,staging-use1"] in rows
    legacy = rows.index(["shop/legacy-api-deployment", "False", "NoClusterFit", "-"])
    assert lines[legacy + 1] == f"    why: {LEGACY_WHY}"
    analytics = rows.index(["shop/analytics-deployment", "False", "SchedulerError", "-"])
    assert lines[analytics + 1] == f"    why: {ANALYTICS_WHY}"
    assert sum(line.startswith("    why: ") for line in lines) == 2  # the scheduled ones have no reason line
    # The shutdown report, once, in plain words: not again as the operator's log line.
    reports = [line for line in lines if line.startswith(FIRST_REPORT[0]) and line.endswith(FIRST_REPORT[1])]
    assert len(reports) == 1, out
    assert sum(f"{FIRST} stopped in" in line for line in (out + captured.err).splitlines()) == 1
    assert "shutdown complete" not in out + captured.err
    assert "cancelled before their commit point" not in out + captured.err


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[DemoRun, str]]:
    """One run of the demo on the bundled examples, with what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        run = play(build_parser().parse_args(["demo", "--workers", "2"]))
    yield run, printed.getvalue()


def restart_of(run: DemoRun) -> Restart:
    assert run.code == 0
    assert run.restart is not None, "the demo acted no restart"
    return run.restart


def test_pass_held_in_slow_estimator_is_cancelled_by_stop(demo: tuple[DemoRun, str]) -> None:
    run, _ = demo
    restart = restart_of(run)
    assert (restart.plan.key, restart.plan.cluster, restart.plan.replicas) == ("shop/checkout-deployment",
                                                                               "aws-use1-a", 12)
    assert restart.held, "no pass of the first instance waited on the held estimator when it was stopped"
    report = run.first.report
    assert report is not None
    assert (report.cancelled, report.drained, report.cut, report.lease_released) == (1, 0, 0, True)
    # The cancellation reached the estimator: the call it held ended cancelled, never answered.
    assert [call.outcome for call in restart.hold.calls] == ["cancelled"]


def test_first_instance_writes_nothing_after_stop(demo: tuple[DemoRun, str]) -> None:
    run, _ = demo
    restart_of(run)
    journal = run.api.journal
    finished = run.first.finished_at
    assert finished is not None
    first = [e for e in journal.writes() if f"({FIRST})" in e.user_agent]
    assert len(first) > 10  # it did schedule the examples (the filter finds its writes)
    assert [e for e in first if e.time > finished] == []
    (scale,) = [e for e in journal.writes() if e.user_agent == SCALER]
    assert scale.path == CHECKOUT and scale.body == {"spec": {"replicas": 14}}
    # After the scale-up the first instance wrote to no binding: only its Lease (handed back) and the Events its
    # earlier passes had queued (posted beside the passes, flushed by the stop). None is about a decision for 14.
    after = {e.path for e in first if e.time > scale.time}
    assert LEASE in after and after <= {LEASE, "/api/v1/namespaces/shop/events", "/api/v1/namespaces/default/events"}
    about_checkout = [e.body["message"] for e in first if e.path.endswith("/events") and "checkout" in str(e.body)]
    assert about_checkout and all(OLD_RESULT in message for message in about_checkout)
    assert [e.path for e in first if e.path.startswith(CHECKOUT)]  # its earlier decision, before the scale


def test_second_instance_places_cancelled_binding(
    demo: tuple[DemoRun, str],
) -> None:
    run, _ = demo
    restart = restart_of(run)
    assert restart.second is not None and restart.placed
    assert restart.lease_holder == SECOND
    body = run.api.store.get("resourcebindings", "checkout-deployment", "shop")
    assert sum(c["replicas"] for c in body["spec"]["clusters"]) == 14
    assert {c["name"] for c in body["spec"]["clusters"]} == {"aws-use1-a", "azure-weu", "gcp-usw1"}
    assert body["status"]["schedulerObservedGeneration"] >= restart.generation
    (scheduled,) = [c for c in body["status"]["conditions"] if c["type"] == "Scheduled"]
    assert (scheduled["status"], scheduled["reason"]) == ("True", "Success")
    (scale,) = [e for e in run.api.journal.writes() if e.user_agent == SCALER]
    after = [e for e in run.api.journal.writes() if e.time > scale.time and e.path.startswith(CHECKOUT)]
    assert after and all(f"({SECOND})" in e.user_agent for e in after)  # spec, then status: its own decision
    late = [e for e in run.api.journal.writes() if f"({SECOND})" in e.user_agent and e.time > (
        restart.second.finished_at or 0)]
    assert late == []


def test_demo_tells_restart_from_that_evidence(demo: tuple[DemoRun, str]) -> None:
    run, out = demo
    restart = restart_of(run)
    lines = out.splitlines()
    story = lines[lines.index("and its stale decision can land after the new instance's):") + 1 :]
    placed = ",".join(f"{c['name']}:{c['replicas']}" for c in restart.plan.body(run.api)["spec"]["clusters"])
    assert story[:2] == [
        "- aws-use1-a's estimator holds its answers; shop/checkout-deployment is scaled from 12 to 14 replicas",
        f"- {FIRST}'s pass for it waits on that estimator; {FIRST} is stopped as SIGTERM stops it",
    ]
    assert story[2].startswith(FIRST_REPORT[0]) and story[2].endswith(FIRST_REPORT[1])
    assert story[3:] == [
        f"- aws-use1-a's estimator saw the held call cancelled; the API server's journal holds no write of {FIRST} "
        "to shop/checkout-deployment after the scale-up",
        f"- {SECOND} took the Lease and retried shop/checkout-deployment: Success, {placed}",
        f"- {SECOND} stopped too, nothing written after its stop",
    ]


def test_demo_runs_on_folder_given_with_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bindings = yaml.safe_load_all((ROOT / "examples" / "bindings.yaml").read_text())
    checkout = next(d for d in bindings if d and d["metadata"]["name"] == "checkout-deployment")
    shutil.copy(ROOT / "examples" / "clusters.yaml", tmp_path)
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(checkout))
    assert main(["demo", "--workers", "2", "--examples", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"loaded 9 clusters and 1 bindings from {tmp_path}" in out
    assert ["shop/checkout-deployment", "True", "Success", "aws-use1-a:6,azure-weu:2,gcp-usw1:4"] in [
        line.split() for line in out.splitlines()
    ]
    assert f"- {SECOND} took the Lease and retried shop/checkout-deployment: Success, " in out


def test_demo_without_binding_reports_one_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bindings = yaml.safe_load_all((ROOT / "examples" / "bindings.yaml").read_text())
    role = next(d for d in bindings if d and d["metadata"]["name"] == "platform-viewer-clusterrole")
    shutil.copy(ROOT / "examples" / "clusters.yaml", tmp_path)
    (tmp_path / "role.yaml").write_text(yaml.safe_dump(role))
    assert main(["demo", "--workers", "2", "--examples", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rolling restart" not in out
    assert out.rstrip().splitlines()[-1].startswith(f"{FIRST} stopped in ")
    assert out.rstrip().endswith(
        ": 0 passes were cancelled before they wrote anything, 0 were finishing a write, 0 were cut at the deadline; "
        "the Lease was released; nothing was written after the stop."
    )
