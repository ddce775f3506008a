"""What every tier shares: each test's tier mark, from its directory, and the real control plane (started once per
session, only when a test asks).

The tiers (docs/testing.md): `unit` (pure code and single modules, no server, no Go build), `operator` (the
operator on devcluster, in-process or as a process), `realcluster` (kube-apiserver and etcd built from their Go
modules), `oracle` (Karmada's own scheduling code, through our Go oracle), `faults` (the fault matrix),
`packaging` (the wheel, the chart, the image) and `karmada` (a whole Karmada control plane). `pytest -m unit` is
the inner loop (`python3 dev.py test --fast`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.register_assert_rewrite("testsupport")  # its asserts (the harness's judges) explain themselves too

from testsupport.realcluster.controlplane import (  # noqa: E402 - after the rewrite is registered
    ControlPlane,
    ControlPlaneError,
    go_available,
    start,
    stop,
)

TESTS = Path(__file__).resolve().parent
TIERS: dict[str, str] = {
    "algorithm": "unit", "model": "unit", "kube": "unit", "estimation": "unit", "scheduling": "unit",
    "cli": "unit",
    "test_processes.py": "unit",  # testsupport/processes.py, which every tier that stops a process goes through
    # the command line as a process, against devcluster; Karmada's oracle behind the golden file
    "cli/test_blind.py": "operator", "cli/test_errors.py": "operator", "cli/test_examples.py": "operator",
    "cli/test_golden_oracle.py": "oracle",
    "operator": "operator", "shutdown": "operator", "devcluster": "operator",
    "e2e": "realcluster", "realcluster": "realcluster", "conformance": "realcluster",
    "oracle": "oracle",
    "faults": "faults",
    "packaging": "packaging", "deploy": "packaging", "chart": "packaging",
    "karmada": "karmada",
}
"""The tier of each directory under tests/ (or of one file in it, which wins). A new directory must be given one
here: collection fails until it is."""


def tier_of(path: Path) -> str:
    """The tier of a test file: its own entry in TIERS, else that of the first directory under tests/ it is in."""
    relative = path.resolve().relative_to(TESTS)
    folder = relative.parts[0] if len(relative.parts) > 1 else ""
    for key in (relative.as_posix(), folder):
        if key in TIERS:
            return TIERS[key]
    raise pytest.UsageError(f"{path}: tests/{folder or relative} has no tier: add it to TIERS in tests/conftest.py")


FIRST = ("karmada", "oracle", "packaging", "faults", "realcluster", "operator", "unit")
"""The order the tiers run in: the few long ones first, so that parallel workers (one file each at a time) end
together instead of waiting on a Karmada plane started last."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tiers = {item: tier_of(item.path) for item in items}
    for item, tier in tiers.items():
        item.add_marker(getattr(pytest.mark, tier))
    items.sort(key=lambda item: FIRST.index(tiers[item]))


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """kube-apiserver + etcd on loopback, RBAC on, audit log on; skipped (one line) where Go is missing."""
    if not go_available():
        pytest.skip("real control plane: Go is not installed, so kube-apiserver and etcd cannot be built")
    state = tmp_path_factory.mktemp("controlplane") / "state"
    try:
        plane = start(state, tie_to_parent=True)
    except ControlPlaneError as error:
        pytest.fail(f"the real control plane did not start: {error}", pytrace=False)
    try:
        yield plane
    finally:
        stop(state)


@pytest.fixture(scope="session")
def helm() -> Path:
    """helm built from helm.sh/helm/v3 (cached); skipped (one line) where Go is missing."""
    from testsupport.chart.helm import HelmError, binary

    if not go_available():
        pytest.skip("helm: Go is not installed, so helm cannot be built from its module")
    try:
        return binary()
    except HelmError as error:
        pytest.fail(f"helm could not be built: {error}", pytrace=False)
