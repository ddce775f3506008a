"""Karmada's own e2e suite (`test/e2e/suites/base` of Karmada's module, compiled by tools/karmada/build.sh as
e2e-base.test), run unchanged against a plane: ginkgo's focus/skip select the specs, its JSON report says
what passed."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testsupport.karmada.plane import KarmadaPlane, karmada_binaries

SCHEDULING_SPEC_FILES = (
    "scheduling_test.go", "clusteraffinities_test.go", "spread_by_region_test.go", "tainttoleration_test.go",
    "rescheduling_test.go", "schedule_priority_test.go", "schedule_multi_template_test.go",
    "workloadaffinity_test.go", "estimator_test.go", "propagationpolicy_test.go",
    "clusterpropagationpolicy_test.go", "failover_test.go", "workloadrebalancer_test.go",
    "clusterresourcebinding_test.go", "preemption_test.go",
)
"""The spec files of Karmada's base suite that exercise scheduling (issue: scheduling, cluster affinities,
spread by region, taint toleration, rescheduling, priority, multi-template, workload affinity, estimator,
propagation policies, failover, rebalancer)."""


@dataclass(frozen=True)
class SpecResult:
    file: str
    name: str
    state: str  # passed | failed | skipped | pending | panicked | interrupted | timedout | aborted
    seconds: float
    failure: str
    labels: tuple[str, ...] = ()


def karmadactl_gopath(binaries: Path) -> Path:
    """A GOPATH whose bin/ holds karmadactl: the suite runs `$(go env GOPATH)/bin/karmadactl`, and with
    GOPATH set for its process only, nothing is installed outside the cache."""
    gopath = binaries / "e2e-gopath"
    (gopath / "bin").mkdir(parents=True, exist_ok=True)
    link = gopath / "bin" / "karmadactl"
    if not link.exists():
        link.symlink_to(binaries / "karmadactl")
    return gopath


def run(plane: KarmadaPlane, report: Path, *, files: Sequence[str] = SCHEDULING_SPEC_FILES, focus: str = "",
        skip: str = "", poll_timeout: str = "300s", timeout: str = "4h",
        log: Path | None = None) -> list[SpecResult]:
    binaries = karmada_binaries()
    command = [
        str(binaries / "e2e-base.test"), f"-ginkgo.json-report={report.resolve()}", "-ginkgo.v", "-ginkgo.no-color",
        f"-ginkgo.timeout={timeout}", f"--poll-timeout={poll_timeout}", "--poll-interval=2s",
    ]
    command += [f"-ginkgo.focus-file={name}" for name in files]
    if focus:
        command.append(f"-ginkgo.focus={focus}")
    if skip:
        command.append(f"-ginkgo.skip={skip}")
    env = {**os.environ, "KUBECONFIG": str(plane.kubeconfig.resolve()), "GOPATH": str(karmadactl_gopath(binaries)),
           "GOFLAGS": "-mod=mod"}
    out = (log or report.with_suffix(".log")).open("wb")
    with out:
        subprocess.run(command, cwd=binaries, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    return results(report)


def results(report: Path) -> list[SpecResult]:
    if not report.exists():
        return []
    suites: list[dict[str, Any]] = json.loads(report.read_text())
    found = []
    for suite in suites:
        for spec in suite.get("SpecReports") or ():
            if spec.get("LeafNodeType") != "It":
                continue
            name = " ".join([*(spec.get("ContainerHierarchyTexts") or ()), spec.get("LeafNodeText", "")])
            failure = ((spec.get("Failure") or {}).get("Message") or "").strip()
            found.append(SpecResult(
                file=Path((spec.get("LeafNodeLocation") or {}).get("FileName", "")).name,
                name=" ".join(name.split()), state=spec.get("State", ""),
                seconds=_seconds(spec.get("RunTime", 0)), failure=failure.splitlines()[0] if failure else "",
                labels=tuple(label for labels in (spec.get("ContainerHierarchyLabels") or ()) for label in labels or ())
                + tuple(spec.get("LeafNodeLabels") or ())))
    return found


def _seconds(nanoseconds: int | float) -> float:
    return round(float(nanoseconds) / 1e9, 1)


def summary(found: Sequence[SpecResult]) -> str:
    counts: dict[str, int] = {}
    for result in found:
        counts[result.state] = counts.get(result.state, 0) + 1
    return ", ".join(f"{counts[state]} {state}" for state in sorted(counts)) or "no specs ran"


def timed(function: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.monotonic()
    value = function(*args, **kwargs)
    return value, time.monotonic() - started


def exact(name: str) -> str:
    """A ginkgo focus regex (Go's RE2) matching the spec whose full text ends with `name` (ginkgo's text has a
    prefix of its own, so `^` never matches)."""
    return "".join("\\" + c if c in RE2_SPECIAL else c for c in name) + "$"


RE2_SPECIAL = frozenset("\\.+*?()|[]{}^$")
