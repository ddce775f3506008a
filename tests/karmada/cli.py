"""`python3 dev.py karmada up|down|e2e` (run as `python -m tests.karmada ...`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from tests.karmada import suite
from tests.karmada.plane import SCHEDULERS, KarmadaError, KarmadaPlane, attach, start, stop
from tests.realcluster.controlplane import ROOT

STATE = ROOT / ".karmada"
REPORTS = ROOT / ".karmada-e2e"


def serving_line(plane: KarmadaPlane) -> str:
    members = ",".join(member.name for member in plane.members)
    return (f"karmada: serving {plane.karmada.url} (kubeconfig {plane.kubeconfig.relative_to(ROOT)}, "
            f"members {members})")


def up(scheduler: str) -> KarmadaPlane:
    started = time.monotonic()
    plane = start(STATE, scheduler=scheduler, tie_to_parent=False)
    print(serving_line(plane), flush=True)
    print(f"karmada: scheduler {scheduler}, started in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return plane


def e2e(scheduler: str, focus: str, skip: str, files: Sequence[str]) -> int:
    plane = None
    if (STATE / "plane.json").exists():
        running = attach(STATE)
        plane = running if running.scheduler == scheduler else None
    owned = plane is None
    if plane is None:
        plane = up(scheduler)
    REPORTS.mkdir(exist_ok=True)
    report = REPORTS / f"{scheduler}.json"
    try:
        found, seconds = suite.timed(suite.run, plane, report, files=files or suite.SCHEDULING_SPEC_FILES,
                                     focus=focus, skip=skip)
    finally:
        if owned:
            stop(STATE)
    for result in found:
        line = f"{result.state:<8} {result.seconds:>6.1f}s  {result.file}: {result.name}"
        print(line + (f"\n           {result.failure}" if result.failure and result.state != "passed" else ""))
    print(f"karmada e2e ({scheduler}): {suite.summary(found)} in {seconds:.0f} s; report {report}, "
          f"log {report.with_suffix('.log')}")
    return 0 if found and all(r.state in ("passed", "skipped", "pending") for r in found) else 1


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 dev.py karmada")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("up", "e2e"):
        command = commands.add_parser(name)
        command.add_argument("--scheduler", choices=SCHEDULERS, default="ours")
    commands.choices["e2e"].add_argument("--focus", default="", help="ginkgo focus regex over spec names")
    commands.choices["e2e"].add_argument("--skip", default="", help="ginkgo skip regex over spec names")
    commands.choices["e2e"].add_argument("--file", action="append", default=[], dest="files",
                                         help="a spec file of test/e2e/suites/base (default: every scheduling one)")
    commands.add_parser("down")
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            up(args.scheduler)
            return 0
        if args.command == "down":
            print("karmada: stopped" if stop(STATE) else "karmada: nothing was running")
            return 0
        return e2e(args.scheduler, args.focus, args.skip, args.files)
    except KarmadaError as error:
        print(f"karmada: {error}", file=sys.stderr)
        return 1
