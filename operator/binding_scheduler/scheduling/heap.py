"""Giving the C heap's free pages back to the operating system once a burst of passes is over.

Python keeps its objects over 512 bytes in the C library's heap: JSON bodies as they arrive, a binding's list of
placed clusters (8 bytes an entry: 6 KiB for 720 clusters), numpy arrays. glibc hands freed memory back only
from the top of its heap, so after a burst of decisions the holes between the objects that stay are still
counted as the process's resident memory, and against its container's memory limit. `malloc_trim(0)` gives back
every whole free page of those holes. Measured on 20,000 bindings over 1,000 clusters after a relabel and a
cluster deletion re-decided 15,000 of them: 589 MiB resident before a trim, 423 MiB after.

A trim has a price: the pages it gives back that the heap uses again fault in afresh (~14 us each on this
project's machine), and trimming once a minute through a 50,000-binding cold start cost several percent of
its CPU. So the heap is trimmed when the passes pause (`TrimPolicy`: no pass started for `QUIET` seconds
after some did), and at most every `BUSY_EVERY` seconds while they never do. The trim runs in a worker thread
(the event loop goes on; C allocations wait on the heap's lock while it walks the free chunks: ~90 ms for
330 MiB of holes). Only where the C library has `malloc_trim` (glibc); elsewhere nothing runs.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

QUIET = 5.0
"""Seconds without a new pass after which a burst counts as over."""
BUSY_EVERY = 600.0
"""Seconds between two trims at most while passes never pause."""
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

Trim = Callable[[int], int]


@dataclass
class TrimPolicy:
    """When to trim, from a count of the passes started so far, looked at every `quiet` seconds."""

    started: int = 0
    """The count at the last trim (or at the start)."""
    trimmed_at: float = 0.0
    last_seen: int = 0
    busy_every: float = BUSY_EVERY

    def due(self, started: int, now: float) -> bool:
        """Whether to trim now that `started` passes have started (seen `quiet` seconds after the last look):
        some ran since the last trim, and none started since the last look or the passes have been busy for
        `busy_every` seconds."""
        paused = started == self.last_seen
        self.last_seen = started
        if started == self.started:
            return False
        if paused or now - self.trimmed_at >= self.busy_every:
            self.started, self.trimmed_at = started, now
            return True
        return False


def malloc_trim() -> Trim | None:
    """The C library's `malloc_trim`, or None where it has none (musl, macOS, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


async def trim_heap(passes_started: Callable[[], int], *, quiet: float = QUIET, busy_every: float = BUSY_EVERY,
                    trim: Trim | None = None) -> None:
    """Trim the C heap as `TrimPolicy` says, looking every `quiet` seconds, until cancelled (at once when there
    is no `malloc_trim`)."""
    trim = trim if trim is not None else malloc_trim()
    if trim is None:
        logger.debug("no malloc_trim in this C library: freed heap memory stays with the process")
        return
    loop = asyncio.get_running_loop()
    started = passes_started()
    policy = TrimPolicy(started, loop.time(), started, busy_every)
    while True:
        await asyncio.sleep(quiet)
        if not policy.due(passes_started(), loop.time()):
            continue
        before, began = resident_mib(), time.perf_counter()
        await loop.run_in_executor(None, trim, 0)
        logger.debug("C heap trimmed in %.0f ms: resident %s -> %s MiB", (time.perf_counter() - began) * 1000,
                     before, resident_mib())


def resident_mib() -> int | None:
    """This process's resident memory in MiB (Linux's /proc), or None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * PAGE_SIZE >> 20
