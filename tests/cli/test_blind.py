"""A scheduler its API server refuses says so at default verbosity, with the cause, and is not ready; once the
API server answers it says that too and becomes ready. Through the console script, as an operator meets it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import wait_until

BINDING_SCHEDULER = Path(sys.executable).parent / "binding-scheduler"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def readyz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def test_refused_standby_warns_and_is_unready(
    tmp_path: Path,
) -> None:
    health = free_port()
    log = tmp_path / "scheduler.log"
    with DevCluster.in_thread() as api, log.open("w") as out:
        api.store.ensure_namespace("karmada-system")
        refusal = api.faults.add(method="GET", path="leases/karmada-scheduler$", status=403)
        process = subprocess.Popen(
            [str(BINDING_SCHEDULER), "run", f"--kubeconfig={api.kubeconfig_path}", "--metrics-bind-address=0",
             f"--health-probe-bind-address=127.0.0.1:{health}"], stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            wait_until(lambda: "cannot take part in the election" in log.read_text(), timeout=30,
                       what="the refusal in the log")
            refused = readyz(health)
            refusal.remove()
            wait_until(lambda: readyz(health) == 200, timeout=30, what="readiness once the API server answers")
            time.sleep(0.1)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    lines = log.read_text().splitlines()
    (warning,) = [line for line in lines if "cannot take part in the election" in line]
    assert " WARNING " in warning
    assert "lease karmada-system/karmada-scheduler: 403 Forbidden" in warning
    assert refused == 503
    assert any(line.endswith("lease karmada-system/karmada-scheduler: the API server answers again") for line in lines)


def test_first_line_names_version_server_config_addresses(
    tmp_path: Path,
) -> None:
    from testsupport.operator.harness import config_spec, write_config

    health = free_port()
    config = write_config(tmp_path / "config.yaml", config_spec())
    with DevCluster.in_thread() as api:
        api.store.ensure_namespace("karmada-system")
        process = subprocess.Popen(
            [str(BINDING_SCHEDULER), "run", f"--kubeconfig={api.kubeconfig_path}", f"--config-file={config}",
             "--kube-api-qps=55", "--metrics-bind-address=0", f"--health-probe-bind-address=127.0.0.1:{health}",
             "--scheduler-name=mine"], stderr=subprocess.PIPE, text=True)
        try:
            said = iter(process.stderr.readline, "") if process.stderr else iter(())
            first = next(line for line in said if "binding_scheduler.scheduling.lifecycle.service" in line)
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=30)
    logged = first.split(" INFO    binding_scheduler.scheduling.lifecycle.service: ", 1)[1]
    assert logged.rstrip().rsplit(" as ", 1)[0] == (
        f"binding-scheduler 0.1.0: API server {api.url} from {api.kubeconfig_path} (context devcluster); "
        f"configuration from file {config} and flags --health-probe-bind-address --kube-api-qps "
        "--metrics-bind-address --scheduler-name; scheduler name mine; "
        f"metrics off, health on 127.0.0.1:{health}; lease karmada-system/karmada-scheduler"
    )


def test_standby_stopped_waiting_for_lease_stops_cleanly(
    tmp_path: Path,
) -> None:
    log = tmp_path / "scheduler.log"
    with DevCluster.in_thread() as api, log.open("w") as out:
        api.store.ensure_namespace("karmada-system")
        held = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        api.store.create("leases", {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "karmada-scheduler", "namespace": "karmada-system"},
            "spec": {"holderIdentity": "another", "leaseDurationSeconds": 3600, "renewTime": held, "acquireTime": held},
        })
        process = subprocess.Popen(
            [str(BINDING_SCHEDULER), "run", f"--kubeconfig={api.kubeconfig_path}", "--metrics-bind-address=0",
             "--health-probe-bind-address=0"], stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            wait_until(lambda: "waiting for lease" in log.read_text(), timeout=30, what="the wait for the Lease")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    said = [line.split(": ", 1)[1] for line in log.read_text().splitlines()]
    assert process.returncode == 0
    assert said[-1].startswith("shutdown complete in ") and "lease not held" in said[-1]
    assert [line for line in log.read_text().splitlines() if " INFO " not in line] == []  # Kopf warned here
