"""The project's scripts, and the little that they and benchmarks/ share.

Every script and benchmark is a module run from the repository root, so that the root is on sys.path and the
tests' harnesses (`tests.realcluster`, `tests.operator.harness`, ...) and sibling modules import as packages:

    .venv/bin/python -m scripts.differential --cases 20000
    .venv/bin/python -m benchmarks.scale --clusters 1000

`binding_scheduler` is the interpreter's: the editable install of this checkout in the `.venv` that
`dev.py` makes. Another checkout's code (a second `git worktree` using the first one's `.venv`) runs with
`PYTHONPATH=operator` in front of the command.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""
