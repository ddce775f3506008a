#!/usr/bin/env python3
"""Plant known bugs, one at a time, and check that the tests guarding each one turn red, quickly.

Each bug is an exact text replacement in one product file (it must match exactly once, so a refactoring that
moves the code makes this script fail loudly instead of silently planting nothing). The bug is planted in a
temporary copy of the committed tree (HEAD, or `--source REV|worktree`), never in this working tree, and the
copy's `operator/` is put first on `PYTHONPATH`, so the tests (and the processes they start) import the planted
code. For each bug only the few test files that guard it run, so the whole script takes minutes.

A bug counts as caught only when a test *fails*; a test that fails by running into the pytest-timeout (a hang)
is reported as "hang", which is not good enough: a planted bug must fail within its test's own waits.

    .venv/bin/python -m scripts.planted_bugs                 # every bug, then the table
    .venv/bin/python -m scripts.planted_bugs --list          # the bugs and their tests
    .venv/bin/python -m scripts.planted_bugs gate-never-raises drain-overruns-deadline
    .venv/bin/python -m scripts.planted_bugs --baseline      # first: the same tests pass without any bug

Exit status 0 when every bug run was caught (and the baseline, if asked, passed).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("operator", "tests", "testsupport", "examples", "crds", "charts", "pyproject.toml")
TIMEOUT = 60  # seconds per test: well above what any of the selected tests needs, far below the suite's 300 s

PKG = "operator/binding_scheduler"


@dataclass(frozen=True)
class Bug:
    name: str
    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


BUGS: tuple[Bug, ...] = (
    Bug(
        "shutdown-leaves-gate-open",
        "shutdown no longer closes the write gate",
        f"{PKG}/scheduling/lifecycle/service.py",
        '        self.gate.close("scheduler shut down")\n',
        "",
        (
            "tests/shutdown/test_reproduction.py",
            "tests/shutdown/test_gate_after_shutdown.py",
        ),
    ),
    Bug(
        "no-stopping-guard",
        "the guard that refuses a commit once stopping (StoppingError) removed",
        f"{PKG}/scheduling/lifecycle/runtime.py",
        '            raise StoppingError(f"pass for {tracker.key} reached its commit point after the stop")\n',
        "            pass\n",
        (
            "tests/scheduling/test_runtime.py",
            "tests/shutdown/test_reproduction.py",
            "tests/scheduling/test_drain.py",
        ),
    ),
    Bug(
        "drain-waits-5s-longer",
        "the drain waits 5 s past its deadline",
        f"{PKG}/scheduling/lifecycle/runtime.py",
        "timeout=max(drain_timeout, 0.0))",
        "timeout=max(drain_timeout, 0.0) + 5.0)",
        (
            "tests/scheduling/test_runtime.py",
            "tests/shutdown/test_reproduction.py",
            "tests/scheduling/test_drain.py",
        ),
    ),
    Bug(
        "drain-overruns-not-cancelled",
        "passes that overrun the drain deadline are not cancelled",
        f"{PKG}/scheduling/lifecycle/runtime.py",
        "            for task in pending:\n                task.cancel()\n",
        "",
        (
            "tests/scheduling/test_runtime.py",
            "tests/shutdown/test_reproduction.py",
            "tests/scheduling/test_drain.py",
        ),
    ),
    Bug(
        "taints-ignore-no-execute",
        "the taint filter ignores NoExecute taints",
        f"{PKG}/algorithm/filters.py",
        'if taint.effect not in ("NoSchedule", "NoExecute"):',
        'if taint.effect not in ("NoSchedule",):',
        ("tests/algorithm/test_filters.py", "tests/algorithm/test_pipeline.py"),
    ),
    Bug(
        "conflict-goes-to-backoff",
        "a 409 on the spec write goes to backoff instead of an immediate requeue",
        f"{PKG}/scheduling/lifecycle/runtime.py",
        "self.queue.requeue_when_newer(info, read_version, _version(self.ctx.bindings.body(info.key) or {}))",
        "self.queue.push_backoff(info)",
        (
            "tests/scheduling/test_queue.py",
            "tests/scheduling/test_runtime.py",
            "tests/operator/test_conflicts.py",
        ),
    ),
    Bug(
        "gate-never-raises",
        "the write gate never raises",
        f"{PKG}/kube/gate.py",
        "        if self._reason is not None:\n            raise WriteGateClosed(self._reason)\n",
        "        return None\n",
        ("tests/kube/test_gate.py", "tests/kube/test_lease.py"),
    ),
    Bug(
        "lease-duration-doubled",
        "the lease duration doubled (the elector's own setting: the record it writes and its doubt)",
        f"{PKG}/kube/lease.py",
        "        self.lease_duration = lease_duration\n",
        "        self.lease_duration = lease_duration * 2\n",
        ("tests/kube/test_lease.py",),
    ),
    Bug(
        "lease-expiry-doubled",
        "the lease duration doubled when judging another holder's record expired",
        f"{PKG}/kube/lease.py",
        "return self._elapsed() > self._seen_at + float(duration)",
        "return self._elapsed() > self._seen_at + 2 * float(duration)",
        ("tests/kube/test_lease.py",),
    ),
    Bug(
        "drain-returns-before-passes-end",
        "the drain stops waiting for the passes and cancels the workers instead (cancelling an asyncio.wait does "
        "not cancel the task it awaits)",
        f"{PKG}/scheduling/lifecycle/runtime.py",
        "        if everything:\n            _, stuck = await asyncio.wait(everything, timeout=STRAGGLER_GRACE)\n",
        "        for worker in self._tasks:\n            worker.cancel()\n",
        ("tests/scheduling/test_drain.py",),
    ),
    Bug(
        "estimator-call-outlives-cancel",
        "an estimator call shielded from its pass's cancellation and awaited to its deadline",
        f"{PKG}/estimation/accurate.py",
        "                data: bytes = await call(request, timeout=remaining, metadata=metadata)\n",
        "                pending = asyncio.ensure_future(call(request, timeout=remaining, metadata=metadata))\n"
        "                try:\n"
        "                    data: bytes = await asyncio.shield(pending)\n"
        "                except asyncio.CancelledError:\n"
        "                    await asyncio.wait({pending})\n"
        "                    raise\n",
        ("tests/estimation/test_cancellation.py",),
    ),
    Bug(
        "cancelled-pass-counted-forgotten",
        "a pass cancelled before its commit point counted as `forgotten` in binding_scheduler_pass_outcomes_total",
        f"{PKG}/scheduling/lifecycle/runtime.py",
        "        if task.cancelled():\n            return PassOutcome.CANCELLED\n",
        "        if task.cancelled():\n            return PassOutcome.FORGOTTEN\n",
        ("tests/scheduling/test_drain.py",),
    ),
    Bug(
        "readyz-ignores-failing-watches",
        "/readyz ignores failing watches",
        f"{PKG}/scheduling/observability/health.py",
        "    return scheduling and watch_problem is None\n",
        "    return scheduling\n",
        ("tests/scheduling/test_health.py",),
    ),
    Bug(
        "stale-false-condition-not-owed",
        "a binding whose last decision landed without its condition, over a stale Scheduled=False, is not decided "
        "again",
        f"{PKG}/algorithm/triggers.py",
        '    return scheduled is None or scheduled.status != "True"\n',
        "    return scheduled is None\n",
        ("tests/algorithm/test_triggers.py", "tests/operator/test_lost_status.py"),
    ),
    Bug(
        "status-write-unfenced",
        "the status write sent without its resourceVersion",
        f"{PKG}/kube/bindings.py",
        '    body = {"metadata": {"resourceVersion": resource_version}, "status": dict(status)}\n',
        '    body = {"status": dict(status)}\n',
        ("tests/scheduling/test_pass_status_write.py", "tests/scheduling/test_pass_spec_write.py"),
    ),
    Bug(
        "unchanged-result-assumed",
        "a decision the binding already holds is assumed (a new leader counts running replicas twice)",
        f"{PKG}/scheduling/framework/runner.py",
        "        if not written and reservation.assumed and self.assumptions is not None:\n",
        "        if False:\n",
        ("tests/scheduling/test_pass_spec_write.py", "tests/operator/test_takeover_capacity.py"),
    ),
    Bug(
        "stop-without-budget",
        "the Lease release waits its whole renewDeadline, whatever is left of the stop's budget",
        f"{PKG}/scheduling/lifecycle/stop_budget.py",
        "    seconds = budget.share(renew_deadline, keep=CLOSE_RESERVE)\n",
        "    seconds = renew_deadline\n",
        ("tests/scheduling/test_service_sync.py",),
    ),
    Bug(
        "waiting-preemptors-not-woken",
        "a preemptor blocked by another's claim is not woken when that claim ends",
        f"{PKG}/scheduling/passes/preemption.py",
        "                del waiting[key]\n                self.on_free(key, priority)\n",
        "                pass\n",
        ("tests/scheduling/test_preemption_claims.py",),
    ),
)


@dataclass
class Outcome:
    bug: str
    verdict: str  # caught | NOT CAUGHT | hang | error
    detail: str
    seconds: float


def copy_repository(into: Path, source: str) -> Path:
    """The files the tests need, from `source`: a git revision (its committed tree, so other people's
    uncommitted edits in a shared working tree stay out) or "worktree" (the files as they are now)."""
    root = into / "repo"
    root.mkdir()
    if source != "worktree":
        archive = subprocess.run(["git", "archive", "--format=tar", source, *COPIED], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
        return root
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache")
    for name in COPIED:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, root / name, symlinks=True, ignore=ignore)
        elif path.exists():
            shutil.copy2(path, root / name)
    return root


def environment(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "operator"), str(root)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def check_imports_the_copy(root: Path) -> None:
    code = "import binding_scheduler; print(binding_scheduler.__file__)"
    printed = subprocess.run([sys.executable, "-c", code], cwd=root, env=environment(root), capture_output=True,
                             text=True, check=True).stdout.strip()
    if not printed.startswith(str(root)):
        sys.exit(f"planted_bugs: the copy imports {printed}, not its own package: refusing to run")


def run_tests(root: Path, tests: tuple[str, ...], *, skip_missing: bool = False) -> tuple[int, str, float]:
    missing = [t for t in tests if not (root / t.split("::")[0]).exists()]
    if missing and not skip_missing:
        raise FileNotFoundError(f"no such test file: {', '.join(missing)}")
    present = [t for t in tests if t not in missing]
    report = root / "planted-bugs-junit.xml"
    report.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--timeout={TIMEOUT}",
               f"--junitxml={report}", *present]
    started = time.monotonic()
    result = subprocess.run(command, cwd=root, env=environment(root), capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr, time.monotonic() - started


def summary(output: str) -> str:
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    return lines[-1].strip("= ") if lines else output.strip().splitlines()[-1] if output.strip() else ""


def failed_tests(report: Path) -> tuple[list[str], list[str]]:
    """(tests that failed, tests that ran into the pytest-timeout), from pytest's JUnit XML report."""
    failed, hung = set(), set()
    if not report.exists():
        return [], []
    for case in ElementTree.parse(report).iter("testcase"):
        for problem in (*case.iter("failure"), *case.iter("error")):
            text = f"{problem.get('message', '')} {problem.text or ''}"
            (hung if "Timeout" in text and "pytest-timeout" in text else failed).add(case.get("name", "?"))
    return sorted(failed), sorted(hung)


def plant(root: Path, bug: Bug) -> str:
    """Apply the bug; returns the file's original text (to restore)."""
    path = root / bug.path
    original = path.read_text()
    count = original.count(bug.old)
    if count != 1:
        raise ValueError(f"{bug.name}: the text to replace occurs {count} times in {bug.path} (must be exactly once)")
    path.write_text(original.replace(bug.old, bug.new))
    return original


def run_bug(root: Path, bug: Bug, *, skip_missing: bool = False) -> Outcome:
    try:
        original = plant(root, bug)
    except ValueError as error:
        return Outcome(bug.name, "error", str(error), 0.0)
    try:
        code, output, seconds = run_tests(root, bug.tests, skip_missing=skip_missing)
    finally:
        (root / bug.path).write_text(original)
    failures, hangs = failed_tests(root / "planted-bugs-junit.xml")
    if code == 0:
        return Outcome(bug.name, "NOT CAUGHT", summary(output), seconds)
    if not failures and not hangs:
        if re.search(r"\d+ passed", summary(output)) and "failed" not in summary(output):
            crash = output.strip().splitlines()[-1]  # every test passed, then pytest itself failed
            return Outcome(bug.name, "NOT CAUGHT", f"{summary(output)} (then pytest exited {code}: {crash})", seconds)
        return Outcome(bug.name, "error", summary(output) or output[-2000:], seconds)
    detail = f"{summary(output)}; failed: {', '.join(failures) or 'none'}"
    if hangs:
        return Outcome(bug.name, "hang", f"{detail}; timed out: {', '.join(hangs)}", seconds)
    return Outcome(bug.name, "caught", detail, seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bugs", nargs="*", help="names of the bugs to plant (default: all)")
    parser.add_argument("--list", action="store_true", help="list the bugs and their tests, run nothing")
    parser.add_argument("--baseline", action="store_true", help="first run every selected test without a bug")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    parser.add_argument("--source", default="HEAD",
                        help='the git revision to plant into (default HEAD: commit first), or "worktree" for the '
                             "files as they are")
    parser.add_argument("--skip-missing", action="store_true",
                        help="leave out listed test files that do not exist (to measure an older tree)")
    args = parser.parse_args()

    by_name = {bug.name: bug for bug in BUGS}
    unknown = [name for name in args.bugs if name not in by_name]
    if unknown:
        parser.error(f"unknown bug(s): {', '.join(unknown)}; known: {', '.join(by_name)}")
    chosen = [by_name[name] for name in args.bugs] if args.bugs else list(BUGS)
    if args.list:
        for bug in chosen:
            print(f"{bug.name}: {bug.what}\n  {bug.path}\n  tests: {' '.join(bug.tests)}")
        return 0

    scratch = Path(tempfile.mkdtemp(prefix="planted-bugs-"))
    ok = True
    try:
        root = copy_repository(scratch, args.source)
        check_imports_the_copy(root)
        if args.baseline:
            tests = tuple(dict.fromkeys(t for bug in chosen for t in bug.tests))
            code, output, seconds = run_tests(root, tests, skip_missing=args.skip_missing)
            print(f"baseline ({len(tests)} files, {seconds:.0f} s): {summary(output)}", flush=True)
            if code != 0:
                print(output[-5000:])
                return 1
        outcomes = []
        for bug in chosen:
            print(f"planting {bug.name} ...", flush=True)
            outcome = run_bug(root, bug, skip_missing=args.skip_missing)
            outcomes.append(outcome)
            print(f"  {outcome.verdict} in {outcome.seconds:.0f} s: {outcome.detail}", flush=True)
            ok = ok and outcome.verdict == "caught"
        print("\n| bug | what | verdict | seconds | detail |\n|---|---|---|---|---|")
        for bug, outcome in zip(chosen, outcomes, strict=True):
            print(f"| `{bug.name}` | {bug.what} | {outcome.verdict} | {outcome.seconds:.0f} | {outcome.detail} |")
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
