"""The images of one static binary each (scripts/binary_image.py): Karmada's karmada-scheduler under Karmada's
name, and our pause (tools/node/pause) under the sandbox image's name. Built through their command (Go builds the
binaries: without Go the module skips), read back from the archives, imported into a containerd of the test's
own under their full names and run there; pause also in a PID namespace of its own, to watch it reap orphans.

Containerd and the PID namespace need root: elsewhere those tests skip with one line. Seconds with the binaries
built (`dev.py test` builds Karmada's before the tests start; pause builds in about a second)."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts import binary_image as recipe
from scripts.image import EXIT_CANNOT, BuildError, CannotBuild, cache_dir, ensure_commands
from tests.deploy.containerd import Containerd, ContainerdError, containerd
from tests.deploy.observe import blob_name, read_json
from testsupport.realcluster.controlplane import ROOT, dying_with_parent

NEEDS_GO = "binary images: Go builds their binaries, and go is not on PATH"
NEEDS_ROOT = "binary images in containerd: needs root, Debian's containerd and runc (apt-get installs them as root)"
KARMADA = recipe.karmada_scheduler_reference()
PAUSE = recipe.PAUSE
IMAGES = {"karmada-scheduler": KARMADA, "pause": PAUSE}

pytestmark = pytest.mark.timeout(900)  # a first build on an empty Go cache compiles Karmada; each wait has its bound


@pytest.fixture(scope="module")
def built() -> dict[str, tuple[str, Path]]:
    """Each image's command's stdout and the archive it names."""
    found = {}
    for name in IMAGES:
        result = subprocess.run([sys.executable, "-m", "scripts.binary_image", name], cwd=ROOT, capture_output=True,
                                text=True, timeout=840, check=False)
        if result.returncode == EXIT_CANNOT:
            pytest.skip(f"{NEEDS_GO}: {result.stderr.strip()}")
        assert result.returncode == 0, result.stderr
        match = re.fullmatch(r"image: \S+ at (\S+) \(oci-archive\)\n", result.stdout)
        assert match is not None, result.stdout
        found[name] = (result.stdout, Path(match[1]))
    return found


@pytest.fixture(scope="module")
def pause_binary() -> Path:
    try:
        return recipe.pause_binary()
    except CannotBuild as error:
        pytest.skip(f"{NEEDS_GO}: {error}")


@pytest.fixture(scope="module")
def engine(built: dict[str, tuple[str, Path]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Containerd]:
    """A containerd of our own with both archives imported (as the node tier imports them: `ctr images import`)."""
    if os.geteuid() != 0:
        pytest.skip(NEEDS_ROOT)
    try:
        ensure_commands({"containerd": "containerd", "ctr": "containerd", "runc": "runc"})
    except BuildError as error:
        pytest.skip(f"{NEEDS_ROOT}: {error}")
    folder = tmp_path_factory.mktemp("containerd")
    try:
        with containerd(folder, f"binary-images-test-{os.getpid()}", launcher=dying_with_parent) as daemon:
            for _, archive in built.values():
                imported = daemon.ctr("images", "import", str(archive), timeout=120)
                assert imported.returncode == 0, imported.stderr
            yield daemon
    except ContainerdError as error:
        pytest.fail(str(error), pytrace=False)


def contents(archive: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, tarfile.TarInfo]]:
    """The index, the config, and the one layer's entries (name -> entry) of an archive."""
    with tarfile.open(archive) as tar:
        index = read_json(tar, "index.json")
        manifest = read_json(tar, blob_name(index["manifests"][0]))
        config = read_json(tar, blob_name(manifest["config"]))
        assert len(manifest["layers"]) == 1
        layer = tar.extractfile(blob_name(manifest["layers"][0]))
        assert layer is not None
        with tarfile.open(fileobj=gzip.GzipFile(fileobj=layer)) as entries:
            return index, config, {entry.name: entry for entry in entries}




def test_each_command_prints_contract_line_with_full_reference(built: dict[str, tuple[str, Path]]) -> None:
    for name, reference in IMAGES.items():
        stdout, archive = built[name]
        assert stdout == f"image: {reference} at {archive} (oci-archive)\n"
        assert archive == cache_dir() / f"{name}-{reference.rpartition(':')[2]}.oci.tar"
        assert not archive.resolve().is_relative_to(ROOT)  # outside the clone


def test_dev_py_images_command_builds_them_too(built: dict[str, tuple[str, Path]]) -> None:
    """`python3 dev.py image --pause` (scripts.image's flags): the same line, the archive already built."""
    result = subprocess.run([sys.executable, "-m", "scripts.image", "--pause"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=False)
    assert (result.returncode, result.stdout) == (0, built["pause"][0]), result.stderr
    assert "unchanged since it was built" in result.stderr


def test_index_names_each_image_for_containerd(built: dict[str, tuple[str, Path]]) -> None:
    """containerd 1.6 names an imported image by io.containerd.image.name; the OCI ref name is the tag."""
    for name, reference in IMAGES.items():
        index, _, _ = contents(built[name][1])
        assert index["manifests"][0]["annotations"] == {
            "io.containerd.image.name": reference, "org.opencontainers.image.ref.name": reference.rpartition(":")[2]}


def test_karmada_image_holds_binary_and_users(
    built: dict[str, tuple[str, Path]]
) -> None:
    _, config, entries = contents(built["karmada-scheduler"][1])
    assert {name: (entry.mode, entry.uid, entry.gid) for name, entry in entries.items()} == {
        "bin": (0o755, 0, 0), "bin/karmada-scheduler": (0o755, 0, 0), "etc": (0o755, 0, 0),
        "etc/group": (0o644, 0, 0), "etc/passwd": (0o644, 0, 0), "etc/ssl": (0o755, 0, 0),
        "etc/ssl/certs": (0o755, 0, 0), "etc/ssl/certs/ca-certificates.crt": (0o644, 0, 0),
        "tmp": (0o1777, 0, 0)}
    assert config["config"]["Entrypoint"] == [recipe.KARMADA_SCHEDULER] and "User" not in config["config"]
    assert config["config"]["Labels"]["org.opencontainers.image.version"] == KARMADA.rpartition(":")[2]


def test_pause_image_holds_only_pause_run_as_65535(built: dict[str, tuple[str, Path]], pause_binary: Path) -> None:
    _, config, entries = contents(built["pause"][1])
    assert [(name, entry.mode, entry.uid, entry.gid, entry.size) for name, entry in entries.items()] == [
        ("pause", 0o755, 0, 0, pause_binary.stat().st_size)]
    assert (config["config"]["Entrypoint"], config["config"]["User"]) == (["/pause"], "65535:65535")


def test_same_inputs_make_same_bytes(
    built: dict[str, tuple[str, Path]], pause_binary: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built again in another cache: byte for byte the archive the command made."""
    monkeypatch.setenv("BINDING_SCHEDULER_CACHE", str(tmp_path))
    again = recipe.pause_image(pause_binary)
    assert again.is_relative_to(tmp_path)
    assert sha256(again) == sha256(built["pause"][1])


def sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def test_tags_are_karmadas_and_kubeadms() -> None:
    """Karmada's Deployment names this repository and runs /bin/karmada-scheduler; kubeadm, at the Kubernetes
    release tools/controlplane pins, configures PAUSE as the sandbox image. Read from the Go module cache."""
    modules = Path(os.environ.get("GOMODCACHE") or Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg/mod")
    kubernetes = re.search(r"^\s*k8s\.io/kubernetes\s+(v\S+)", (ROOT / "tools/controlplane/go.mod").read_text(), re.M)
    assert kubernetes is not None
    constants = modules / f"k8s.io/kubernetes@{kubernetes[1]}/cmd/kubeadm/app/constants/constants.go"
    manifest = modules / (f"github.com/karmada-io/karmada@{recipe.karmada_version()}"
                          "/artifacts/deploy/karmada-scheduler.yaml")
    if not constants.exists() or not manifest.exists():
        pytest.skip(f"Kubernetes' or Karmada's source is not in the Go module cache ({modules})")
    pause = re.search(r'^\s*PauseVersion\s*=\s*"([^"]+)"', constants.read_text(), re.M)
    assert pause is not None
    assert PAUSE.rpartition(":")[2] == pause[1]
    text = manifest.read_text()
    assert f"image: {KARMADA.rpartition(':')[0]}:" in text
    assert re.search(rf"command:\s*\n\s*- {re.escape(recipe.KARMADA_SCHEDULER)}\n", text)


def test_containerd_imports_both_under_their_full_names(engine: Containerd) -> None:
    assert set(IMAGES.values()) <= set(engine.ctr("images", "ls", "-q").stdout.split())


def test_karmada_scheduler_reports_release_from_container(engine: Containerd) -> None:
    result = engine.run(KARMADA, recipe.KARMADA_SCHEDULER, "version")
    assert result.returncode == 0, result.stderr
    assert f'GitVersion:"{KARMADA.rpartition(":")[2]}"' in result.stdout


def wait_for(condition: Callable[[], Any], *, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return found


def status(pid: int) -> dict[str, str]:
    """/proc/<pid>/status as a dict (empty once the process is gone)."""
    try:
        lines = (Path("/proc") / str(pid) / "status").read_text().splitlines()
    except OSError:
        return {}
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def test_pause_runs_as_65535_and_ends_on_sigterm(engine: Containerd) -> None:
    name, command = engine.run_command(PAUSE, ["/pause"])
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def running() -> int:
            tasks = engine.ctr("tasks", "ls").stdout.splitlines()[1:]
            return next((int(pid) for task, pid, state in map(str.split, tasks)
                         if task == name and state == "RUNNING"), 0)

        pid = wait_for(running, timeout=30, what="the pause task to run")
        assert status(pid)["Uid"].split()[0] == "65535" and status(pid)["Gid"].split()[0] == "65535"
        exec_ = ["tasks", "exec", "--fifo-dir", str(engine.folder / "fifo"), "--exec-id"]
        second = engine.ctr(*exec_, "second", name, "/pause")
        assert second.returncode == 2 and "refusing to run as PID" in second.stderr + second.stdout, second
        shown = engine.ctr(*exec_, "version", name, "/pause", "-v")
        assert (shown.returncode, shown.stdout) == (0, f"pause {PAUSE.rpartition(':')[2]} (binding-scheduler)\n")
        time.sleep(0.3)
        assert process.poll() is None and running() == pid  # it stays up
        assert engine.ctr("tasks", "kill", "--signal", "SIGTERM", name).returncode == 0
        killed = time.monotonic()
        output, _ = process.communicate(timeout=10)
        assert time.monotonic() - killed < 1.0
    finally:
        if process.poll() is None:
            engine.ctr("tasks", "kill", "--signal", "SIGKILL", name)
            process.communicate(timeout=30)
    assert process.returncode == 0, output


def test_pause_outside_pid_1_refuses_unless_asked_version(pause_binary: Path) -> None:
    refused = subprocess.run([str(pause_binary)], capture_output=True, text=True, timeout=10, check=False)
    assert refused.returncode == 2 and "refusing to run as PID" in refused.stderr
    shown = subprocess.run([str(pause_binary), "-v"], capture_output=True, text=True, timeout=10, check=False)
    assert (shown.returncode, shown.stdout) == (0, f"pause {PAUSE.rpartition(':')[2]} (binding-scheduler)\n")


def children(pid: int) -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and status(int(entry.name)).get("PPid") == str(pid)]


def test_pause_as_pid_1_reaps_orphans_of_its_namespace(pause_binary: Path) -> None:
    """In a PID namespace of its own (util-linux's unshare): a shell entering it starts `sleep` and exits, so
    the kernel hands the orphan to pause; when it ends, pause reaps it (no zombie is left)."""
    if os.geteuid() != 0:
        pytest.skip("pause in a PID namespace of its own: needs root")
    outer = subprocess.Popen(dying_with_parent(["unshare", "--pid", "--fork", "--kill-child", str(pause_binary)]),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        pause = wait_for(lambda: next(iter(children(outer.pid)), 0), timeout=10, what="pause to start")
        orphaning = "sleep 1 >/dev/null 2>&1 &"  # its own output: nsenter's pipes end when the shell does
        entered = subprocess.run(["nsenter", "--target", str(pause), "--pid", "--", "sh", "-c", orphaning],
                                 capture_output=True, text=True, timeout=10, check=False)
        assert entered.returncode == 0, entered.stderr
        orphans = children(pause)
        assert [status(orphan).get("Name") for orphan in orphans] == ["sleep"]  # handed to pause, still running
        wait_for(lambda: not children(pause), timeout=5, what="pause to reap the orphan (no zombie left)")
        os.kill(pause, 15)
        output, _ = outer.communicate(timeout=10)
    finally:
        if outer.poll() is None:
            outer.kill()
            outer.communicate(timeout=10)
    assert outer.returncode == 0, output
