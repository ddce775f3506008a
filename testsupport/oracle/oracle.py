"""karmada-oracle: Karmada's own scheduler run over `simulate`'s inputs, printing `simulate -o json`.

Built from `tools/karmada-oracle` (its go.mod pins github.com/karmada-io/karmada) by its build.sh, into a cache
outside the clone; see tools/karmada-oracle/schedule.go for how it drives Karmada's scheduler.
"""

from __future__ import annotations

import datetime
import functools
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from testsupport.realcluster.controlplane import ROOT, go_available

BUILD_SCRIPT = ROOT / "tools" / "karmada-oracle" / "build.sh"


class OracleError(RuntimeError):
    """The oracle could not be built or run; the message carries its error output."""


@functools.cache
def binary() -> Path:
    """The oracle's executable; builds it when missing (the first build takes minutes)."""
    if not go_available():
        raise OracleError("karmada-oracle is built from its Go module and Go is not on PATH")
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise OracleError(f"{BUILD_SCRIPT.relative_to(ROOT)} failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1]) / "karmada-oracle"


def run(*args: str, stdin: str | None = None, timeout: float = 120) -> dict[str, Any]:
    """Run the oracle with these arguments; its parsed JSON, or OracleError with its stderr."""
    command = [str(binary()), *args]
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise OracleError(
            f"karmada-oracle {' '.join(args)} exited {result.returncode}:\n{result.stderr.strip()[-4000:]}"
        )
    try:
        parsed: dict[str, Any] = json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise OracleError(f"karmada-oracle printed no JSON ({error}):\n{result.stdout[:2000]}") from error
    return parsed


def decide(documents: Sequence[Mapping[str, Any]], flags: Sequence[str] = ()) -> dict[str, Any]:
    """Karmada's decisions for these Clusters and bindings, as `simulate -o json` prints ours.

    The documents go to the oracle's stdin as one `kind: List`; `flags` are simulate's (`--feature-gates`,
    `--enable-empty-workload-propagation`, `--plugins`).
    """
    listing = {"apiVersion": "v1", "kind": "List", "items": [dict(d) for d in documents]}
    return run("-f", "-", *flags, stdin=json.dumps(listing, default=_timestamp))


def decide_cases(cases: Sequence[Mapping[str, Any]], parallel: int = 16, timeout: float = 3600) -> list[dict[str, Any]]:
    """Karmada's decisions for many cases in one oracle process (`--cases`), in order: each answer is
    `{"id", "results"}` or `{"id", "error"}`. A case is `{"id", "documents", "flags"}` (see batch.go).

    Each binding may take up to 10 minutes (the oracle's `--timeout` only guards against a hang): Karmada's
    static-weight assignment over 200 clusters takes seconds of CPU, and 16 cases share two cores."""
    text = "".join(json.dumps(case, default=_timestamp) + "\n" for case in cases)
    command = [str(binary()), "--cases", "-", "--parallel", str(parallel), "--timeout", "10m"]
    result = subprocess.run(command, input=text, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise OracleError(f"karmada-oracle --cases exited {result.returncode}:\n{result.stderr.strip()[-4000:]}")
    answers = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    if len(answers) != len(cases):
        raise OracleError(f"karmada-oracle --cases answered {len(answers)} of {len(cases)} cases")
    return answers


def _timestamp(value: object) -> str:
    """A timestamp PyYAML parsed (unquoted in YAML) goes back as the RFC 3339 text the API uses."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        return value.isoformat(timespec="seconds") + "Z"
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
