"""The golden file of `simulate` on examples/ (tests/cli/golden/examples-simulate.json) is written only by this
command, never by a test: a change of decisions shows up as a diff to review, not as a silently updated file.

    .venv/bin/python -m scripts.regen_golden          # rewrite it: `binding-scheduler simulate -f examples/ -o json`
    .venv/bin/python -m scripts.regen_golden --check  # exit 1 (with a diff) when it is not what simulate prints

Run it from the repository root with the project's interpreter (`.venv/bin/python`, or any Python where
binding_scheduler imports: scripts/__init__.py says which one that is). Before committing a rewrite, run
`pytest tests/cli/test_golden_oracle.py`: it holds the file against Karmada's own scheduler
(tools/karmada-oracle), allowing only the differences docs/compatibility.md lists.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import sys

from binding_scheduler.cli.main import main as binding_scheduler
from scripts import ROOT

GOLDEN = ROOT / "tests" / "cli" / "golden" / "examples-simulate.json"
EXAMPLES = ROOT / "examples"


def simulated() -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = binding_scheduler(["simulate", "-f", str(EXAMPLES), "-o", "json"])
    if code != 0:
        sys.exit(f"regen_golden: simulate exited {code}:\n{err.getvalue()}")
    return out.getvalue()


def main() -> int:
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit(__doc__)
    now = simulated()
    before = GOLDEN.read_text() if GOLDEN.exists() else ""
    if now == before:
        print(f"{GOLDEN.relative_to(ROOT)} is current")
        return 0
    diff = "".join(difflib.unified_diff(before.splitlines(True), now.splitlines(True), "golden", "simulate"))
    if check:
        print(f"{GOLDEN.relative_to(ROOT)} differs from simulate's output:\n{diff}")
        return 1
    GOLDEN.write_text(now)
    print(f"rewrote {GOLDEN.relative_to(ROOT)}:\n{diff}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
