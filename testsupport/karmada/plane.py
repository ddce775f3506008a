"""A local Karmada control plane, every component a process on loopback, built from Go modules.

    karmada-apiserver          etcd + kube-apiserver (aggregation on, audit log on), Karmada's CRDs
    kube-controller-manager    the controllers Karmada runs for its API server (namespace, GC, SA tokens, ...)
    karmada-aggregated-apiserver   cluster.karmada.io behind its APIService
    karmada-webhook            Karmada's mutating/validating webhooks and the bindings' conversion webhook
    karmada-controller-manager every Karmada controller, as Karmada's Deployment starts it
    member1..N                 etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok (fake
                               Nodes with resources, zones and labels; Pods become Running), joined by
                               `karmadactl join` (push mode), each with a karmada-scheduler-estimator (TLS)
    the scheduler              karmada-scheduler or binding-scheduler, with karmada-scheduler's Deployment flags

Everything lives in one state directory (`.karmada/` for `dev.py karmada up`): certificates, data, logs,
kubeconfigs, the pids with their identities. `stop(state)` kills every process still its own (testsupport/processes.py)
and removes it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from testsupport.karmada import manifests, node
from testsupport.processes import Identity, exit_status, record, running, signal_group, wait_gone
from testsupport.realcluster.controlplane import (
    AUDIT_POLICY,
    ROOT,
    ControlPlaneError,
    dying_with_parent,
    free_port,
)
from testsupport.realcluster.controlplane import binaries as kube_binaries
from testsupport.realcluster.kube import KubeClient

KARMADA_SYSTEM = "karmada-system"
MEMBERS = ("member1", "member2", "member3")
ESTIMATOR_PORT = 10352  # karmada-scheduler's --scheduler-estimator-port default: the Services' port
SCHEDULERS = ("karmada", "ours")
NODE_AGENTS = ("node-kubelet", "node-kube-proxy")
"""The in-cluster node's agents, stopped before its containerd so that nothing restarts a container."""
READY_TIMEOUT = 120.0
FEATURE_GATES = "--feature-gates=AllAlpha=true,AllBeta=true"  # as Karmada's own deployments set them

ZONES = {"member1": ("cn-north", "cn-north-1a"), "member2": ("cn-east", "cn-east-1a"),
         "member3": ("cn-south", "cn-south-1a")}
"""Each member's region and zone (its Cluster's spec.region/zone, its Nodes' topology labels)."""

NODES_PER_MEMBER = 2
NODE_CAPACITY = {"cpu": "2", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}
"""Each member holds 4 CPUs and 16 Gi, as a kind member of Karmada's own CI does (one node with the 4 CPUs and 16 GB
of a GitHub runner): specs that fill a member to its capacity (EstimatorAssumption) count on its size."""


class KarmadaError(ControlPlaneError):
    """The Karmada control plane could not be built or started; the message says which step and why."""


def _build(script: Path, *args: str) -> Path:
    if shutil.which("go") is None:
        raise KarmadaError("the Karmada tier needs Go (go is not on PATH)")
    result = subprocess.run(["bash", str(script), *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise KarmadaError(f"{script.relative_to(ROOT)} {' '.join(args)} failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


def karmada_binaries() -> Path:
    """Karmada's components and its e2e suite (tools/karmada/build.sh control-plane)."""
    return _build(manifests.KARMADA_TOOLS / "build.sh", "control-plane")


def kwok_binary() -> Path:
    return _build(manifests.KWOK_TOOLS / "build.sh") / "kwok"


def cni_binaries() -> Path:
    """The CNI plugins' directory (tools/cni/build.sh): the in-cluster node's containerd runs them."""
    return _build(ROOT / "tools" / "cni" / "build.sh")


def binding_scheduler_binary() -> Path:
    return Path(sys.executable).parent / "binding-scheduler"


@dataclass(frozen=True)
class Cluster:
    """One API server of the plane: Karmada's or a member's."""

    name: str
    url: str
    kubeconfig: Path  # a single-context admin kubeconfig

    def client(self) -> KubeClient:
        return KubeClient.from_kubeconfig(self.kubeconfig)


@dataclass(frozen=True)
class KarmadaPlane:
    """A running plane: where it serves, its members, and the scheduler it was started with."""

    state: Path
    karmada: Cluster
    members: tuple[Cluster, ...]
    scheduler: str
    in_cluster: bool = False  # the host cluster is a real one and the scheduler runs in it as pods

    @property
    def kubeconfig(self) -> Path:
        """The kubeconfig with the contexts Karmada's e2e suite expects: karmada-apiserver, karmada-host, and
        one per member."""
        return self.state / "kubeconfig"

    @property
    def audit_log(self) -> Path:
        return self.state / "karmada" / "audit.log"

    @property
    def pki(self) -> Path:
        return self.state / "pki"

    def kubectl(self, *args: str, context: str = "karmada-apiserver", check: bool = True,
                input: str | None = None) -> subprocess.CompletedProcess[str]:
        command = [str(kube_binaries() / "kubectl"), "--kubeconfig", str(self.kubeconfig), "--context", context,
                   *args]
        result = subprocess.run(command, capture_output=True, text=True, input=input, timeout=120, check=False)
        if check and result.returncode != 0:
            raise KarmadaError(f"kubectl --context {context} {' '.join(args)}: exit {result.returncode}: "
                               f"{result.stderr.strip()}")
        return result


@dataclass
class Processes:
    """Each process in its own process group, logging to `logs/NAME.log`; recorded in `pids.json` by its
    identity (pid, start time, command: testsupport/processes.py), which is checked again before any signal."""

    state: Path
    tie_to_parent: bool
    identities: dict[str, Identity] = field(default_factory=dict)

    def start(self, name: str, command: Sequence[str], env: dict[str, str] | None = None) -> int:
        logs = self.state / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                dying_with_parent(command) if self.tie_to_parent else list(command), stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env,
            )
        self.identities[name] = record(process.pid, command)
        self._save()
        return process.pid

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int | None:
        """Signal one process group (SIGTERM), SIGKILL it after `timeout`, and forget it. Its exit status when
        it was started by this process (None otherwise, or when it was not running, or its pid is no longer
        its own: then it is not signalled)."""
        identity = self.identities.pop(name, None)
        self._save()
        if identity is None or not signal_group(identity, sig, name):
            return None
        deadline = time.monotonic() + timeout
        while True:
            status = exit_status(identity)
            if status is not None:
                return status if status >= 0 else None
            if time.monotonic() > deadline:
                signal_group(identity, signal.SIGKILL, name)
                wait_gone(identity)
                return None
            time.sleep(0.05)

    def check_alive(self, *names: str) -> None:
        for name in names or tuple(self.identities):
            if name in self.identities and exit_status(self.identities[name]) is not None:
                raise KarmadaError(f"{name} exited:\n{self.log_tail(name)}")

    def log_tail(self, name: str, size: int = 3000) -> str:
        path = self.state / "logs" / f"{name}.log"
        return path.read_text(errors="replace")[-size:] if path.exists() else "(no log)"

    def _save(self) -> None:
        (self.state / "pids.json").write_text(
            json.dumps({name: identity.to_json() for name, identity in self.identities.items()}))

    @classmethod
    def of(cls, state: Path) -> Processes:
        """The processes recorded in `state` (a plane started by another process, e.g. `dev.py karmada up`)."""
        path = state / "pids.json"
        recorded = json.loads(path.read_text()) if path.exists() else {}
        return cls(state=state, tie_to_parent=False,
                   identities={name: Identity.from_json(value) for name, value in recorded.items()})


def wait_for(check: Callable[[], Any], what: str, processes: Processes, timeout: float = READY_TIMEOUT,
             interval: float = 0.25) -> Any:
    """Until `check()` returns something truthy (and no process of the plane has died meanwhile)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        processes.check_alive()
        try:
            result = check()
            if result:
                return result
        except (OSError, ValueError, KeyError) as error:
            last = error
        if time.monotonic() > deadline:
            raise KarmadaError(f"{what}: not after {timeout:g}s (last: {last})")
        time.sleep(interval)


def write_kubeconfig(path: Path, contexts: dict[str, str], ca: Path, cert: Path, key: Path,
                     current: str) -> None:
    """A kubeconfig whose contexts (name -> server URL) all use the admin's client certificate."""
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url, "certificate-authority": str(ca)}}
                     for name, url in contexts.items()],
        "users": [{"name": "admin", "user": {"client-certificate": str(cert), "client-key": str(key)}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": "admin"}} for name in contexts],
        "current-context": current,
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)


class Builder:
    """Starts the plane step by step; each step waits for what the next one needs."""

    def __init__(self, state: Path, *, tie_to_parent: bool, members: Sequence[str], in_cluster: bool = False) -> None:
        self.state = state
        self.members = tuple(members)
        self.in_cluster = in_cluster
        self.kube = kube_binaries()
        self.karmada = karmada_binaries()
        self.kwok = kwok_binary()
        self.processes = Processes(state=state, tie_to_parent=tie_to_parent)
        self.pki = state / "pki"
        self.ports: dict[str, int] = {}

    # -- certificates -------------------------------------------------------------------------------------

    def certificates(self) -> None:
        pki = str(self.kube / "pki")
        self._run([pki, str(self.pki)], "generating the CA and the API servers' certificates")
        names = {"karmada-aggregated-apiserver": [f"karmada-aggregated-apiserver.{KARMADA_SYSTEM}.svc"],
                 "karmada-webhook": [f"karmada-webhook.{KARMADA_SYSTEM}.svc"],
                 "karmada-scheduler-estimator": [f"karmada-scheduler-estimator-{m}.{KARMADA_SYSTEM}.svc"
                                                 for m in self.members]}
        addresses = [manifests.LOOPBACK, *([node.GATEWAY] if self.in_cluster else [])]
        for name, dns in names.items():
            self._issue(name, f"system:karmada:{name}", usage="server", dns=["localhost", *dns], ip=addresses)
        if self.in_cluster:  # pods reach karmada-apiserver at the gateway
            self._issue("apiserver", "kube-apiserver", usage="server",
                        dns=["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
                        ip=[*addresses, "10.0.0.1"])
        self._issue("front-proxy-client", "front-proxy-client", usage="client")
        self._issue("karmada-scheduler-grpc", "system:karmada:karmada-scheduler-grpc", usage="client",
                    org=["system:masters"])
        webhook_dir = self.pki / "webhook"
        webhook_dir.mkdir()
        shutil.copy(self.pki / "karmada-webhook.crt", webhook_dir / "tls.crt")
        shutil.copy(self.pki / "karmada-webhook.key", webhook_dir / "tls.key")

    def issue_client(self, name: str, cn: str, org: Sequence[str] = ()) -> None:
        self._issue(name, cn, usage="client", org=org)

    def _issue(self, name: str, cn: str, *, usage: str, dns: Sequence[str] = (), ip: Sequence[str] = (),
               org: Sequence[str] = ()) -> None:
        command = [str(self.kube / "pki"), "issue", str(self.pki), name, "-cn", cn, "-usage", usage]
        for flag, values in (("-dns", dns), ("-ip", ip), ("-org", org)):
            if values:
                command += [flag, ",".join(values)]
        self._run(command, f"issuing the certificate of {name}")

    # -- API servers --------------------------------------------------------------------------------------

    def api_server(self, name: str, *, karmada: bool) -> Cluster:
        """etcd + kube-apiserver for `name`, with its data under state/NAME/."""
        home = self.state / name
        home.mkdir(parents=True)
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        self.ports[f"{name}-etcd"] = etcd_port
        self.processes.start(f"{name}-etcd", [
            str(self.kube / "etcd"), "--name", name, "--data-dir", str(home / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-cluster", f"{name}=http://127.0.0.1:{peer_port}",
            "--unsafe-no-fsync", "--log-level", "warn",
        ])
        pki = self.pki
        bind = "0.0.0.0" if karmada and self.in_cluster else "127.0.0.1"  # pods reach it at the gateway
        command = [
            str(self.kube / "kube-apiserver"),
            "--etcd-servers", f"http://127.0.0.1:{etcd_port}",
            "--bind-address", bind, "--advertise-address", "127.0.0.1", "--secure-port", str(api_port),
            "--kubelet-client-certificate", str(pki / "admin.crt"), "--kubelet-client-key", str(pki / "admin.key"),
            "--kubelet-preferred-address-types", "InternalIP",
            "--tls-cert-file", str(pki / "apiserver.crt"), "--tls-private-key-file", str(pki / "apiserver.key"),
            "--client-ca-file", str(pki / "ca.crt"),
            "--authorization-mode", "Node,RBAC", "--allow-privileged=true", "--enable-bootstrap-token-auth=true",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", str(pki / "sa.pub"),
            "--service-account-signing-key-file", str(pki / "sa.key"),
            "--api-audiences", "https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range", "10.96.0.0/16",
            "--cert-dir", str(home / "apiserver-certs"), "--profiling=false", "--v", "1",
        ]
        if karmada:
            (home / "audit-policy.yaml").write_text(yaml.safe_dump(AUDIT_POLICY))
            command += [
                "--disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount",
                "--proxy-client-cert-file", str(pki / "front-proxy-client.crt"),
                "--proxy-client-key-file", str(pki / "front-proxy-client.key"),
                "--requestheader-client-ca-file", str(pki / "ca.crt"),
                "--requestheader-allowed-names=front-proxy-client",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-username-headers=X-Remote-User",
                "--audit-policy-file", str(home / "audit-policy.yaml"),
                "--audit-log-path", str(home / "audit.log"), "--audit-log-format", "json",
                "--audit-log-mode", "blocking", "--audit-log-maxsize", "0",
            ]
        self.processes.start(f"{name}-apiserver", command)
        cluster = Cluster(name=name, url=f"https://127.0.0.1:{api_port}", kubeconfig=home / "admin.kubeconfig")
        write_kubeconfig(cluster.kubeconfig, {name: cluster.url}, pki / "ca.crt", pki / "admin.crt",
                         pki / "admin.key", name)
        return cluster

    def wait_ready(self, cluster: Cluster) -> None:
        client = cluster.client()
        wait_for(lambda: client.request("GET", "/readyz")[0] == 200, f"{cluster.name}'s kube-apiserver ready",
                 self.processes)

    def controller_manager(self, cluster: Cluster, controllers: str) -> None:
        pki = self.pki
        self.processes.start(f"{cluster.name}-kube-controller-manager", [
            str(self.kube / "kube-controller-manager"),
            f"--kubeconfig={cluster.kubeconfig}",
            f"--authentication-kubeconfig={cluster.kubeconfig}",
            f"--authorization-kubeconfig={cluster.kubeconfig}",
            "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
            f"--client-ca-file={pki / 'ca.crt'}", f"--root-ca-file={pki / 'ca.crt'}",
            f"--cluster-signing-cert-file={pki / 'ca.crt'}", f"--cluster-signing-key-file={pki / 'ca.key'}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--controllers={controllers}", f"--cluster-name={cluster.name}",
            "--use-service-account-credentials=true", "--leader-elect=false",
            "--service-cluster-ip-range=10.96.0.0/16", "--v=1",
        ])

    # -- Karmada's own components -------------------------------------------------------------------------

    def karmada_components(self, karmada: Cluster) -> None:
        """CRDs, webhook, aggregated API server and controller-manager, in the order each needs the last."""
        client = karmada.client()
        ca = self.pki / "ca.crt"
        webhook_port, aggregated_port = free_port(), free_port()
        self.apply(karmada, manifests.plain("namespace.yaml"))
        self.apply(karmada, list(manifests.crds(ca, webhook_port)))
        self.processes.start("karmada-webhook", [
            str(self.karmada / "karmada-webhook"), f"--kubeconfig={karmada.kubeconfig}",
            "--bind-address=127.0.0.1", f"--secure-port={webhook_port}", f"--cert-dir={self.pki / 'webhook'}",
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}",
            FEATURE_GATES, "--allow-no-execute-taint-policy=true", "--v=2",
        ])
        self.processes.start("karmada-aggregated-apiserver", [
            str(self.karmada / "karmada-aggregated-apiserver"),
            f"--kubeconfig={karmada.kubeconfig}",
            f"--authentication-kubeconfig={karmada.kubeconfig}",
            f"--authorization-kubeconfig={karmada.kubeconfig}",
            f"--etcd-servers=http://127.0.0.1:{self.ports['karmada-etcd']}",
            f"--tls-cert-file={self.pki / 'karmada-aggregated-apiserver.crt'}",
            f"--tls-private-key-file={self.pki / 'karmada-aggregated-apiserver.key'}",
            "--bind-address=127.0.0.1", f"--secure-port={aggregated_port}",
            f"--cert-dir={self.state / 'karmada' / 'aggregated-certs'}", FEATURE_GATES, "--v=1",
        ])
        wait_for(lambda: _https_listening(webhook_port), "karmada-webhook serving", self.processes)
        self.apply(karmada, manifests.webhook_configurations(ca, webhook_port))
        self.apply(karmada, manifests.aggregated_api(ca, aggregated_port))
        self.apply(karmada, manifests.plain("admin-clusterrole-aggregation.yaml"))
        self.apply(karmada, manifests.plain("cluster-proxy-admin-rbac.yaml"))
        self.apply(karmada, manifests.bootstrap_token_configuration(ca, karmada.url))
        wait_for(lambda: client.request("GET", "/apis/cluster.karmada.io/v1alpha1/clusters")[0] == 200,
                 "cluster.karmada.io served through the aggregated API server", self.processes)
        self.processes.start("karmada-controller-manager", [
            str(self.karmada / "karmada-controller-manager"), f"--kubeconfig={karmada.kubeconfig}",
            "--cluster-status-update-frequency=10s", "--controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer",
            FEATURE_GATES, f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}", "--enable-no-execute-taint-eviction=true",
            "--v=2",
        ])

    def apply(self, cluster: Cluster, documents: Sequence[dict[str, Any]]) -> None:
        text = yaml.safe_dump_all(documents)
        command = [str(self.kube / "kubectl"), "--kubeconfig", str(cluster.kubeconfig), "apply",
                   "--server-side", "--force-conflicts", "-f", "-"]
        for attempt in range(40):  # a webhook or an APIService may need a moment after it starts serving
            result = subprocess.run(command, input=text, capture_output=True, text=True, timeout=120, check=False)
            if result.returncode == 0:
                return
            self.processes.check_alive()
            if attempt == 39:
                raise KarmadaError(f"kubectl apply on {cluster.name}: {result.stderr.strip()}")
            time.sleep(0.5)

    # -- members ------------------------------------------------------------------------------------------

    def kube_cluster(self, name: str) -> Cluster:
        """etcd, kube-apiserver, kube-controller-manager (every controller) and kube-scheduler for `name`."""
        cluster = self.api_server(name, karmada=False)
        self.wait_ready(cluster)
        self.controller_manager(cluster, "*")
        self.processes.start(f"{name}-kube-scheduler", [
            str(self.kube / "kube-scheduler"), f"--kubeconfig={cluster.kubeconfig}",
            f"--authentication-kubeconfig={cluster.kubeconfig}", f"--authorization-kubeconfig={cluster.kubeconfig}",
            "--bind-address=127.0.0.1", f"--secure-port={free_port()}", "--leader-elect=false", "--v=1",
        ])
        return cluster

    def member(self, name: str) -> Cluster:
        member = self.kube_cluster(name)
        stages = self.state / "kwok-stages.yaml"
        if not stages.exists():
            stages.write_text(manifests.kwok_stages())
        self.processes.start(f"{name}-kwok", [
            str(self.kwok), f"--kubeconfig={member.kubeconfig}", f"--config={stages}",
            "--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=40",
            f"--server-address=127.0.0.1:{free_port()}", "--cidr=10.240.0.1/16",
        ])
        client = member.client()
        region, zone = ZONES.get(name, ("", ""))
        for index in range(NODES_PER_MEMBER):
            node = f"{name}-node-{index}"
            labels = {"kubernetes.io/hostname": node, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                      "type": "kwok"}
            if region:
                labels |= {"topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone}
            client.ok("POST", "/api/v1/nodes", {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": node, "labels": labels, "annotations": {"kwok.x-k8s.io/node": "fake"}},
                "status": {"capacity": NODE_CAPACITY, "allocatable": NODE_CAPACITY},
            })
        wait_for(lambda: _all_nodes_ready(client), f"{name}'s kwok nodes Ready", self.processes)
        wait_for(lambda: client.request("GET", "/api/v1/namespaces/default/serviceaccounts/default")[0] == 200,
                 f"{name}'s default ServiceAccount", self.processes)
        return member

    def join(self, karmada: Cluster, member: Cluster, kubeconfig: Path) -> None:
        region, zone = ZONES.get(member.name, ("", ""))
        command = [str(self.karmada / "karmadactl"), "join", member.name, f"--kubeconfig={kubeconfig}",
                   "--karmada-context=karmada-apiserver", f"--cluster-kubeconfig={kubeconfig}",
                   f"--cluster-context={member.name}", "--cluster-provider=kwok"]
        if region:
            command += [f"--cluster-region={region}", f"--cluster-zones={zone}"]
        self._run(command, f"karmadactl join {member.name}")

    def estimator(self, karmada: Cluster, member: Cluster) -> None:
        port = free_port()
        pki = self.pki
        self.processes.start(f"{member.name}-estimator", [
            str(self.karmada / "karmada-scheduler-estimator"), f"--kubeconfig={member.kubeconfig}",
            f"--cluster-name={member.name}", f"--server-port={port}",
            f"--grpc-auth-cert-file={pki / 'karmada-scheduler-estimator.crt'}",
            f"--grpc-auth-key-file={pki / 'karmada-scheduler-estimator.key'}",
            f"--grpc-client-ca-file={pki / 'ca.crt'}",
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}", FEATURE_GATES, "--v=2",
        ])
        address = node.GATEWAY if self.in_cluster else manifests.LOOPBACK
        self.apply(karmada, [manifests.estimator_service(member.name, KARMADA_SYSTEM, ESTIMATOR_PORT, port,
                                                         address)])
        wait_for(lambda: _https_listening(port), f"{member.name}'s estimator serving", self.processes)

    def _run(self, command: list[str], what: str) -> None:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        if result.returncode != 0:
            raise KarmadaError(f"{what}: exit {result.returncode}: {(result.stderr or result.stdout).strip()}")


def _https_listening(port: int) -> bool:
    import socket

    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def _all_nodes_ready(client: KubeClient) -> bool:
    nodes = client.ok("GET", "/api/v1/nodes")["items"]
    return bool(nodes) and all(
        any(c.get("type") == "Ready" and c.get("status") == "True" for c in (n.get("status") or {}).get(
            "conditions") or ())
        and not any(t.get("key") == "node.kubernetes.io/not-ready" for t in (n.get("spec") or {}).get("taints") or ())
        for n in nodes)


def scheduler_command(scheduler: str, plane_state: Path, kubeconfig: Path, *extra: str) -> list[str]:
    """The scheduler under test, started the way Karmada's Deployment starts karmada-scheduler
    (artifacts/deploy/karmada-scheduler.yaml): the same flags, the estimator on with its TLS files."""
    pki = plane_state / "pki"
    flags = [
        f"--kubeconfig={kubeconfig}",
        f"--metrics-bind-address=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{free_port()}",
        "--enable-scheduler-estimator=true",
        f"--scheduler-estimator-ca-file={pki / 'ca.crt'}",
        f"--scheduler-estimator-cert-file={pki / 'karmada-scheduler-grpc.crt'}",
        f"--scheduler-estimator-key-file={pki / 'karmada-scheduler-grpc.key'}",
        FEATURE_GATES, "--v=2", *extra,
    ]
    if scheduler == "karmada":
        return [str(karmada_binaries() / "karmada-scheduler"), *flags]
    if scheduler == "ours":
        return [str(binding_scheduler_binary()), "run", *flags]
    raise KarmadaError(f"--scheduler {scheduler!r}: expected one of {', '.join(SCHEDULERS)}")


def start(state: Path, *, scheduler: str = "ours", tie_to_parent: bool,
          members: Sequence[str] = MEMBERS, in_cluster: bool = False, layout: str = "") -> KarmadaPlane:
    """Start the whole plane in `state` (created; whatever ran there before is stopped first). `in_cluster`:
    the host cluster is a real one with a node, and the scheduler runs in it as the chart's pods, installed
    beside Karmada's install `layout` (testsupport/karmada/incluster.py)."""
    if scheduler not in SCHEDULERS:
        raise KarmadaError(f"--scheduler {scheduler!r}: expected one of {', '.join(SCHEDULERS)}")
    stop(state)
    state.mkdir(parents=True)
    builder = Builder(state, tie_to_parent=tie_to_parent, members=members, in_cluster=in_cluster)
    try:
        if in_cluster:
            node.make_bridge(state / "node")
        builder.certificates()
        karmada = builder.api_server("karmada", karmada=True)
        builder.wait_ready(karmada)
        builder.controller_manager(karmada, "namespace,garbagecollector,serviceaccount-token,ttl-after-finished,"
                                            "bootstrapsigner,tokencleaner,csrcleaner,csrsigning,"
                                            "clusterrole-aggregation")
        builder.karmada_components(karmada)
        joined = [builder.member(name) for name in members]
        from testsupport.karmada import incluster  # it builds on this module

        host = incluster.start_host(builder) if in_cluster else karmada
        pki = builder.pki
        contexts = {"karmada-apiserver": karmada.url, "karmada-host": host.url,
                    **{member.name: member.url for member in joined}}
        plane = KarmadaPlane(state=state, karmada=karmada, members=tuple(joined), scheduler=scheduler,
                             in_cluster=in_cluster)
        write_kubeconfig(plane.kubeconfig, contexts, pki / "ca.crt", pki / "admin.crt", pki / "admin.key",
                         "karmada-apiserver")
        for member in joined:
            builder.join(karmada, member, plane.kubeconfig)
            builder.estimator(karmada, member)
        wait_for(lambda: _clusters_ready(karmada.client(), members), "every member Ready in Karmada",
                 builder.processes, timeout=180)
        if in_cluster:
            incluster.install(plane, layout or incluster.DEFAULT_LAYOUT)
        else:
            start_scheduler(plane, builder.processes)
        (state / "plane.json").write_text(json.dumps({
            "scheduler": scheduler, "karmada": karmada.url,
            "members": {member.name: member.url for member in joined},
            **({"host": host.url, "layout": layout or incluster.DEFAULT_LAYOUT} if in_cluster else {}),
        }))
    except BaseException as error:
        kept = keep_logs(state)
        stop(state)
        if isinstance(error, KarmadaError) and kept:
            raise KarmadaError(f"{error}\n(the plane's logs are kept in {kept})") from error
        raise
    return plane


def keep_logs(state: Path) -> Path | None:
    """Copy the plane's logs beside its state (which `stop` removes), for whoever reads why it failed."""
    logs = state / "logs"
    if not logs.exists():
        return None
    kept = state.parent / f"{state.name}-logs"
    shutil.rmtree(kept, ignore_errors=True)
    shutil.copytree(logs, kept)
    return kept


def start_scheduler(plane: KarmadaPlane, processes: Processes, name: str = "scheduler", *extra: str) -> None:
    processes.start(name, scheduler_command(plane.scheduler, plane.state, plane.karmada.kubeconfig, *extra))
    time.sleep(1.0)
    processes.check_alive(name)


def swap_scheduler(plane: KarmadaPlane, scheduler: str) -> KarmadaPlane:
    """The same plane with `scheduler` in place of the one it runs (the old one stopped by SIGTERM first, as a
    Deployment's Recreate would; the new one takes the same Lease)."""
    if scheduler not in SCHEDULERS:
        raise KarmadaError(f"--scheduler {scheduler!r}: expected one of {', '.join(SCHEDULERS)}")
    if plane.in_cluster:
        raise KarmadaError(f"the plane in {plane.state} runs its scheduler in-cluster: start one with "
                           f"`dev.py karmada up --in-cluster --scheduler {scheduler}` instead")
    processes = Processes.of(plane.state)
    processes.stop("scheduler")
    swapped = KarmadaPlane(state=plane.state, karmada=plane.karmada, members=plane.members, scheduler=scheduler)
    start_scheduler(swapped, processes)
    facts = json.loads((plane.state / "plane.json").read_text())
    (plane.state / "plane.json").write_text(json.dumps({**facts, "scheduler": scheduler}))
    return swapped


def _clusters_ready(client: KubeClient, members: Sequence[str]) -> bool:
    status, answer = client.request("GET", "/apis/cluster.karmada.io/v1alpha1/clusters")
    if status != 200:
        return False
    ready = {item["metadata"]["name"] for item in answer.get("items", [])
             if any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (item.get("status") or {}).get("conditions") or ())}
    return set(members) <= ready


def resident_memory(state: Path) -> dict[str, int]:
    """Resident memory (bytes) of each process group of the plane in `state`, from /proc."""
    groups = {identity.pid: name for name, identity in Processes.of(state).identities.items()
              if running(identity)}
    used = dict.fromkeys(groups.values(), 0)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError):
            group = os.getpgid(int(entry.name))
            if group in groups:
                for line in (entry / "status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        used[groups[group]] += int(line.split()[1]) * 1024
    return used


def stop(state: Path) -> bool:
    """Kill every process of the plane in `state`, undo its node if it has one, and remove `state`. True if
    something ran there."""
    recorded = Processes.of(state).identities
    if (state / "node").exists():
        node.teardown(state / "node", [recorded.pop(name) for name in NODE_AGENTS if name in recorded],
                      recorded.pop("node-containerd", None))
    killed = [identity for name, identity in recorded.items()
              if signal_group(identity, signal.SIGKILL, name)]
    for identity in killed:
        wait_gone(identity)
    if state.exists():
        shutil.rmtree(state)
    return bool(killed)


def attach(state: Path) -> KarmadaPlane:
    """The plane running in `state` (started by `dev.py karmada up`)."""
    if not (state / "plane.json").exists():
        raise KarmadaError(f"no Karmada plane runs in {state} (python3 dev.py karmada up starts one)")
    facts = json.loads((state / "plane.json").read_text())
    karmada = Cluster("karmada", facts["karmada"], state / "karmada" / "admin.kubeconfig")
    members = tuple(Cluster(name, url, state / name / "admin.kubeconfig") for name, url in facts["members"].items())
    return KarmadaPlane(state=state, karmada=karmada, members=members, scheduler=facts["scheduler"],
                        in_cluster="host" in facts)
