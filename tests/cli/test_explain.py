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


def test_every_failing_filter_of_cluster_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
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
    assert "room (replicas that fit): general 42 -> allocatable 42, available 42" in out
    assert "selected: yes, replicas 20" in out
    assert "selection:" in out
    assert "result: Scheduled=True reason=Success" in out


def test_unknown_binding_is_error_naming_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = explain(capsys, "--binding", "nope")
    assert code == 2
    assert out == ""
    assert "no binding 'nope' in the inputs" in err
    assert "shop/checkout-deployment" in err


class Exploding:
    name = "Exploding"

    def score(self, ctx: object, cluster: object) -> int:
        raise RuntimeError("no scores today")


def test_failing_score_plugin_is_reported_not_crash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.framework.plugins.discover_plugins", lambda **_: [Exploding()])
    code, out, _ = explain(capsys, "--binding", "checkout-deployment", "-o", "json")
    document = json.loads(out)
    assert code == 0
    assert document["reason"] == "SchedulerError"
    assert document["message"] == 'failed to prioritize clusters: plugin "Exploding" failed with: no scores today'
    first = next(c for c in document["attempts"][0]["clusters"] if c["name"] == "aws-use1-a")
    assert first["scores"]["Exploding"] == "plugin failed: no scores today"


def section(out: str, title: str) -> list[str]:
    """The lines of one indented section of an attempt (`  division:`), without their indent."""
    lines = out.splitlines()
    start = lines.index(f"  {title}:") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("    "))
    return [line[4:] for line in lines[start:end]]


WEBSTER = ("seats by Webster's method: each replica in turn goes to the cluster with the highest weight / (2 x its "
           "replicas so far + 1); equal claims to the one with fewer replicas, then by name in the direction the "
           "binding's uid picks")


def test_static_division_shows_shares(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = explain(capsys, "--binding", "checkout-deployment")
    assert section(out, "division") == [
        "StaticWeight: 12 replicas by the static weight rules (a cluster's weight is its highest matching rule)",
        WEBSTER,
        "  azure-weu: weight 1 of 6, exact share 12 x 1/6 = 2.00 -> 2",
        "  aws-use1-a: weight 3 of 6, exact share 12 x 3/6 = 6.00 -> 6",
        "  gcp-usw1: weight 2 of 6, exact share 12 x 2/6 = 4.00 -> 4",
    ]


def test_dynamic_division_shows_mode_and_rounding_of_each_share(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = explain(capsys, "--binding", "search-deployment")
    assert section(out, "division") == [
        "DynamicWeight, first placement (scale up from 0): the 40 replicas divided by each cluster's allocatable "
        "replicas (its room for more)",
        WEBSTER,
        "  aws-use1-a: weight 42 of 82, exact share 40 x 42/82 = 20.49 -> 20",
        "  gcp-usw1: weight 40 of 82, exact share 40 x 40/82 = 19.51 -> 20",
    ]


def test_region_choice_is_told_by_what_decided_it(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = explain(capsys, "--binding", "search-deployment")
    selection = section(out, "selection")
    assert selection[0] == ("region westeurope: 1 cluster (azure-weu), room for 66 replicas, score 20000 (20 replicas "
                            "of its share (the replicas over minGroups) it can take x 1000 + its clusters' mean "
                            "score 0)")
    assert selection[4] == ("best: us-east-1, us-west1, tied on score (40000) and clusters (2) with 2 others, it is "
                            "the first the search finds (regions with fewer clusters first, then the higher score, "
                            "then by name)")


def test_left_out_cluster_names_constraint(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = explain(capsys, "--binding", "search-deployment")
    lines = out.splitlines()
    azure = lines.index("  cluster azure-weu: feasible")
    assert "    selected: no (its region westeurope was not chosen)" in lines[azure:azure + 6]


def test_what_room_figures_mean_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = explain(capsys, "--binding", "search-deployment")
    legend = [line for line in out.splitlines() if line.startswith("room: 'general' is the general estimator's")]
    assert len(legend) == 1
    assert "allocatable minus allocated minus allocating, over one replica's requests" in legend[0]


@pytest.mark.parametrize("name", ["storefront-deployment", "checkout-deployment", "search-deployment",
                                  "ledger-statefulset", "batch-report-job", "trainer-deployment",
                                  "inventory-deployment"])
def test_division_shown_ends_in_result_scheduler_writes(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    _, out, _ = explain(capsys, "--binding", name, "-o", "json")
    document = json.loads(out)
    (attempt,) = [a for a in document["attempts"] if a["result"] is not None]
    seats = {}
    for line in attempt["division"]:
        cluster, _, rest = line.strip().partition(": weight ")
        if rest:
            seats[cluster] = int(rest.rsplit(" -> ", 1)[1])
    if attempt["division"][0].startswith("Duplicated"):
        seats = {c["name"]: int(attempt["division"][0].split(" runs all ")[1].split()[0]) for c in attempt["result"]}
    if attempt["division"][-1].startswith("added to the previous placement"):
        merged = attempt["division"][-1].split("): ", 1)[1].split(", ")
        seats = {part.split(":")[0]: int(part.split(":")[1]) for part in merged}
    assert {c["name"]: c.get("replicas", 0) for c in attempt["result"]} == {n: s for n, s in seats.items() if s}
