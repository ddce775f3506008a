"""Karmada's own karmada-scheduler and karmada-scheduler-estimator, built from their Go module by
`tools/karmada/build.sh` (cached outside the clone), run as processes against the real control plane; and our
`estimator-client`, which asks an estimator through Karmada's own client."""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from testsupport.realcluster.controlplane import (
    ROOT,
    SCHEDULER_NAMESPACE,
    ControlPlane,
    dying_with_parent,
    free_port,
    go_available,
)

BUILD_SCRIPT = ROOT / "tools" / "karmada" / "build.sh"


class KarmadaError(RuntimeError):
    """A Karmada binary could not be built or did not start; the message says why."""


def _build(*args: str) -> Path:
    if not go_available():
        raise KarmadaError("Karmada's binaries are built from its Go module and Go is not on PATH")
    result = subprocess.run(["bash", str(BUILD_SCRIPT), *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise KarmadaError(f"{BUILD_SCRIPT.relative_to(ROOT)} {' '.join(args)} failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


@functools.cache
def binaries() -> Path:
    """The directory holding karmada-scheduler and karmada-scheduler-estimator (built once: minutes)."""
    return _build()


@functools.cache
def estimator_client() -> Path:
    """Our estimator-client binary (tools/karmada/estimator-client)."""
    return _build("estimator-client")


class Process:
    """A process (a Karmada binary, or ours) in its own process group, logging to `log`; it dies with the test
    process."""

    def __init__(self, command: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> None:
        self.command = list(command)
        self.log = log
        with log.open("wb") as out:
            self.popen = subprocess.Popen(
                dying_with_parent(self.command), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=None if env is None else dict(env), start_new_session=True,
            )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def output(self, tail: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-tail:]

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL after `timeout`; the exit status."""
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
        return self.popen.wait()


def karmada_scheduler(plane: ControlPlane, scheduler_name: str, log: Path, *extra: str) -> Process:
    """karmada-scheduler as Karmada deploys it, with the admin's kubeconfig, for bindings of `scheduler_name`:
    its own Lease (named after the scheduler), metrics and health on free loopback ports, no estimator."""
    return Process([
        str(binaries() / "karmada-scheduler"),
        f"--kubeconfig={plane.kubeconfig_path}",
        f"--scheduler-name={scheduler_name}",
        f"--leader-elect-resource-name={scheduler_name}",
        f"--leader-elect-resource-namespace={SCHEDULER_NAMESPACE}",
        f"--metrics-bind-address=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{free_port()}",
        "--enable-scheduler-estimator=false",
        *extra,
    ], log)


class Estimator:
    """karmada-scheduler-estimator for one member cluster: plaintext gRPC on a free loopback port."""

    def __init__(self, kubeconfig: Path, cluster_name: str, log: Path) -> None:
        self.cluster_name = cluster_name
        self.port = free_port()
        self.health = free_port()
        self.process = Process([
            str(binaries() / "karmada-scheduler-estimator"),
            f"--kubeconfig={kubeconfig}",
            f"--cluster-name={cluster_name}",
            f"--server-port={self.port}",
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{self.health}",
        ], log)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def wait_serving(self, timeout: float = 60.0) -> None:
        """Until its gRPC port accepts connections (it listens only once its informers have synced)."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.process.alive():
                raise KarmadaError(f"karmada-scheduler-estimator exited:\n{self.process.output()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            if time.monotonic() > deadline:
                raise KarmadaError(f"karmada-scheduler-estimator not serving after {timeout:g}s:\n"
                                   f"{self.process.output()}")
            time.sleep(0.1)

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health}/healthz", timeout=2) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError):
            return False


def ask_with_karmadas_client(address: str, requests: Sequence[Mapping[str, Any]],
                             timeout: str = "5s") -> list[dict[str, Any]]:
    """The answers of the estimator at `address` to `requests`, asked through Karmada's own client
    (tools/karmada/estimator-client: the request and answer shapes are in its main.go)."""
    result = subprocess.run(
        [str(estimator_client()), f"--address={address}", f"--timeout={timeout}"],
        input=json.dumps(list(requests)), capture_output=True, text=True, timeout=60, check=False,
    )
    if result.returncode != 0:
        raise KarmadaError(f"estimator-client exited {result.returncode}: {result.stderr.strip()}")
    answers: list[dict[str, Any]] = json.loads(result.stdout)
    return answers
