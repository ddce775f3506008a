"""`binding-scheduler explain`: every verdict, not only the first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from binding_scheduler.cli.main import main

EXAMPLES = str(Path(__file__).resolve().parents[2] / "examples")


def explain(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["explain", "-f", EXAMPLES, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_failing_filter_of_a_cluster_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = explain(capsys, "--binding", "shop/legacy-api-deployment", "-o", "json")
    document = json.loads(out)
    edge = next(c for c in document["attempts"][0]["clusters"] if c["name"] == "edge-fra")
    assert code == 0
    assert [(f["plugin"], f["reason"]) for f in edge["filters"] if not f["passed"]] == [
        ("TaintToleration", "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"),
        ("ClusterAffinity", "cluster(s) did not match the placement cluster affinity constraint"),
    ]


def test_fallback_through_affinity_terms_shows_each_attempt(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = explain(capsys, "--binding", "batch-report-job", "-o", "json")
    document = json.loads(out)
    assert code == 0
    assert [a["affinityName"] for a in document["attempts"]] == ["eu-first", "anywhere-gold"]
    assert document["attempts"][0]["error"].startswith("0/9 clusters are available:")
    assert document["warnings"] == [
        "failed to schedule ResourceBinding(shop/batch-report-job) with clusterAffiliates index(0): "
        + document["attempts"][0]["error"]
    ]
    assert document["clusters"] == document["attempts"][1]["result"]


def test_estimates_selection_and_division_are_shown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = explain(capsys, "--binding", "search-deployment")
    assert code == 0
    assert "cluster aws-use1-a: feasible" in out
    assert "estimates: general 42 -> allocatable 42, available 42" in out
    assert "selected: yes, replicas 20" in out
    assert "selection:" in out
    assert "result: Scheduled=True reason=Success" in out


def test_unknown_binding_is_an_error_naming_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = explain(capsys, "--binding", "nope")
    assert code == 2
    assert out == ""
    assert "no binding 'nope' in the inputs" in err
    assert "shop/checkout-deployment" in err


class Exploding:
    name = "Exploding"

    def score(self, ctx: object, cluster: object) -> int:
        raise RuntimeError("no scores today")


def test_a_failing_score_plugin_is_reported_not_a_crash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.plugins.discover_plugins", lambda **_: [Exploding()])
    code, out, _ = explain(capsys, "--binding", "checkout-deployment", "-o", "json")
    document = json.loads(out)
    assert code == 0
    assert document["reason"] == "SchedulerError"
    assert document["message"] == 'failed to prioritize clusters: plugin "Exploding" failed with: no scores today'
    first = next(c for c in document["attempts"][0]["clusters"] if c["name"] == "aws-use1-a")
    assert first["scores"]["Exploding"] == "plugin failed: no scores today"
