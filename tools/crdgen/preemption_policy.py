"""Adds `spec.schedulePriority.preemptionPolicy` (karmada-io/karmada PR #7832, binding priority preemption, not
merged) to a generated v1.18.2 binding CRD, in place.

The PR declares the field an enum of `PreemptLowerPriority` and `Never`, and required within `schedulePriority`.
It is added here as the enum only: Karmada v1.18.2's detector writes `schedulePriority` without it, and a
required field would make the API server refuse those bindings (docs/compatibility.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

PRIORITY = """                properties:
                  priority:
                    default: 0
"""
POLICY = """                properties:
                  preemptionPolicy:
                    description: |-
                      PreemptionPolicy says whether this binding may preempt bindings of lower priority
                      when it fits on no cluster (PriorityBasedPreemptiveScheduling).
                      Absent, it is Never.
                    enum:
                    - PreemptLowerPriority
                    - Never
                    type: string
                  priority:
                    default: 0
"""


def main(path: Path) -> None:
    text = path.read_text()
    if text.count(PRIORITY) != 1:
        sys.exit(f"{path}: expected spec.schedulePriority's properties once, found them {text.count(PRIORITY)} times")
    path.write_text(text.replace(PRIORITY, POLICY))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
