"""Speed measurements (never timed assertions in tests), each a module run from the repository root:
`.venv/bin/python -m benchmarks.NAME`, so that the root is on sys.path and the harnesses they drive
(`testsupport.realcluster`, `testsupport.operator.harness`, ...) import as packages. `binding_scheduler` is the
interpreter's: the editable install of this checkout in the `.venv` that `dev.py` makes.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""
