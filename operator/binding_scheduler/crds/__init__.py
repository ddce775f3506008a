"""The CustomResourceDefinitions the package carries, and how they are read.

The YAML files here are Karmada's ResourceBinding, ClusterResourceBinding and Cluster (generated from Karmada's
types by tools/crdgen) and our SchedulerConfiguration: copies of the repository's `crds/`, which a test keeps
identical. Two parts of the product read them: `simulate` and `explain` check their input files against their
schemas (cli/fields.py, with the walk in `structural.py`), and devcluster, the embedded API server, serves them.
devcluster is a distribution of its own (binding-scheduler-devcluster) that imports nothing else from the
package: this one imports nothing from the package either (import-linter contracts hold both).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

PACKAGE_CRDS = Path(__file__).resolve().parent


def default_crds_dir() -> Path:
    """The repository's `crds/` folder when running from a checkout, else the copy inside the package."""
    repo = Path(__file__).resolve().parents[3]
    if (repo / "pyproject.toml").is_file() and (repo / "crds").is_dir():
        return repo / "crds"
    return PACKAGE_CRDS


def load_crds(directory: Path) -> list[dict[str, Any]]:
    """All `CustomResourceDefinition` documents in the YAML files of a folder, sorted by file name (fresh copies:
    a caller may change them)."""
    crds: list[dict[str, Any]] = []
    for path in sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")]):
        stat = path.stat()
        crds.extend(copy.deepcopy(_crds_in(path, stat.st_mtime_ns, stat.st_size)))
    return crds


@functools.lru_cache(maxsize=64)
def _crds_in(path: Path, mtime_ns: int, size: int) -> tuple[dict[str, Any], ...]:
    """The CRDs of one file, parsed once per version of it: parsing the four CRDs took ~0.35 s, paid by every
    emulator started (each test's)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open(encoding="utf-8") as stream:
        documents = list(yaml.load_all(stream, Loader=loader))
    return tuple(d for d in documents if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition")


def version_schema(version: Mapping[str, Any]) -> dict[str, Any] | None:
    """The structural schema (`schema.openAPIV3Schema`) of one of a CRD's `spec.versions`, or None."""
    root = (version.get("schema") or {}).get("openAPIV3Schema")
    return root if isinstance(root, dict) else None


def served_schemas(crd: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any] | None]:
    """(apiVersion, kind) -> the structural schema, for every version the CRD serves."""
    spec = crd.get("spec") or {}
    kind = str((spec.get("names") or {}).get("kind") or "")
    return {(f"{spec.get('group')}/{version.get('name')}", kind): version_schema(version)
            for version in spec.get("versions") or [] if version.get("served", True)}
