"""Karmada's own scheduler and ours, side by side on one real control plane, over a generated fleet.

    .venv/bin/python -m scripts.side_by_side [--clusters 30] [--bindings 200] [--seed 1] [--quiet 5] [--keep DIR]
                                             [--show]

It starts a real kube-apiserver + etcd (testsupport/realcluster), creates a fleet of Clusters (regions, zones,
providers, labels, taints, API enablements, resource summaries and models; Push and Pull; status through
/status as the cluster controller writes it) and bindings of every kind (Duplicated, static weights, dynamic
and aggregated division, spread by cluster and by region, cluster affinities with fallback terms,
tolerations, evictions, some already holding spec.clusters, some unschedulable). Every binding is made twice,
the copies differing only in `spec.schedulerName` and namespace (ClusterResourceBindings: in a name prefix):
one copy for karmada-scheduler v1.18.2 (built by tools/karmada/build.sh, run with the admin's kubeconfig),
one for `binding-scheduler run` (as its ServiceAccount), each with its own Lease and the same flags.

When every binding of both copies has settled (a Scheduled condition for its current generation, or the
generation recorded without one, and no change for --quiet seconds), it compares each pair: spec.clusters,
the Scheduled condition's status, reason and message (the copy's namespace and name prefix written as
<namespace> and <prefix>), and status.schedulerObservingAffinityName (Go: SchedulerObservedAffinityName). It
prints the number of identical bindings and a diff for each different one, and exits 1 if any differ in a way
docs/compatibility.md does not list (the ones it recognises, each checked narrowly: a FitError message that
Karmada's random filter order explains, explained_by_filter_order; a binding that needed no scheduling and had
no condition, explained_by_no_lost_condition).
The generators and the comparison live in testsupport/realcluster/side_by_side.py, which
tests/e2e/test_side_by_side.py runs on a small fleet.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from testsupport.realcluster.controlplane import ControlPlaneError, start, stop
from testsupport.realcluster.side_by_side import run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=30)
    parser.add_argument("--bindings", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", type=float, default=5.0, help="seconds without a change that count as settled")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--keep", type=Path, help="keep both schedulers' logs in this directory")
    parser.add_argument("--show", action="store_true", help="also print the outcome of each identical binding")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="side-by-side-") as temporary:
        workdir = args.keep or Path(temporary)
        workdir.mkdir(parents=True, exist_ok=True)
        state = Path(temporary) / "controlplane"
        try:
            plane = start(state, tie_to_parent=True)
        except ControlPlaneError as error:
            print(f"side by side: the control plane did not start: {error}", file=sys.stderr)
            return 2
        try:
            report = run(plane, clusters=args.clusters, bindings=args.bindings, seed=args.seed, workdir=workdir,
                         quiet=args.quiet, timeout=args.timeout)
        finally:
            stop(state)
    print(report.render(show=args.show))
    undocumented = [d for d in report.differences if d.documented is None]
    return 0 if not undocumented and not report.unsettled else 1


if __name__ == "__main__":
    sys.exit(main())
