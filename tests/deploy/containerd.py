"""A containerd of the test's own: its root, state, sockets, runc root and FIFOs in one folder, its own
namespace; stopped with everything it started, its mounts and cgroups removed.

Debian's containerd 1.6 and runc (installed with apt-get when missing, as root). Only a few things land outside
the folder: the shims' sockets (`/run/containerd/s/<hash of our socket>`, fixed in containerd 1.6) and the
runc's cgroups (`/sys/fs/cgroup/<controller>/<namespace>/`); `stop` removes both, the first only when containerd
left it empty and this test made it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

DISABLED = (
    "io.containerd.grpc.v1.cri",  # Kubernetes' CRI: CNI and a sandbox image, none of which ctr needs
    "io.containerd.internal.v1.opt",  # would create /opt/containerd
    "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
    "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp",
)
SHIM_SOCKETS = Path("/run/containerd")
"""Where containerd 1.6's runc shim puts its sockets, whatever the state directory."""


class ContainerdError(Exception):
    pass


@dataclass
class Containerd:
    folder: Path
    namespace: str
    process: subprocess.Popen[bytes]
    made_run_dir: bool
    names: Iterator[int] = field(default_factory=lambda: iter(range(1, 1_000_000)))

    @property
    def address(self) -> str:
        return str(self.folder / "containerd.sock")

    def ctr(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.ctr_command(*args), capture_output=True, text=True, timeout=timeout, check=False)

    def ctr_command(self, *args: str) -> list[str]:
        return ["ctr", "--address", self.address, "--namespace", self.namespace, *args]

    def run_command(self, image: str, command: Sequence[str], *, read_only: bool = True, net_host: bool = False,
                    mounts: Sequence[str] = ()) -> tuple[str, list[str]]:
        """A container's id and the `ctr run --rm` that runs `command` in `image` (its whole argv: ctr replaces
        the image's entrypoint and command with it) as the image's user, with the root read-only."""
        name = f"c{next(self.names)}"
        options = ["--rm", "--runc-root", str(self.folder / "runc"), "--fifo-dir", str(self.folder / "fifo")]
        options += ["--read-only"] if read_only else []
        options += ["--net-host"] if net_host else []
        options += [arg for mount in mounts for arg in ("--mount", mount)]
        return name, self.ctr_command("run", *options, image, name, *command)

    def run(self, image: str, *command: str, timeout: float = 60, read_only: bool = True,
            net_host: bool = False, mounts: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
        """`command` in a container of `image` until it exits (its status is ctr's)."""
        _, cmd = self.run_command(image, command, read_only=read_only, net_host=net_host, mounts=mounts)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def config(folder: Path) -> str:
    disabled = ", ".join(f'"{plugin}"' for plugin in DISABLED)
    return (
        f'version = 2\nroot = "{folder / "root"}"\nstate = "{folder / "state"}"\ndisabled_plugins = [{disabled}]\n'
        f'[grpc]\n  address = "{folder / "containerd.sock"}"\n'
        f'[ttrpc]\n  address = "{folder / "containerd.sock.ttrpc"}"\n'
        '[debug]\n  address = ""\n[metrics]\n  address = ""\n'
    )


@contextmanager
def containerd(folder: Path, namespace: str, *, timeout: float = 30,
               launcher: Callable[[Sequence[str]], list[str]] = list) -> Iterator[Containerd]:
    """A running containerd answering on its own socket (started through `launcher`, e.g. one that ties it to
    the test process); everything it made removed afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(config(folder))
    made_run_dir = not SHIM_SOCKETS.exists()
    with (folder / "containerd.log").open("wb") as log:
        process = subprocess.Popen(launcher(["containerd", "--config", str(folder / "config.toml")]), stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    daemon = Containerd(folder, namespace, process, made_run_dir)
    try:
        wait_ready(daemon, timeout)
        yield daemon
    finally:
        stop(daemon)


def wait_ready(daemon: Containerd, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while daemon.ctr("version", timeout=timeout).returncode != 0:
        if daemon.process.poll() is not None or time.monotonic() > deadline:
            log = (daemon.folder / "containerd.log").read_text(errors="replace")
            raise ContainerdError(f"containerd did not answer on {daemon.address}: {log[-2000:]}")
        time.sleep(0.1)


def stop(daemon: Containerd) -> None:
    """Tasks killed and deleted, containers removed, containerd stopped, any shim it left stopped, mounts
    under the folder unmounted, cgroups and the folder removed."""
    if daemon.process.poll() is None:
        remove_containers(daemon)
        daemon.process.terminate()
        try:
            daemon.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            daemon.process.kill()
            daemon.process.wait()
    stop_shims(daemon)
    unmount_under(daemon.folder)
    for cgroup in Path("/sys/fs/cgroup").glob(f"*/{daemon.namespace}"):
        for child in sorted(cgroup.rglob("*"), reverse=True):
            if child.is_dir():
                with suppress(OSError):
                    child.rmdir()
        with suppress(OSError):
            cgroup.rmdir()
    for leftover in (SHIM_SOCKETS / "s", SHIM_SOCKETS / "fifo", SHIM_SOCKETS) if daemon.made_run_dir else ():
        with suppress(OSError):
            leftover.rmdir()
    shutil.rmtree(daemon.folder, ignore_errors=True)


def remove_containers(daemon: Containerd) -> None:
    tasks = daemon.ctr("tasks", "ls", "-q").stdout.split()
    for task in tasks:
        daemon.ctr("tasks", "kill", "--all", "--signal", "SIGKILL", task)
        daemon.ctr("tasks", "delete", "--force", task)
    for container in daemon.ctr("containers", "ls", "-q").stdout.split():
        daemon.ctr("containers", "rm", container)


def stop_shims(daemon: Containerd) -> None:
    """A shim outlives containerd by design: kill those of our containerd that are left (their pid files are
    in our state folder, and their command line names our socket, so no other process is hit)."""
    for pid_file in (daemon.folder / "state").glob("io.containerd.runtime.v2.task/*/*/shim.pid"):
        with suppress(ValueError, OSError):
            pid = int(pid_file.read_text())
            words = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
            if daemon.address.encode() in words:
                os.kill(pid, signal.SIGKILL)


def unmount_under(folder: Path) -> None:
    prefix = str(folder.resolve())
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for point in sorted((p for p in points if p == prefix or p.startswith(prefix + "/")), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)
