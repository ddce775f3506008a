"""The project's long runs, generators and checkers: thin command lines over the support code in `testsupport/`.

Every script is a module run from the repository root, so that the root is on sys.path and the tests' harnesses
(`testsupport.realcluster`, `testsupport.operator.harness`, `testsupport.oracle`, ...) import as packages:

    .venv/bin/python -m scripts.differential --cases 20000

`binding_scheduler` is the interpreter's: the editable install of this checkout in the `.venv` that
`dev.py` makes. Another checkout's code (a second `git worktree` using the first one's `.venv`) runs with
`PYTHONPATH=operator` in front of the command.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""
