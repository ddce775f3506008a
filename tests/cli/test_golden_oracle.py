"""The golden file is not just what we printed once: it is Karmada's own decision for examples/ (karmada-oracle,
Karmada v1.18.2's scheduler run over the same files), except for the deliberate differences of
docs/compatibility.md. Those are the allowance tests/oracle/test_oracle_examples.py keeps (`DELIBERATE`): each
names a binding, a field and the values either side may print; nothing else may differ."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.conftest import karmada_oracle
from tests.oracle.test_oracle_examples import DELIBERATE, EXAMPLES, key
from testsupport.realcluster.controlplane import ROOT

GOLDEN = ROOT / "tests" / "cli" / "golden" / "examples-simulate.json"

# The oracle is built on first use (Karmada and client-go compile for minutes once).
pytestmark = pytest.mark.timeout(900)

__all__ = ["karmada_oracle"]


def karmadas_decisions(oracle: Path) -> dict[str, Any]:
    printed = subprocess.run([str(oracle), "-f", str(EXAMPLES)], capture_output=True, text=True, timeout=120,
                             check=False)
    assert printed.returncode == 0, printed.stderr
    parsed: dict[str, Any] = json.loads(printed.stdout)
    return parsed


def test_golden_file_is_karmadas_but_listed_differences(
    karmada_oracle: Path,
) -> None:
    golden = json.loads(GOLDEN.read_text())
    theirs = karmadas_decisions(karmada_oracle)

    assert [key(r) for r in golden["results"]] == [key(r) for r in theirs["results"]]
    unlisted = []
    for ours, karmada in zip(golden["results"], theirs["results"], strict=True):
        assert list(ours) == list(karmada), key(ours)  # the same fields, in the same order
        for field in ours:
            if ours[field] == karmada[field]:
                continue
            allowance = DELIBERATE.get((key(ours), field))
            if allowance is None:
                unlisted.append((key(ours), field, ours[field], karmada[field]))
                continue
            allowed = allowance[1]
            assert ours[field] in allowed and karmada[field] in allowed, (key(ours), field)
    assert unlisted == [], "the golden file differs from Karmada where docs/compatibility.md lists no difference"


def test_golden_file_decides_every_example_binding(karmada_oracle: Path) -> None:
    """Cross-checked means every binding of examples/ is in it: the oracle lists them independently."""
    golden = json.loads(GOLDEN.read_text())
    theirs = karmadas_decisions(karmada_oracle)
    assert len(golden["results"]) == len(theirs["results"]) > 0
    assert {r["kind"] for r in golden["results"]} == {"ResourceBinding", "ClusterResourceBinding"}
