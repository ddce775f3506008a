"""The long differential run: `simulate` against Karmada v1.18.2's scheduler (karmada-oracle) on many cases.

    .venv/bin/python -m scripts.differential --cases 20000 --seed 1 [--batch 500] [--out DIR] [--parallel 16]
                                             [--workload-affinity | --fleet-size CLUSTERS]

The same generator (testsupport/oracle/strategies.py) and the same comparison, with its allowances, as
tests/oracle/test_differential.py, in batches: batch b of seed N is generated with hypothesis seed
N * 1_000_000 + b (plus one `known_cases` case per shape of a directly created binding), so a run is
reproducible. Prints the counts (cases, bindings, identical, each allowance by
name, divergences) after every batch and at the end, and writes each diverging case as an input file into
the output folder (default: differential-out/ in the current directory) with a .txt beside it saying how to
reproduce it and what differs. Exit status 1 when any case diverged. `--workload-affinity` draws the cases of
gate WorkloadAffinity instead (`workload_affinity_cases`: settled group members and one subject each);
`--fleet-size 5000` cases over fleets of exactly that many clusters instead (`fleet_scale_cases`, 3-6 bindings
each; use a small --batch: a case at 5,000 clusters takes seconds on each side).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from testsupport.oracle import differential
from testsupport.oracle.strategies import DIRECT_EDGES, fleet_scale_cases, known_cases, workload_affinity_cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=20000, help="how many cases (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="the run's seed (default 1)")
    parser.add_argument("--batch", type=int, default=500, help="cases per batch and oracle process (default 500)")
    parser.add_argument("--parallel", type=int, default=16, help="cases the oracle runs at once (default 16)")
    parser.add_argument("--start-batch", type=int, default=0,
                        help="begin at this batch (0-based): reruns or resumes part of a run; --cases counts from it")
    parser.add_argument("--out", type=Path, default=Path("differential-out"), help="where diverging cases go")
    parser.add_argument("--workload-affinity", action="store_true",
                        help="draw the cases of gate WorkloadAffinity (group members, then one subject)")
    parser.add_argument("--fleet-size", type=int, default=0, metavar="CLUSTERS",
                        help="cases over fleets of exactly this many clusters (default: drawn, 1 to 200)")
    args = parser.parse_args(argv)
    if args.fleet_size < 0 or (args.fleet_size and args.workload_affinity):
        parser.error("--fleet-size: a positive number of clusters, without --workload-affinity")

    tally = differential.Tally()
    started = time.monotonic()
    batches = (args.cases + args.batch - 1) // args.batch
    for done in range(batches):
        batch = args.start_batch + done
        count = min(args.batch, args.cases - done * args.batch)
        seed = args.seed * 1_000_000 + batch
        if args.workload_affinity:
            cases = differential.generate(count, seed, workload_affinity_cases())
        elif args.fleet_size:
            cases = fleet_scale_cases([args.fleet_size] * count, seed)
        else:
            known = known_cases(per_edge=1, seed=seed) if count > 4 * len(DIRECT_EDGES) else []
            cases = differential.generate(count - len(known), seed) + known
        for i, (case, verdicts) in enumerate(zip(cases, differential.run_batch(cases, args.parallel), strict=True)):
            tally.add(verdicts)
            if any(v.verdict == "divergence" for v in verdicts):
                args.out.mkdir(parents=True, exist_ok=True)
                path = differential.write_case(case, args.out / f"case-{seed}-{i}.yaml")
                report = differential.describe(case, verdicts, path)
                path.with_suffix(".txt").write_text(report + "\n")
                print(report, flush=True)
        elapsed = time.monotonic() - started
        print(f"[batch {done + 1}/{batches} (#{batch}), seed {seed}, {elapsed:.0f}s] {tally.summary()}", flush=True)
    print(f"seed {args.seed}: {tally.summary()}; {time.monotonic() - started:.0f}s")
    return 1 if tally.verdicts["divergence"] else 0


if __name__ == "__main__":
    sys.exit(main())
