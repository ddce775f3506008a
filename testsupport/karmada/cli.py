"""`python3 dev.py karmada up|down|e2e` (run as `python -m testsupport.karmada ...`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from testsupport.karmada import churn as churn_scenario
from testsupport.karmada import incluster, node, suite
from testsupport.karmada import restart as restart_scenario
from testsupport.karmada import rollout as rollout_scenario
from testsupport.karmada import table as spec_table
from testsupport.karmada.plane import (
    SCHEDULERS,
    KarmadaError,
    KarmadaPlane,
    Processes,
    attach,
    keep_logs,
    resident_memory,
    start,
    stop,
    swap_scheduler,
)
from testsupport.realcluster.controlplane import ROOT

STATE = ROOT / ".karmada"


class Report(Protocol):
    def to_json(self) -> str: ...


T = TypeVar("T", bound=Report)
REPORTS = ROOT / ".karmada-e2e"


def serving_line(plane: KarmadaPlane) -> str:
    members = ",".join(member.name for member in plane.members)
    kubeconfig = plane.kubeconfig.relative_to(ROOT) if plane.kubeconfig.is_relative_to(ROOT) else plane.kubeconfig
    return (f"karmada: serving {plane.karmada.url} (kubeconfig {kubeconfig}, "
            f"members {members})")


def up(scheduler: str, state: Path = STATE, *, in_cluster: bool = False, layout: str = "") -> KarmadaPlane:
    started = time.monotonic()
    if in_cluster:
        stop(state)  # a plane of its own that ran there before frees the node's bridge
    if in_cluster and (reason := node.readied()):
        raise KarmadaError(f"--in-cluster: {node.REQUIREMENT}; this machine: {reason}")
    plane = start(state, scheduler=scheduler, tie_to_parent=False, in_cluster=in_cluster, layout=layout)
    print(serving_line(plane), flush=True)
    memory = sum(resident_memory(state).values())
    print(f"karmada: scheduler {scheduler}, started in {time.monotonic() - started:.0f} s, "
          f"{memory / 2**20:.0f} MiB resident", file=sys.stderr)
    return plane


def e2e(scheduler: str, focus: str, skip: str, files: Sequence[str], poll_timeout: str,
        state: Path = STATE) -> int:
    """On the plane `dev.py karmada up` started (its scheduler swapped for `scheduler` if it runs another), or
    on one started for this run and stopped after it."""
    owned = not (state / "plane.json").exists()
    if owned:
        plane = up(scheduler, state)
    else:
        plane = attach(state)
        if plane.scheduler != scheduler:
            plane = swap_scheduler(plane, scheduler)
    REPORTS.mkdir(exist_ok=True)
    report = REPORTS / f"{scheduler}.json"
    chosen = tuple(files) or suite.SCHEDULING_SPEC_FILES
    try:
        found, seconds = suite.timed(suite.run, plane, report, files=chosen, focus=focus, skip=skip,
                                     poll_timeout=poll_timeout)
    finally:
        if owned:
            stop(state)
    found = [result for result in found if result.file in chosen]  # the report lists every spec of the suite
    for result in found:
        line = f"{result.state:<8} {result.seconds:>6.1f}s  {result.file}: {result.name}"
        print(line + (f"\n           {result.failure}" if result.failure and result.state != "passed" else ""))
    print(f"karmada e2e ({scheduler}): {suite.summary(found)} in {seconds:.0f} s; report {report}, "
          f"log {report.with_suffix('.log')}")
    return 0 if found and all(r.state in ("passed", "skipped", "pending") for r in found) else 1


def on_own_plane(name: str, scheduler: str, scenario: Callable[[KarmadaPlane, Processes], T], *,
                 in_cluster: bool = False) -> tuple[T, Path]:
    """`scenario` on a plane of its own (`.karmada-<name>/`), stopped after it with its logs kept; its report is
    written to `.karmada-e2e/<name>-<scheduler>.json` (the scenario's `to_json()`). Returns it and that path."""
    state = ROOT / f".karmada-{name}"
    plane = start(state, scheduler=scheduler, tie_to_parent=True, in_cluster=in_cluster)
    try:
        report = scenario(plane, Processes.of(state))
    finally:
        kept = keep_logs(state)
        stop(state)
        print(f"karmada {name}: the plane's logs are kept in {kept}", file=sys.stderr)
    REPORTS.mkdir(exist_ok=True)
    path = REPORTS / f"{name}-{scheduler}.json"
    path.write_text(report.to_json())
    return report, path


def restart(scheduler: str, bindings: int, delay: float) -> int:
    """The rolling-restart scenario (testsupport/karmada/restart.py) on a plane of its own, stopped after it."""
    report, path = on_own_plane("restart", scheduler, lambda plane, processes: restart_scenario.run(
        plane, processes, bindings=bindings, delay=delay))
    print(report.to_json())
    print(f"karmada restart ({scheduler}): {len(report.writes_after_exit)} writes by the old instance after it "
          f"exited, {len(report.stale_bindings)} bindings not on the newest decision; report {path}")
    return 0 if not report.writes_after_exit and not report.stale_bindings else 1


def churn(scheduler: str, workloads: int, restarts: int, kill_every: int, scale_ups: int) -> int:
    """Rolling restarts under policy churn, then scale-ups (testsupport/karmada/churn.py), on a plane of its own."""
    report, path = on_own_plane("churn", scheduler, lambda plane, processes: churn_scenario.run(
        plane, processes, workloads=workloads, restarts=restarts, kill_every=kill_every, scale_ups=scale_ups))
    print(f"karmada churn ({scheduler}): {report.summary()}; report {path}")
    return 0 if report.passed else 1


def rollout(scheduler: str | None, triggers: Sequence[str], bindings: int, delay: float) -> int:
    """The rollout scenario (testsupport/karmada/rollout.py), each trigger in turn, on an in-cluster plane of its own;
    without `scheduler`, with binding-scheduler then karmada-scheduler, and their table side by side."""
    if scheduler is None:
        ours, code = rollout_reports("ours", triggers, bindings, delay)
        karmada, _ = rollout_reports("karmada", triggers, bindings, delay)
        print(rollout_scenario.side_by_side(ours, karmada))
        return code
    _, code = rollout_reports(scheduler, triggers, bindings, delay)
    return code


def rollout_reports(scheduler: str, triggers: Sequence[str], bindings: int,
                    delay: float) -> tuple[list[rollout_scenario.RolloutReport], int]:
    if reason := node.readied():
        raise KarmadaError(f"rollout: {node.REQUIREMENT}; this machine: {reason}")
    chosen = [t for t in triggers or rollout_scenario.TRIGGERS if not (t == "upgrade" and scheduler == "karmada")]

    def scenario(plane: KarmadaPlane, _: Processes) -> rollout_scenario.Rollouts:
        reports = rollout_scenario.Rollouts()
        with rollout_scenario.estimator_relay(plane, delay) as link:
            for trigger in chosen:
                reports.append(rollout_scenario.run(plane, link, trigger=trigger, bindings=bindings))
                print(f"{scheduler}: {rollout_scenario.row(reports[-1])}", flush=True)
        return reports

    reports, path = on_own_plane("rollout", scheduler, scenario, in_cluster=True)
    print(rollout_scenario.table(reports))
    print(f"karmada rollout ({scheduler}): report {path}")
    return reports, 0 if all(report.passed for report in reports) else 1


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 dev.py karmada")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("up", "e2e", "restart", "churn", "rollout"):
        command = commands.add_parser(name)
        command.add_argument("--scheduler", choices=SCHEDULERS, default=None if name == "rollout" else "ours",
                             help="default: ours" + ("; for rollout: both, side by side" if name == "rollout" else ""))
    commands.choices["up"].add_argument(
        "--in-cluster", action="store_true",
        help="the host cluster is a real one (a node with a kubelet, containerd, CNI) and the scheduler runs in it "
             "as pods: the chart's, or karmada-scheduler's Deployment from Karmada's manifest")
    commands.choices["up"].add_argument("--layout", choices=sorted(incluster.LAYOUTS), default="",
                                        help="with --in-cluster: the Karmada install the host cluster is laid "
                                             f"out as, selected in the chart by karmadaAPI.layout (default "
                                             f"{incluster.DEFAULT_LAYOUT})")
    commands.choices["e2e"].add_argument("--focus", default="", help="ginkgo focus regex over spec names")
    commands.choices["e2e"].add_argument("--skip", default="", help="ginkgo skip regex over spec names")
    commands.choices["e2e"].add_argument("--file", action="append", default=[], dest="files",
                                         help="a spec file of test/e2e/suites/base (default: every scheduling one)")
    commands.choices["e2e"].add_argument("--poll-timeout", default="300s",
                                         help="the suite's --poll-timeout (how long a spec waits for an outcome)")
    commands.choices["restart"].add_argument("--bindings", type=int, default=6)
    commands.choices["restart"].add_argument("--delay", type=float, default=20.0,
                                             help="seconds the slow estimator holds each call")
    commands.choices["churn"].add_argument("--workloads", type=int, default=150)
    commands.choices["churn"].add_argument("--restarts", type=int, default=10)
    commands.choices["churn"].add_argument("--kill-every", type=int, default=3,
                                             help="every Nth stop is SIGKILL, the others SIGTERM")
    commands.choices["churn"].add_argument("--scale-ups", type=int, default=5,
                                             help="Divided Deployments scaled 3 -> 5 after the last takeover")
    commands.choices["rollout"].add_argument("--trigger", action="append", default=[], dest="triggers",
                                             choices=rollout_scenario.TRIGGERS,
                                             help="restart, upgrade (the chart only), delete, kill (default all)")
    commands.choices["rollout"].add_argument("--bindings", type=int, default=6)
    commands.choices["rollout"].add_argument("--delay", type=float, default=20.0,
                                             help="seconds the slow estimator holds each call")
    commands.add_parser("down")
    table = commands.add_parser("table", help="docs/karmada-e2e.md's table from the two e2e reports")
    table.add_argument("reports", nargs=2, metavar="REPORT.json", help="karmada-scheduler's, then ours")
    for command in commands.choices.values():
        command.add_argument("--state", type=Path, default=STATE,
                             help="the plane's state directory (default .karmada; another runs a second plane)")
    args = parser.parse_args(argv)
    state = args.state.resolve()
    try:
        if args.command == "up":
            if args.layout and not args.in_cluster:
                parser.error("--layout: only with --in-cluster")
            up(args.scheduler, state, in_cluster=args.in_cluster, layout=args.layout)
            return 0
        if args.command == "down":
            print("karmada: stopped" if stop(state) else "karmada: nothing was running")
            return 0
        if args.command == "table":
            return spec_table.main(args.reports)
        if args.command == "restart":
            return restart(args.scheduler, args.bindings, args.delay)
        if args.command == "rollout":
            return rollout(args.scheduler, args.triggers, args.bindings, args.delay)
        if args.command == "churn":
            return churn(args.scheduler, args.workloads, args.restarts, args.kill_every, args.scale_ups)
        return e2e(args.scheduler, args.focus, args.skip, args.files, args.poll_timeout, state)
    except KarmadaError as error:
        print(f"karmada: {error}", file=sys.stderr)
        return 1
