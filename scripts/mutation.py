#!/usr/bin/env python3
"""Mutation testing (mutmut 3) of the modules that carry the guarantees, each against a fast, relevant selection
of tests. Not part of the test command: a module takes minutes (docs/mutation.md has the times and the result).

mutmut wants the code under `src/` (it puts `mutants/src` first on sys.path and names each mutant after its
module path) and the tests beside it; our package lives in `operator/`. So every run happens in a workspace
outside this tree: `src/binding_scheduler` (a copy of operator/binding_scheduler), `tests/`, `testsupport/`,
`examples/`, `crds/`, `charts/` and `pyproject.toml` with a `[tool.mutmut]` section for the one module, then
`mutmut run`.
The files come from the committed tree (HEAD, or `--source REV`; `--source worktree` takes the files as they
are), so other people's uncommitted edits in a shared working tree stay out. This working tree is never touched.

    .venv/bin/python -m scripts.mutation                       # every module, then the table
    .venv/bin/python -m scripts.mutation kube/gate.py          # one module
    .venv/bin/python -m scripts.mutation --list                # modules and their tests
    .venv/bin/python -m scripts.mutation kube/gate.py --show   # also print the diff of every survivor

The workspace is kept in `--workdir` (default: $BINDING_SCHEDULER_CACHE or ~/.cache/binding-scheduler, under
mutation/), so `cd` there and `.venv/bin/mutmut show NAME` / `mutmut browse` work on the last run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "operator" / "binding_scheduler"
MUTMUT = Path(sys.executable).with_name("mutmut")
PER_TEST_TIMEOUT = 60
TIMEOUT_MULTIPLIER = 15.0
"""A mutant is stopped (and counted as a timeout) once its tests run this many times their clean time: mutmut's
default. 3x made runs faster but, on a loaded machine, stopped mutants that were merely slow (all of the first 32
lease mutants), so a timeout would no longer mean a hang."""
COPIED = ("operator", "tests", "testsupport", "examples", "crds", "charts", "pyproject.toml")


@dataclass(frozen=True)
class Target:
    module: str  # relative to binding_scheduler/
    tests: tuple[str, ...]


TARGETS: tuple[Target, ...] = (
    Target("kube/gate.py", ("tests/kube/test_gate.py", "tests/kube/test_client.py")),
    Target("kube/bindings.py", ("tests/kube/test_bindings.py", "tests/scheduling/test_pass_spec_write.py",
                                "tests/scheduling/test_pass_decide.py")),
    Target("kube/lease.py", ("tests/kube/test_lease.py",)),
    Target(
        "scheduling/lifecycle/runtime.py",
        (
            "tests/scheduling/test_runtime.py",
            "tests/scheduling/test_drain.py",
            "tests/scheduling/test_own_write_echo.py",
            "tests/scheduling/test_intake.py",
            "tests/scheduling/test_intake_effects.py",
            "tests/scheduling/test_routing.py",
            "tests/scheduling/test_runtime_lifecycle.py",
            "tests/shutdown/test_reproduction.py",
        ),
    ),
    # The service is mostly driven whole (operator threads on devcluster, seconds per test): two files that stop it
    # in every way a pass can be caught, so that one mutant costs ~10 s instead of a minute; and the fast tests of
    # its parts (configuration, relists, the first sync, the report line).
    Target(
        "scheduling/lifecycle/service.py",
        ("tests/shutdown/test_reproduction.py", "tests/shutdown/test_gate_after_shutdown.py",
         "tests/scheduling/test_service_parts.py", "tests/scheduling/test_service_sync.py",
         "tests/scheduling/test_service_wiring.py", "tests/scheduling/test_workload_groups.py"),
    ),
    Target(
        "scheduling/passes/run.py",
        (
            "tests/scheduling/test_pass_decide.py",
            "tests/scheduling/test_pass_spec_write.py",
            "tests/scheduling/test_pass_status_write.py",
            "tests/scheduling/test_pass_report.py",
            "tests/scheduling/test_own_write_echo.py",
            "tests/scheduling/test_drain.py",
            "tests/scheduling/test_runtime.py",
            "tests/scheduling/test_preemption_pass.py",
        ),
    ),
    Target(
        "scheduling/passes/preemption.py",
        ("tests/scheduling/test_preemption_pass.py", "tests/scheduling/test_preemption_claims.py",
         "tests/scheduling/test_preemption_properties.py", "tests/scheduling/test_runtime.py"),
    ),
    Target(
        "algorithm/preemption.py",
        ("tests/algorithm/test_preemption.py", "tests/scheduling/test_preemption_pass.py",
         "tests/scheduling/test_preemption_claims.py"),
    ),
    Target("algorithm/filters.py", ("tests/algorithm/test_filters.py", "tests/algorithm/test_pipeline.py")),
    Target(
        "algorithm/webster.py",
        ("tests/algorithm/test_webster.py", "tests/algorithm/test_assign_static.py",
         "tests/algorithm/test_assign_dynamic.py"),
    ),
)


def default_workdir() -> Path:
    cache = os.environ.get("BINDING_SCHEDULER_CACHE") or str(Path.home() / ".cache" / "binding-scheduler")
    return Path(cache) / "mutation"


def toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def export(source: str, into: Path) -> Path:
    """The files the tests need, from `source`: a git revision (its committed tree: other people's uncommitted
    edits in this working tree stay out) or "worktree" (the files as they are now)."""
    tree = into / "tree"
    tree.mkdir(parents=True)
    if source == "worktree":
        ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache")
        for name in COPIED:
            path = ROOT / name
            if path.is_dir():
                shutil.copytree(path, tree / name, symlinks=True, ignore=ignore)
            else:
                shutil.copy2(path, tree / name)
        return tree
    archive = subprocess.run(["git", "archive", "--format=tar", source, *COPIED], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def workspace(workdir: Path, target: Target, source: str) -> Path:
    """A fresh workspace for one module: our files laid out the way mutmut expects."""
    space = workdir / target.module.replace("/", "-").removesuffix(".py")
    if space.exists():
        shutil.rmtree(space)
    space.mkdir(parents=True)
    tree = export(source, space)
    shutil.move(tree / "operator" / "binding_scheduler", space / "src" / "binding_scheduler")
    shutil.move(tree / "tests", space / "tests")
    shutil.move(tree / "testsupport", space / "testsupport")
    shutil.copytree(tree / "examples", space / "examples", symlinks=False,  # links into operator/: resolve them
                    ignore_dangling_symlinks=True)
    for link in (space / "examples").iterdir():
        if link.is_symlink():
            target_path = space / "src" / "binding_scheduler" / "examples" / link.name
            link.unlink()
            shutil.copy2(target_path, link)
    for name in ("crds", "charts"):
        shutil.move(tree / name, space / name)
    config = (tree / "pyproject.toml").read_text()
    shutil.rmtree(tree)
    config += (
        "\n[tool.mutmut]\n"
        'source_paths = ["src/"]\n'
        f'only_mutate = ["src/binding_scheduler/{target.module}"]\n'
        f"pytest_add_cli_args_test_selection = {toml_list(target.tests)}\n"
        f'pytest_add_cli_args = ["-p", "no:cacheprovider", "--timeout={PER_TEST_TIMEOUT}"]\n'
        'also_copy = ["testsupport/", "examples/", "crds/", "charts/"]\n'
        "use_git_change_detection = false\n"
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER}\n"
    )
    (space / "pyproject.toml").write_text(config)
    return space


@dataclass
class Result:
    module: str
    counts: dict[str, int]
    survivors: list[str]
    seconds: float

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def killed(self) -> int:
        return self.counts.get("killed", 0) + self.counts.get("timeout", 0)

    @property
    def score(self) -> float:
        judged = self.total - self.counts.get("no tests", 0) - self.counts.get("skipped", 0)
        return 100.0 * self.killed / judged if judged else 0.0


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # mutmut forks a child per mutant from a process whose tests have started gRPC's threads; without gRPC's fork
    # support those children crashed (SIGABRT/SIGSEGV) or hung to the timeout, about 30 s each on runtime.py.
    env["GRPC_ENABLE_FORK_SUPPORT"] = "1"
    return env


def run(target: Target, workdir: Path, source: str, *, show: bool) -> Result:
    space = workspace(workdir, target, source)
    started = time.monotonic()
    log = space / "mutmut-run.log"
    with log.open("w") as out:
        subprocess.run([str(MUTMUT), "run", "--max-children", "2"], cwd=space, env=environment(), stdout=out,
                       stderr=subprocess.STDOUT, check=False)
    seconds = time.monotonic() - started
    listing = subprocess.run([str(MUTMUT), "results", "--all", "true"], cwd=space, env=environment(),
                             capture_output=True, text=True, check=False).stdout
    counts: dict[str, int] = {}
    survivors: list[str] = []
    for line in listing.splitlines():
        match = re.match(r"\s*(\S+): (.+)$", line)
        if not match:
            continue
        name, status = match.group(1), match.group(2).strip()
        counts[status] = counts.get(status, 0) + 1
        if status == "survived":
            survivors.append(name)
    if show:
        for name in survivors:
            diff = subprocess.run([str(MUTMUT), "show", name], cwd=space, env=environment(), capture_output=True,
                                  text=True, check=False).stdout
            print(f"--- {name}\n{diff}")
    return Result(target.module, counts, survivors, seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", help="modules under binding_scheduler/ (default: all)")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--show", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--workdir", type=Path, default=default_workdir(), help="where the workspaces go")
    parser.add_argument("--source", default="HEAD",
                        help='a git revision to test (default HEAD: commit first), or "worktree" for the files as '
                             "they are")
    args = parser.parse_args()
    by_module = {t.module: t for t in TARGETS}
    unknown = [m for m in args.modules if m not in by_module]
    if unknown:
        parser.error(f"unknown module(s): {', '.join(unknown)}; known: {', '.join(by_module)}")
    chosen = [by_module[m] for m in args.modules] if args.modules else list(TARGETS)
    if args.list:
        for target in chosen:
            print(f"{target.module}: {' '.join(target.tests)}")
        return 0
    if not MUTMUT.exists():
        sys.exit(f"mutation: {MUTMUT} is missing: install the test extras (pip install -e '.[test]')")
    results = []
    for target in chosen:
        print(f"mutating {target.module} ...", flush=True)
        result = run(target, args.workdir, args.source, show=args.show)
        results.append(result)
        print(f"  {result.killed}/{result.total} killed ({result.score:.0f}%) in {result.seconds:.0f} s: "
              f"{result.counts}; survivors: {' '.join(result.survivors) or 'none'}", flush=True)
    print("\n| module | mutants | killed | survived | other | score | minutes |\n|---|---|---|---|---|---|---|")
    for r in results:
        other = r.total - r.killed - len(r.survivors)
        print(f"| {r.module} | {r.total} | {r.killed} | {len(r.survivors)} | {other} | {r.score:.0f}% | "
              f"{r.seconds / 60:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
