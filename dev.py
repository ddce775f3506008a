#!/usr/bin/env python3
"""The project's two quickstart commands, runnable on a fresh machine with only Python 3.11+.

    python3 dev.py demo    # run the product on its embedded default
    python3 dev.py test    # lint, type-check, layer contract and the whole test suite
    python3 dev.py test --fast   # the inner loop: lint and the unit tier (no type check, no Go build)

and, for working with the real control plane the e2e tier uses (kube-apiserver + etcd built from their Go
modules, cached outside the clone):

    python3 dev.py cluster up      # build what is missing, start it, write .cluster/kubeconfig
    python3 dev.py cluster down    # stop it and remove its state

and a whole local Karmada control plane with three kwok-simulated members (testsupport/karmada):

    python3 dev.py karmada up [--scheduler karmada|ours]   # build what is missing, start it all
    python3 dev.py karmada e2e [--scheduler ...] [--focus REGEX]   # Karmada's own e2e scheduling specs
    python3 dev.py karmada churn [--scheduler ...]        # rolling restarts under policy churn, then scale-ups
    python3 dev.py karmada down                            # stop it and remove .karmada/

and the same plane with a host cluster that is a real one (a node with a kubelet, containerd, CNI; as root):

    python3 dev.py karmada up --in-cluster [--layout L]    # the scheduler as the chart's pods (or karmada's)
    python3 dev.py karmada rollout [--scheduler ...]       # the original report as Deployment rollouts (both)

and binding-scheduler's container image, built here from Debian's packages and the project's wheel (no container
engine, no registry; scripts/image.py):

    python3 dev.py image           # prints `image: binding-scheduler:<version> at <path> (oci-archive)`
    python3 dev.py image --refresh # debootstrap its Debian base again first (Debian's newest security updates)

Each creates `.venv` and installs the project into it when needed (again only when a pyproject.toml changed): the
product and, editable beside it, devcluster and its kubectl package (packages/, distributions of their own).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".installed-from"
PROJECTS = (ROOT, ROOT / "packages" / "devcluster", ROOT / "packages" / "devcluster-kubectl")
"""The distributions built from this tree: the product, devcluster (the embedded API server of the demo and the
tests) and devcluster's kubectl package; .venv holds the three, editable."""


def _python() -> str:
    return str(BIN / "python")


def _ensure_venv() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be started by an older python3
        sys.exit(f"binding-scheduler needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    if not (BIN / "python").exists():
        print(f"dev.py: creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256(b"".join((project / "pyproject.toml").read_bytes() for project in PROJECTS)).hexdigest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    print("dev.py: installing binding-scheduler, devcluster and the test tools into .venv", flush=True)
    editable = [arg for project in PROJECTS[1:] for arg in ("-e", str(project))]
    _run([_python(), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", f"{ROOT}[test]", *editable])
    STAMP.write_text(digest)


def _run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, cwd=ROOT, check=False)
    if result.returncode != 0:
        sys.exit(result.returncode)


def demo(args: list[str]) -> None:
    _ensure_venv()
    _run([str(BIN / "binding-scheduler"), "demo", *args])


GO_TOOLS: tuple[tuple[str, ...], ...] = (
    ("controlplane",), ("karmada",), ("karmada-oracle",), ("helm",), ("kwok",), ("karmada", "control-plane"),
    ("promcheck",), ("cni",), ("node",),
)
"""The reference binaries the tests run, each built from its Go module by tools/<name>/build.sh into
~/.cache/binding-scheduler/ (kept there, keyed by version); a tool's build.sh may take what to build as
arguments."""


def _build_go_tools() -> None:
    """Build what is missing before the tests start: a first build on a machine takes minutes, more than a
    test's timeout allows. Without Go the real-control-plane tier skips, and there is nothing to build."""
    if shutil.which("go") is None:
        return
    for tool, *what in GO_TOOLS:
        started = time.monotonic()
        result = subprocess.run(["bash", str(ROOT / "tools" / tool / "build.sh"), *what], capture_output=True,
                                text=True, check=False)
        name = " ".join([tool, *what])
        if result.returncode != 0:
            sys.exit(f"dev.py: tools/{tool}/build.sh {' '.join(what)} failed:\n{result.stderr[-4000:]}")
        seconds = time.monotonic() - started
        if seconds > 5:
            print(f"dev.py: built {name} in {seconds:.0f} s (cached for later runs)", flush=True)


IMAGE_CANNOT = 3
"""scripts/image.py's exit status on a machine that cannot build images (not root, no apt-get): its tier skips."""


def _build_image() -> None:
    """Build the image before the tests start (tests/deploy/test_image.py runs it): a first build debootstraps
    Debian, about a minute and a half; later ones take seconds, or nothing when no input changed. Only as root:
    elsewhere that tier skips with its own one line."""
    if os.name != "posix" or os.geteuid() != 0:
        return
    started = time.monotonic()
    result = subprocess.run([_python(), "-m", "scripts.image"], cwd=ROOT, capture_output=True, text=True,
                            check=False)
    if result.returncode == IMAGE_CANNOT:
        return
    if result.returncode != 0:
        sys.exit(f"dev.py: python3 dev.py image failed: {result.stderr.strip()[-4000:]}")
    seconds = time.monotonic() - started
    if seconds > 5:
        print(f"dev.py: built the image in {seconds:.0f} s (its Debian base cached for later runs)", flush=True)


def test(args: list[str]) -> None:
    """Everything CI runs; `--fast` is the inner loop: ruff and the unit tier only (no type check, no Go build)."""
    _ensure_venv()
    _run([str(BIN / "ruff"), "check", "operator", "tests", "testsupport", "benchmarks", "scripts", "dev.py"])
    if "--fast" in args:
        rest = [arg for arg in args if arg != "--fast"]
        _run([_python(), "-m", "pytest", "-m", "unit", *_parallel(rest), *rest])
        return
    _run([str(BIN / "mypy")])
    _run([str(BIN / "lint-imports"), "--no-cache"])
    _build_go_tools()
    _build_image()
    _run([_python(), "-m", "pytest", *_parallel(args), *args])


def _parallel(args: list[str]) -> list[str]:
    """One pytest worker per core (pytest-xdist), each file kept on one worker (its module fixtures: a Karmada
    plane, a devcluster): most tests wait on servers, not on the CPU. Not when the caller chose (-n, -p no:xdist)."""
    if any(arg.startswith(("-n", "--numprocesses", "--dist")) for arg in args) or "no:xdist" in args:
        return []
    return ["-n", "auto", "--dist", "loadfile"]


def cluster(args: list[str]) -> None:
    _ensure_venv()
    _run([_python(), "-m", "testsupport.realcluster", *args])


def karmada(args: list[str]) -> None:
    _ensure_venv()
    if args[:1] != ["down"]:
        _build_go_tools()
    _run([_python(), "-m", "testsupport.karmada", *args])


def image(args: list[str]) -> None:
    _ensure_venv()
    _run([_python(), "-m", "scripts.image", *args])


def main() -> None:
    commands = {"demo": demo, "test": test, "cluster": cluster, "karmada": karmada, "image": image}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: python3 dev.py {{{'|'.join(commands)}}} [args...]")
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
