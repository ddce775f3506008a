"""`pip install` of the built wheel works without the source tree.

The wheel is built from a copy of the sources (the checkout gets no build/ or egg-info from it, and parallel
runs do not share one), installed into a fresh venv whose dependencies come from the package index through
pip's cache, and run from a folder outside the repository: `demo` on the bundled examples, `examples DIR`
then `simulate -f DIR`. Skipped, with one line, only when the package index cannot be reached.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
import venv
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "cli" / "golden" / "examples-simulate.json"
BUNDLED = ("bindings.yaml", "clusters.yaml", "scheduler-configuration.yaml")
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", ".tox", ".cluster", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


def index_url() -> str:
    """The index pip installs from here: PIP_INDEX_URL or pip's configuration, else PyPI."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".index-url") and value:
            return value.strip("'\"")
    return "https://pypi.org/simple/"


def unreachable(url: str) -> str | None:
    """Why the index cannot serve the dependencies, or None when it serves PyYAML's page. A TLS failure is no
    reason to skip: pip would meet it too, and the test then fails saying so."""
    context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/pyyaml/", timeout=15, context=context):
            return None
    except urllib.error.HTTPError as error:  # an answer, but not the index (a blocking proxy, a wrong URL)
        return f"HTTP {error.code} for its PyYAML page"
    except urllib.error.URLError as error:
        if isinstance(error.reason, ssl.SSLError):
            return None
        return str(error.reason)
    except OSError as error:  # a timeout while reading, a reset connection
        return str(error)


def run(cmd: list[str], what: str, cwd: Path | None = None, timeout: float = 300) -> str:
    """Run `cmd` with a clean environment; its stdout, after checking it exited 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"{what} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def check_wheel_contents(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"binding_scheduler", "binding_scheduler-0.1.0.dist-info"}, tops  # no tests/, no examples/
    assert not [n for n in names if "tests/" in n or "/test_" in n or "conftest" in n]
    assert {f"binding_scheduler/examples/{name}" for name in BUNDLED} <= set(names)
    crds = {Path(n).name for n in names if n.startswith("binding_scheduler/devcluster/crds/")}
    assert crds == {p.name for p in (ROOT / "crds").glob("*.yaml")}
    assert "binding_scheduler/devcluster/kubectl/openapi-builtins.yaml" in names  # kubectl's OpenAPI documents
    assert "binding_scheduler/py.typed" in names


def check_demo(out: str) -> None:
    assert "bindings from the bundled examples" in out, out
    table = out[out.index("BINDING") :].split("\n\n", maxsplit=1)[0].splitlines()[1:]
    rows = [line.split() for line in table if not line.startswith(" ")]  # not the reasons under a row
    assert len(rows) >= 5, out
    assert all(row[1] in ("True", "False") for row in rows), out  # every binding got its Scheduled condition
    assert ["shop/checkout-deployment", "True", "Success", "aws-use1-a:6,azure-weu:2,gcp-usw1:4"] in rows, out
    assert "1 pass was cancelled before it wrote anything" in out, out  # the restart with a held pass
    assert "nothing was written after the stop." in out, out
    assert "- instance-2 took the Lease and retried shop/checkout-deployment: Success, " in out, out


@pytest.mark.packaging
@pytest.mark.timeout(600)
def test_the_wheel_works_from_a_fresh_venv_outside_the_repository(tmp_path: Path) -> None:
    url = index_url()
    reason = unreachable(url)
    if reason is not None:
        pytest.skip(f"packaging: the package index {urlsplit(url).hostname} is unreachable ({reason})")
    sources, dist, work, env = tmp_path / "src", tmp_path / "dist", tmp_path / "work", tmp_path / "venv"
    shutil.copytree(ROOT, sources, symlinks=True, ignore=NOT_SOURCES)
    work.mkdir()

    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(sources)], "pip wheel")
    (wheel,) = dist.glob("binding_scheduler-*.whl")
    check_wheel_contents(wheel)

    venv.EnvBuilder(with_pip=True).create(env)
    run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], "pip install", timeout=400)
    where = run([str(env / "bin" / "python"), "-c", "import binding_scheduler; print(binding_scheduler.__file__)"],
                "import", cwd=work)
    assert Path(where.strip()).is_relative_to(env), where  # the wheel's copy, not the checkout

    command = str(env / "bin" / "binding-scheduler")
    check_demo(run([command, "demo", "--workers", "2"], "binding-scheduler demo", cwd=work, timeout=120))

    run([command, "examples", "fleet"], "binding-scheduler examples", cwd=work)
    assert sorted(p.name for p in (work / "fleet").iterdir()) == sorted(BUNDLED)
    again = subprocess.run([command, "examples", "fleet"], cwd=work, capture_output=True, text=True, check=False)
    assert again.returncode == 2, again  # no silent overwrite: bad input, status 2
    out = run([command, "simulate", "-f", "fleet", "-o", "json"], "binding-scheduler simulate", cwd=work)
    assert json.loads(out) == json.loads(GOLDEN.read_text())
