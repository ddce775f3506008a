"""A real Kubernetes control plane on loopback for the tests: etcd + kube-apiserver built from their Go modules.

`python3 dev.py cluster up|down` and the `control_plane` pytest fixture both use this module. The binaries are
built once by `tools/controlplane/build.sh` into a cache outside the clone, keyed by version. A control plane
lives in one state directory (certificates, etcd data, audit log, kubeconfigs, pids); stopping it kills its
processes and removes that directory.

What it sets up:
- its own CA, a serving certificate for 127.0.0.1, an admin client certificate (group system:masters);
- `--authorization-mode=Node,RBAC`, ServiceAccount token signing, an audit log of every request (writes with
  their bodies) that the tests read as the server's journal;
- the CRDs in `crds/`, the namespace `karmada-system`, and the scheduler's ServiceAccount bound to exactly the
  rules of `charts/binding-scheduler/files/rbac-rules.yaml`, with a kubeconfig for it (the unprivileged identity).
"""

from __future__ import annotations

import functools
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from testsupport.processes import Identity, exit_status, record, signal_group, wait_gone
from testsupport.realcluster.kube import KubeClient

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "tools" / "controlplane" / "build.sh"
CRDS = ROOT / "crds"
RBAC_RULES = ROOT / "charts" / "binding-scheduler" / "files" / "rbac-rules.yaml"
SCHEDULER_NAMESPACE = "karmada-system"
SCHEDULER_ACCOUNT = "binding-scheduler"
READY_TIMEOUT = 90.0

AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": [],  # RequestReceived tells a reader which requests are still unanswered (audit.py)
    "rules": [
        {"level": "None", "users": ["system:apiserver"]},
        {"level": "None", "nonResourceURLs": ["/healthz*", "/livez*", "/readyz*", "/version", "/openapi*"]},
        {"level": "Request", "verbs": ["create", "update", "patch", "delete", "deletecollection"]},
        {"level": "Metadata"},
    ],
}


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message says which step and why."""


@dataclass(frozen=True)
class ControlPlane:
    """A running control plane: where it serves, its credentials and its audit log."""

    state: Path
    url: str

    @property
    def kubeconfig_path(self) -> Path:
        """The admin kubeconfig (client certificate in group system:masters)."""
        return self.state / "kubeconfig"

    @property
    def operator_kubeconfig_path(self) -> Path:
        """The scheduler's own identity: its ServiceAccount's token, bound to the chart's RBAC rules."""
        return self.state / "operator.kubeconfig"

    @property
    def audit_log(self) -> Path:
        return self.state / "audit.log"

    @property
    def operator_user(self) -> str:
        return f"system:serviceaccount:{SCHEDULER_NAMESPACE}:{SCHEDULER_ACCOUNT}"

    def admin(self) -> KubeClient:
        return KubeClient.from_kubeconfig(self.kubeconfig_path)

    def kubectl(self, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
        command = [str(binaries() / "kubectl"), "--kubeconfig", str(self.kubeconfig_path), *args]
        result = subprocess.run(command, capture_output=True, text=True, input=input, timeout=120, check=False)
        if check and result.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
        return result


def go_available() -> bool:
    return shutil.which("go") is not None


@functools.cache
def binaries() -> Path:
    """The directory holding etcd, kube-apiserver, kubectl and pki; builds what is missing (slow once)."""
    if not go_available():
        raise ControlPlaneError("the real control plane needs Go (go is not on PATH)")
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ControlPlaneError(f"{BUILD_SCRIPT.relative_to(ROOT)} failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def dying_with_parent(command: Sequence[str]) -> list[str]:
    """`command` run so that the kernel sends it SIGKILL when the test process dies, even by kill -9: through
    util-linux's `setpriv --pdeathsig KILL`, which sets it and execs. Not with a `preexec_fn`: Python code in the
    forked child runs the parent's at-fork hooks, and gRPC's (an estimator channel or stub alive in the test
    process) then broke a child now and then before it could exec (etcd "exited" with only gRPC's epoll error)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise ControlPlaneError("setpriv (util-linux) is missing: it ties the control plane's processes to the tests")
    return [setpriv, "--pdeathsig", "KILL", "--", *command]


def start(state: Path, *, tie_to_parent: bool) -> ControlPlane:
    """Start etcd and kube-apiserver with their state in `state` (created; must not hold a running plane).

    With `tie_to_parent`, the processes die with the calling process (tests); otherwise they run on until
    `stop(state)` (`dev.py cluster up`)."""
    stop(state)
    bins = binaries()
    state.mkdir(parents=True)
    pki = state / "pki"
    _run([str(bins / "pki"), str(pki)], "generating certificates")
    (state / "audit-policy.yaml").write_text(yaml.safe_dump(AUDIT_POLICY))
    etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
    spawn = _Spawner(state, tie_to_parent)
    spawn(
        "etcd",
        [
            str(bins / "etcd"), "--name", "test", "--data-dir", str(state / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-cluster", f"test=http://127.0.0.1:{peer_port}",
            "--unsafe-no-fsync", "--log-level", "warn",
        ],
    )
    spawn(
        "kube-apiserver",
        [
            str(bins / "kube-apiserver"),
            "--etcd-servers", f"http://127.0.0.1:{etcd_port}",
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", str(api_port),
            "--tls-cert-file", str(pki / "apiserver.crt"), "--tls-private-key-file", str(pki / "apiserver.key"),
            "--client-ca-file", str(pki / "ca.crt"),
            "--authorization-mode", "Node,RBAC",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", str(pki / "sa.pub"),
            "--service-account-signing-key-file", str(pki / "sa.key"),
            "--api-audiences", "https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range", "10.0.0.0/24",
            "--audit-policy-file", str(state / "audit-policy.yaml"),
            "--audit-log-path", str(state / "audit.log"), "--audit-log-format", "json",
            "--audit-log-mode", "blocking", "--audit-log-maxsize", "0",
            "--cert-dir", str(state / "apiserver-certs"),
            "--profiling=false", "--v", "1",
        ],
    )
    plane = ControlPlane(state=state, url=f"https://127.0.0.1:{api_port}")
    _write_kubeconfig(
        plane.kubeconfig_path, plane.url, pki / "ca.crt",
        {"client-certificate": str(pki / "admin.crt"), "client-key": str(pki / "admin.key")},
    )
    try:
        _wait_ready(plane)
        _install(plane)
    except BaseException:
        stop(state)
        raise
    return plane


def stop(state: Path) -> bool:
    """Kill the processes of the control plane in `state` and remove `state`. True if something ran there. A
    recorded pid that is no longer the process started there (testsupport/processes.py) is not signalled."""
    killed = [identity for name, identity in _recorded(state).items()
              if signal_group(identity, signal.SIGKILL, name)]
    for identity in killed:
        wait_gone(identity)
    if state.exists():
        shutil.rmtree(state)
    return bool(killed)


def process_ids(state: Path) -> dict[str, int]:
    """The pids of the control plane's processes (`etcd`, `kube-apiserver`) as started in `state`."""
    return {name: identity.pid for name, identity in _recorded(state).items()}


def _recorded(state: Path) -> dict[str, Identity]:
    """The processes recorded in `state/pids.json` (a bare pid, as older state files hold, cannot be checked)."""
    path = state / "pids.json"
    recorded = json.loads(path.read_text()) if path.exists() else {}
    return {name: Identity.from_json(value) for name, value in recorded.items()}


class _Spawner:
    """Starts each process in its own process group, logging to `state/NAME.log`, and records its identity."""

    def __init__(self, state: Path, tie_to_parent: bool) -> None:
        self.state = state
        self.tie_to_parent = tie_to_parent
        self.identities: dict[str, Identity] = {}

    def __call__(self, name: str, command: Sequence[str]) -> None:
        with (self.state / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                dying_with_parent(command) if self.tie_to_parent else list(command), stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        self.identities[name] = record(process.pid, command)
        (self.state / "pids.json").write_text(
            json.dumps({name: identity.to_json() for name, identity in self.identities.items()}))


def _wait_ready(plane: ControlPlane) -> None:
    client = plane.admin()
    deadline = time.monotonic() + READY_TIMEOUT
    last = ""
    while time.monotonic() < deadline:
        recorded = _recorded(plane.state)
        for name in ("etcd", "kube-apiserver"):
            if exit_status(recorded[name]) is not None:
                log = (plane.state / f"{name}.log").read_text(errors="replace")[-3000:]
                raise ControlPlaneError(f"{name} exited while starting:\n{log}")
        try:
            status, body = client.request("GET", "/readyz")
            if status == 200:
                return
            last = f"/readyz answered {status}: {body}"
        except OSError as error:
            last = str(error)
        time.sleep(0.2)
    raise ControlPlaneError(f"kube-apiserver not ready after {READY_TIMEOUT:g}s: {last}")


def _install(plane: ControlPlane) -> None:
    """CRDs, the scheduler's namespace, its ServiceAccount and RBAC, and a kubeconfig holding its token."""
    plane.kubectl("apply", "--server-side", "-f", str(CRDS))
    plane.kubectl("wait", "--for", "condition=Established", "--timeout", "60s", "crd", "--all")
    client = plane.admin()
    client.ensure_namespace(SCHEDULER_NAMESPACE)
    for document in scheduler_rbac():
        client.apply(document)
    service_account_kubeconfig(plane, SCHEDULER_NAMESPACE, SCHEDULER_ACCOUNT, plane.operator_kubeconfig_path)


def service_account_kubeconfig(plane: ControlPlane, namespace: str, account: str, path: Path) -> Path:
    """A kubeconfig at `path` holding a token of ServiceAccount `namespace/account` (what a pod would mount)."""
    status, answer = plane.admin().request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 7 * 86400}},
    )
    if status != 201:
        raise ControlPlaneError(f"TokenRequest for {namespace}/{account} answered {status}: {answer}")
    _write_kubeconfig(path, plane.url, plane.state / "pki" / "ca.crt", {"token": answer["status"]["token"]})
    return path


def scheduler_rbac() -> list[dict[str, object]]:
    """The ServiceAccount, ClusterRole/Role and their bindings that give the scheduler exactly the rules file."""
    cluster_rules, namespace_rules = all_rules()
    subject = {"kind": "ServiceAccount", "name": SCHEDULER_ACCOUNT, "namespace": SCHEDULER_NAMESPACE}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": SCHEDULER_ACCOUNT, "namespace": SCHEDULER_NAMESPACE}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": SCHEDULER_ACCOUNT}, "rules": cluster_rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": SCHEDULER_ACCOUNT},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SCHEDULER_ACCOUNT},
         "subjects": [subject]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": SCHEDULER_ACCOUNT, "namespace": SCHEDULER_NAMESPACE},
         "rules": namespace_rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": SCHEDULER_ACCOUNT, "namespace": SCHEDULER_NAMESPACE},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": SCHEDULER_ACCOUNT},
         "subjects": [subject]},
    ]


def all_rules() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Every rule of the rules file as RBAC rules (cluster-wide, namespaced), whatever its `when`: the tier
    exercises every optional path, and puts the Lease, the configuration and the estimator Services in the
    scheduler's one namespace."""
    rules = yaml.safe_load(RBAC_RULES.read_text())["rules"]

    def bare(rule: dict[str, object]) -> dict[str, object]:
        return {key: value for key, value in rule.items() if key not in ("scope", "when")}

    return (
        [bare(rule) for rule in rules if rule["scope"] == "cluster"],
        [bare(rule) for rule in rules if rule["scope"] != "cluster"],
    )


def _write_kubeconfig(path: Path, url: str, ca: Path, user: dict[str, str]) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": {"server": url, "certificate-authority": str(ca)}}],
        "users": [{"name": "user", "user": user}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "user"}}],
        "current-context": "test",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ControlPlaneError(f"{what}: {result.stderr.strip()}")


def main(argv: Sequence[str]) -> int:
    """`python -m testsupport.realcluster up|down` (what `python3 dev.py cluster up|down` runs)."""
    state = ROOT / ".cluster"
    if list(argv) == ["up"]:
        try:
            plane = start(state, tie_to_parent=False)
        except ControlPlaneError as error:
            print(f"cluster: {error}", file=sys.stderr)
            return 1
        print(f"cluster: serving {plane.url} (kubeconfig {plane.kubeconfig_path.relative_to(ROOT)})")
        return 0
    if list(argv) == ["down"]:
        ran = stop(state)
        print("cluster: stopped" if ran else "cluster: nothing was running")
        return 0
    print("usage: python3 dev.py cluster {up|down}", file=sys.stderr)
    return 2
