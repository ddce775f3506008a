"""The product without devcluster, an optional part (binding-scheduler-devcluster, the `devcluster` extra): every
command but the two that start it works, and those two say what to install in one line, exit 1. From the wheels
themselves: tests/packaging/test_wheel.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "cli" / "golden" / "examples-simulate.json"

SCENARIO = """
import contextlib, io, json, sys
sys.modules["binding_scheduler.devcluster"] = None  # as if not installed
from binding_scheduler.cli.main import main

seen = {}
for name, argv in (("simulate", ["simulate", "-f", "examples", "-o", "json"]),
                   ("explain", ["explain", "-f", "examples", "--binding", "shop/checkout-deployment"]),
                   ("misspelt", ["simulate", "-f", sys.argv[1], "--strict"]),
                   ("demo", ["demo"]), ("devcluster", ["devcluster"])):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    seen[name] = [code, out.getvalue(), err.getvalue()]
seen["imported"] = sorted(name for name in sys.modules if name.startswith("binding_scheduler.devcluster."))
print(json.dumps(seen))
"""


def test_commands_run_without_devcluster(tmp_path: Path) -> None:
    misspelt = tmp_path / "bindings.yaml"
    misspelt.write_text((ROOT / "examples" / "bindings.yaml").read_text().replace("placement:", "placment:", 1))
    result = subprocess.run([sys.executable, "-c", SCENARIO, str(misspelt)], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    code, out, err = seen["simulate"]
    assert code == 0 and json.loads(out) == json.loads(GOLDEN.read_text())
    code, out, err = seen["explain"]
    assert (code, err) == (0, "") and "shop/checkout-deployment" in out
    code, out, err = seen["misspelt"]  # the field validation reads the CRDs the main package carries
    assert code == 2 and 'unknown field "spec.placment"' in err, err
    install = "pip install 'binding-scheduler[devcluster]'"
    assert seen["demo"] == [1, "", f"error: the demo needs the embedded API server: {install}\n"]
    assert seen["devcluster"] == [1, "", f"error: the devcluster command needs the embedded API server: {install}\n"]
    assert seen["imported"] == []
