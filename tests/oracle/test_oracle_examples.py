"""karmada-oracle on examples/: Karmada's own scheduler (v1.18.2) against `binding-scheduler simulate`.

Every result must be equal, field by field, except the differences docs/compatibility.md lists as deliberate,
each named below with the binding and the field it may change. Differences are printed (`pytest -s`).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from binding_scheduler.cli.inputs import documents, input_files
from binding_scheduler.cli.main import main
from testsupport.oracle.oracle import OracleError, decide, run
from testsupport.realcluster.controlplane import ROOT

# The session fixture builds the oracle on first use: Karmada and client-go compile for minutes once.
pytestmark = [pytest.mark.usefixtures("karmada_oracle"), pytest.mark.timeout(900)]

EXAMPLES = ROOT / "examples"

Key = tuple[str, str, str]

LEGACY_API: Key = ("ResourceBinding", "shop", "legacy-api-deployment")

# (binding, field) -> (the deliberate difference of docs/compatibility.md that allows it, what Karmada may print).
DELIBERATE: dict[tuple[Key, str], tuple[str, set[Any]]] = {
    (LEGACY_API, "message"): (
        "'Filters run in one fixed order' (Fixed): a FitError counts each cluster under the first filter that "
        "rejected it; Karmada runs its filters in Go map order, random per process, so edge-fra and gpu-usc1 "
        "(each with an untolerated taint and outside the affinity) count under TaintToleration or ClusterAffinity",
        {
            "0/9 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}, "
            "1 cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}, "
            "7 cluster(s) did not match the placement cluster affinity constraint.",
            "0/9 clusters are available: 9 cluster(s) did not match the placement cluster affinity constraint.",
        },
    ),
}


def key(result: dict[str, Any]) -> Key:
    return (result["kind"], result["namespace"], result["name"])


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["simulate", "-f", str(EXAMPLES), "-o", "json", *args]) == 0
    parsed: dict[str, Any] = json.loads(capsys.readouterr().out)
    return parsed


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[tuple[Key, str, Any, Any]]:
    found = []
    for mine, karmada in zip(ours["results"], theirs["results"], strict=True):
        for field in mine:
            if mine[field] != karmada.get(field):
                found.append((key(mine), field, mine[field], karmada.get(field)))
    return found


def test_oracle_prints_simulate_json_for_examples(
    karmada_oracle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = subprocess.run(
        [str(karmada_oracle), "-f", str(EXAMPLES)], capture_output=True, text=True, timeout=120, check=False
    )
    assert printed.returncode == 0, printed.stderr
    theirs = json.loads(printed.stdout)
    assert printed.stdout == json.dumps(theirs, indent=2) + "\n"  # simulate's layout, byte for byte
    assert "note: ignoring" in printed.stderr and "scheduler-configuration.yaml" in printed.stderr

    ours = simulate(capsys)
    assert [key(r) for r in theirs["results"]] == [key(r) for r in ours["results"]]
    assert all(list(r) == list(ours["results"][0]) for r in theirs["results"])  # same fields, same order

    found = differences(ours, theirs)
    with capsys.disabled():
        for binding, field, mine, karmada in found:
            why = DELIBERATE[(binding, field)][0] if (binding, field) in DELIBERATE else "UNDOCUMENTED"
            print(f"\n{'/'.join(binding)} {field}:\n  ours:    {mine!r}\n  karmada: {karmada!r}\n  why:     {why}")
    undocumented = [(binding, field) for binding, field, _, _ in found if (binding, field) not in DELIBERATE]
    assert not undocumented, f"differences docs/compatibility.md does not list: {undocumented}"

    # A deliberate difference is only allowed to take the values that difference can produce.
    for (binding, field), (_, allowed) in DELIBERATE.items():
        assert next(r for r in theirs["results"] if key(r) == binding)[field] in allowed
        assert next(r for r in ours["results"] if key(r) == binding)[field] in allowed


def test_stdin_and_folders_are_read_alike() -> None:
    """`decide` (one kind: List on stdin) and `-f examples` (a folder of multi-document files) see the same
    bindings in the same order and make the same decisions (messages aside: see DELIBERATE)."""
    items = [doc for path in input_files([str(EXAMPLES)]) for doc in documents(path)]
    from_stdin = decide(items)["results"]
    from_folder = run("-f", str(EXAMPLES))["results"]
    assert [key(r) for r in from_stdin] == [key(r) for r in from_folder]
    for a, b in zip(from_stdin, from_folder, strict=True):
        assert {**a, "message": ""} == {**b, "message": ""}
        if (key(a), "message") not in DELIBERATE:
            assert a["message"] == b["message"]


def test_flags_reach_karmada(capsys: pytest.CaptureFixture[str]) -> None:
    """--plugins and --enable-empty-workload-propagation are Karmada's own flags, with simulate's meaning."""
    without_taints = run("-f", str(EXAMPLES), "--plugins", "*,-TaintToleration")
    ours = simulate(capsys, "--plugins", "*,-TaintToleration")
    storefront = ("ResourceBinding", "shop", "storefront-deployment")
    picked = {key(r): sorted(c["name"] for c in r["clusters"]) for r in without_taints["results"]}
    assert "gpu-usc1" in picked[storefront] and "edge-fra" in picked[storefront]  # taints no longer filter
    assert picked == {key(r): sorted(c["name"] for c in r["clusters"]) for r in ours["results"]}

    empty = run("-f", str(EXAMPLES), "--enable-empty-workload-propagation")
    ours_empty = simulate(capsys, "--enable-empty-workload-propagation")
    assert [r["clusters"] for r in empty["results"]] == [r["clusters"] for r in ours_empty["results"]]


def test_bad_input_is_refused_with_reason() -> None:
    with pytest.raises(OracleError, match=re.escape("metadata.namespace: is required for a ResourceBinding")):
        decide([{"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "metadata": {"name": "x"},
                 "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}}}])
