"""Run `binding-scheduler` with the garbage collector timed: `python -m benchmarks.gc_timing FILE ARGS...`.

Each full (generation 2) collection appends a line to FILE: when, how long it took, and the totals so far over
every collection. A collection's time is charged by a sampling profiler to whatever allocation set it off, so
this is how `python -m benchmarks.scale --gc-stats` tells the collector's share from the code's.
"""

from __future__ import annotations

import gc
import runpy
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    out = Path(sys.argv[1])
    totals = {"seconds": 0.0, "collections": 0, "full": 0, "full_seconds": 0.0}
    began = [0.0]

    def timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
            return
        took = time.perf_counter() - began[0]
        totals["seconds"] += took
        totals["collections"] += 1
        if info["generation"] == 2:
            totals["full"] += 1
            totals["full_seconds"] += took
            with out.open("a") as log:
                log.write(f"{time.strftime('%H:%M:%S')} full collection {totals['full']:.0f} took {took:.3f} s; "
                          f"all collections {totals['seconds']:.2f} s ({totals['collections']:.0f}), "
                          f"full ones {totals['full_seconds']:.2f} s\n")

    gc.callbacks.append(timed)
    sys.argv = ["binding-scheduler", *sys.argv[2:]]
    runpy.run_module("binding_scheduler.cli.main", run_name="__main__")


if __name__ == "__main__":
    main()
