"""The three distributions built from this tree (the product; packages/devcluster, the embedded API server;
packages/devcluster-kubectl, its kubectl package) share one version and require each other at exactly that
version: devcluster installs files into the product's package and imports its `binding_scheduler.crds`."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import binding_scheduler

ROOT = Path(__file__).resolve().parents[2]


def project(folder: str) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())
    return data


def test_one_version_each_distribution_pinning_one_below() -> None:
    product, devcluster, kubectl = project("."), project("packages/devcluster"), project("packages/devcluster-kubectl")
    version = product["project"]["version"]
    assert binding_scheduler.__version__ == version
    assert devcluster["project"]["version"] == kubectl["project"]["version"] == version
    assert product["project"]["optional-dependencies"]["devcluster"] == [f"binding-scheduler-devcluster=={version}"]
    assert devcluster["project"]["dependencies"] == [f"binding-scheduler=={version}"]
    assert devcluster["project"]["optional-dependencies"] == {
        "kubectl": [f"binding-scheduler-devcluster-kubectl=={version}"]}
    assert kubectl["project"]["dependencies"] == [f"binding-scheduler-devcluster=={version}"]


def test_each_distribution_builds_part_of_one_source_tree() -> None:
    product = project(".")["tool"]["setuptools"]
    assert product["packages"]["find"]["exclude"] == ["binding_scheduler.devcluster", "binding_scheduler.devcluster.*"]
    for folder, package in (("packages/devcluster", "binding_scheduler.devcluster"),
                            ("packages/devcluster-kubectl", "binding_scheduler.devcluster.kubectl")):
        setuptools = project(folder)["tool"]["setuptools"]
        assert setuptools["packages"] == [package]
        source = (ROOT / folder / setuptools["package-dir"][package]).resolve()
        assert source == ROOT / "operator" / Path(*package.split("."))
