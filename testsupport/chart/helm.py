"""helm, built from its Go module by `tools/helm/build.sh` and cached outside the clone, run on our chart."""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from testsupport.realcluster.controlplane import ROOT, go_available

CHART = ROOT / "charts" / "binding-scheduler"
BUILD_SCRIPT = ROOT / "tools" / "helm" / "build.sh"


class HelmError(RuntimeError):
    """helm failed; the message is helm's own error output."""


@functools.cache
def binary() -> Path:
    if not go_available():
        raise HelmError("helm is built from its Go module and Go is not on PATH")
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise HelmError(f"{BUILD_SCRIPT.relative_to(ROOT)} failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1]) / "helm"


def run(*args: str) -> str:
    result = subprocess.run([str(binary()), *args], capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        raise HelmError(result.stderr.strip())
    return result.stdout


def _values_args(values: Mapping[str, Any] | None) -> list[str]:
    # --set-json keeps every type as given (--set would turn "5s" into a string but "0" into a number)
    return [arg for key, value in (values or {}).items() for arg in ("--set-json", f"{key}={json.dumps(value)}")]


def template(values: Mapping[str, Any] | None = None, *, release: str = "bs", namespace: str = "karmada-system",
             extra: Sequence[str] = ()) -> str:
    """`helm template` of the chart: the rendered manifests as one YAML text."""
    return run("template", release, str(CHART), "--namespace", namespace, *_values_args(values), *extra)


def render(values: Mapping[str, Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(template(values, **kwargs)) if d]


def lint(values: Mapping[str, Any] | None = None) -> str:
    return run("lint", "--strict", str(CHART), *_values_args(values))


def find(documents: Sequence[Mapping[str, Any]], kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
    return [
        dict(d) for d in documents
        if d["kind"] == kind and (namespace is None or d["metadata"].get("namespace") == namespace)
    ]


def one(documents: Sequence[Mapping[str, Any]], kind: str) -> dict[str, Any]:
    found = find(documents, kind)
    assert len(found) == 1, f"expected one {kind}, rendered {len(found)}"
    return found[0]
