"""docs/metrics.md lists every metric family /metrics exposes, and no other."""

from __future__ import annotations

import re
from pathlib import Path

from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics

DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def documented(markdown: str) -> set[str]:
    """The metric in the first column of each table row (`| \\`name\\` | ...`)."""
    return set(re.findall(r"^\| `([a-z_:][a-z0-9_:]*)`", markdown, flags=re.MULTILINE))


def exposed(metrics: SchedulerMetrics) -> set[str]:
    """Every family of the text format, named as its `# TYPE` line names it (a counter with `_total`)."""
    return {line.split()[2] for line in metrics.render().decode().splitlines() if line.startswith("# TYPE ")}


def test_metrics_md_lists_exposed_families() -> None:
    assert documented(DOCS.read_text(encoding="utf-8")) == exposed(SchedulerMetrics())
