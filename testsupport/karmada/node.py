"""One real Kubernetes node for the in-cluster tier: containerd's CRI with runc, a kubelet and kube-proxy of the
tier's Kubernetes release, pods networked by the CNI bridge plugin, images imported locally (never pulled).

    bridge bsk0 (10.244.0.1/24)   made before anything starts: the pods' gateway and the node's IP, where the
                                  host's processes (karmada-apiserver, the estimators) are reachable from pods
    containerd                    its root, state, sockets, network namespaces and runc root under node/
    kubelet                       cgroupfs driver, failCgroupV1: false (a cgroup v1 host), its root under node/
    kube-proxy                    iptables mode: Service ClusterIPs reach pods

Cluster DNS is not run: pods reach Services by ClusterIP, through the `<SERVICE>_SERVICE_HOST` variables the
kubelet gives every container, and reach karmada-apiserver and the estimators by the gateway's address.

`teardown(home)` undoes all of it, whether the processes still run or not: every container and sandbox, their
mounts, network namespaces and cgroups, kube-proxy's iptables rules, the bridge, the host-local leases, and the
one sysctl the bridge plugin turns on (net.ipv4.ip_forward) back to what it was."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import yaml

from testsupport.processes import Identity, exit_status, signal_group, wait_gone

BRIDGE = "bsk0"
POD_CIDR = "10.244.0.0/24"
GATEWAY = "10.244.0.1"
NODE_NAME = "karmada-host"
SANDBOX_IMAGE = "registry.k8s.io/pause:3.10.1"
NAMESPACE = "k8s.io"  # containerd's namespace for the CRI's images and containers
COMMANDS = ("containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "ip", "mount", "umount")
DISABLED = (
    "io.containerd.internal.v1.opt",
    "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
    "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp",
)
CGROUP_ROOT = Path("/sys/fs/cgroup")
SHIM_SOCKETS = Path("/run/containerd")
IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")
REQUIREMENT = ("a node with a kubelet needs root, containerd and runc (Debian's containerd), iptables, iproute2, "
               "overlayfs, network namespaces and a mounted cgroup hierarchy")


class NodeError(RuntimeError):
    """The node could not be set up; the message says which step and why."""


PACKAGES = {"containerd": "containerd", "containerd-shim-runc-v2": "containerd", "ctr": "containerd", "runc": "runc",
            "iptables": "iptables", "ip": "iproute2", "mount": "mount", "umount": "mount"}
"""The Debian package of each of `COMMANDS`."""


def readied() -> str | None:
    """`missing()`, once the Debian packages of the missing `COMMANDS` are installed (apt-get, as root), as the
    image tier installs its own: where this can run a node, it must not skip for want of a package."""
    from scripts.image import CannotBuild, ensure_commands

    if os.geteuid() == 0:
        with suppress(CannotBuild):  # missing() then says what is still missing
            ensure_commands(PACKAGES)
    return missing()


def missing() -> str | None:
    """Why this machine cannot run a node (None when it can)."""
    if os.geteuid() != 0:
        return "not root"
    absent = [command for command in COMMANDS if shutil.which(command) is None]
    if absent:
        return f"missing {', '.join(absent)}"
    if "overlay" not in Path("/proc/filesystems").read_text():
        return "no overlayfs in /proc/filesystems"
    if not (CGROUP_ROOT / "memory").is_dir() and not (CGROUP_ROOT / "cgroup.controllers").exists():
        return f"no cgroup hierarchy at {CGROUP_ROOT}"
    if not Path("/proc/self/ns/net").exists():
        return "no network namespaces"
    if _ip("link", "show", BRIDGE).returncode == 0:
        return (f"the bridge {BRIDGE} exists: another in-cluster plane runs on this machine (one node at a time: "
                f"stop it with `dev.py karmada down`, or `ip link del {BRIDGE}` if none runs)")
    return None


def containerd_config(home: Path, cni_bin: Path) -> str:
    disabled = ", ".join(f'"{plugin}"' for plugin in DISABLED)
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return "\n".join([
        "version = 2", f'root = "{home / "containerd" / "root"}"', f'state = "{home / "containerd" / "state"}"',
        f"disabled_plugins = [{disabled}]",
        f'[grpc]\n  address = "{socket_path(home)}"', f'[ttrpc]\n  address = "{socket_path(home)}.ttrpc"',
        '[debug]\n  address = ""', '[metrics]\n  address = ""',
        f"[{cri}]", f'  sandbox_image = "{SANDBOX_IMAGE}"', "  netns_mounts_under_state_dir = true",
        "  enable_selinux = false", "  disable_apparmor = true",
        # the kubelet gives a sandbox oom_score_adj -998; lowering it needs CAP_SYS_RESOURCE, which a container
        # host (this machine among them) may not grant: runc then fails with "can't get final child's PID"
        "  restrict_oom_score_adj = true",
        f"[{cri}.cni]", f'  bin_dir = "{cni_bin}"', f'  conf_dir = "{home / "cni" / "net.d"}"',
        f"[{cri}.containerd]", '  snapshotter = "overlayfs"', '  default_runtime_name = "runc"',
        f"[{cri}.containerd.runtimes.runc]", '  runtime_type = "io.containerd.runc.v2"',
        f"[{cri}.containerd.runtimes.runc.options]", "  SystemdCgroup = false",
        f'  Root = "{home / "runc"}"', "",
    ])


def socket_path(home: Path) -> Path:
    return home / "containerd" / "containerd.sock"


def cni_config(home: Path) -> dict[str, object]:
    """The bridge plugin on `bsk0` with host-local addresses from POD_CIDR. No masquerading and no portmap:
    pods talk to each other and to the host, nothing else, so no CNI rule lands in the host's iptables."""
    return {
        "cniVersion": "1.0.0", "name": "binding-scheduler-node",
        "plugins": [
            {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False, "hairpinMode": True,
             "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_CIDR, "gateway": GATEWAY}]],
                      "routes": [{"dst": "0.0.0.0/0"}], "dataDir": str(home / "cni" / "ipam")}},
            {"type": "loopback"},
        ],
    }


def kubelet_config(home: Path, ca: Path, port: int, healthz_port: int) -> dict[str, object]:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "failCgroupV1": False,  # kubelet v1.35 refuses a cgroup v1 host unless told
        "failSwapOn": False, "cgroupDriver": "cgroupfs",
        "containerRuntimeEndpoint": f"unix://{socket_path(home)}",
        "address": GATEWAY, "port": port, "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1", "healthzPort": healthz_port,
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": False},
                           "x509": {"clientCAFile": str(ca)}},
        "authorization": {"mode": "AlwaysAllow"},
        "clusterDomain": "cluster.local", "resolvConf": "/etc/resolv.conf",
        "podCIDR": POD_CIDR, "maxPods": 110, "serializeImagePulls": False,
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
        "nodeStatusUpdateFrequency": "4s", "syncFrequency": "10s", "fileCheckFrequency": "10s",
        "protectKernelDefaults": False, "cgroupsPerQOS": True, "enforceNodeAllocatable": ["pods"],
        "localStorageCapacityIsolation": True, "volumeStatsAggPeriod": "0s",
    }


def make_bridge(home: Path) -> None:
    """`bsk0` with the gateway's address, before anything that binds to it starts; ip_forward's value kept
    so that teardown can put it back."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "ip_forward").write_text(IP_FORWARD.read_text())
    if _ip("link", "show", BRIDGE).returncode != 0:
        _check(_ip("link", "add", BRIDGE, "type", "bridge"), f"creating the bridge {BRIDGE}")
    addresses = _ip("-4", "addr", "show", "dev", BRIDGE).stdout
    if f"{GATEWAY}/" not in addresses:
        _check(_ip("addr", "add", f"{GATEWAY}/24", "dev", BRIDGE), f"giving {BRIDGE} {GATEWAY}")
    _check(_ip("link", "set", BRIDGE, "up"), f"bringing {BRIDGE} up")


def write_configuration(home: Path, cni_bin: Path) -> None:
    (home / "containerd").mkdir(parents=True, exist_ok=True)
    (home / "containerd" / "config.toml").write_text(containerd_config(home, cni_bin))
    (home / "cni" / "net.d").mkdir(parents=True, exist_ok=True)
    (home / "cni" / "net.d" / "10-bridge.conflist").write_text(json.dumps(cni_config(home), indent=2))


def ctr(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ctr", "--address", str(socket_path(home)), "--namespace", NAMESPACE, *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


def wait_containerd(home: Path, alive: Identity, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while ctr(home, "version", timeout=timeout).returncode != 0:
        if exit_status(alive) is not None or time.monotonic() > deadline:
            raise NodeError(f"containerd did not answer on {socket_path(home)}")
        time.sleep(0.1)


def import_image(home: Path, archive: Path) -> None:
    """An OCI archive into the CRI's namespace, under the name its index carries (`ctr images import`)."""
    result = ctr(home, "images", "import", "--no-unpack", str(archive), timeout=300)
    _check(result, f"importing {archive.name} into containerd")


def images(home: Path) -> list[str]:
    return ctr(home, "images", "ls", "-q").stdout.split()


def container_pid(home: Path, client: Any, namespace: str, pod: str) -> int:
    """The host pid of the first container of `pod` (its PID 1: tini, in binding-scheduler's image)."""
    status = client.ok("GET", f"/api/v1/namespaces/{namespace}/pods/{pod}")["status"]
    container = status["containerStatuses"][0]["containerID"].removeprefix("containerd://")
    for line in ctr(home, "tasks", "ls").stdout.splitlines()[1:]:
        task, pid, *_ = line.split()
        if task == container:
            return int(pid)
    raise NodeError(f"no task of {pod}'s container {container} on the node")


def kill_container(home: Path, client: Any, namespace: str, pod: str) -> int:
    """SIGKILL to the first container of `pod` on the node, as the node itself would kill it (the OOM killer,
    a crash): the kubelet restarts it. Returns the pid killed."""
    pid = container_pid(home, client, namespace, pod)
    os.kill(pid, signal.SIGKILL)
    return pid


def teardown(home: Path, stopped_first: Sequence[Identity] = (), containerd: Identity | None = None) -> None:
    """Everything the node made, undone (see the module's docstring), whether its processes still run or not.
    `stopped_first`: the kubelet and kube-proxy, killed before anything else (each only while still its own,
    so that nothing restarts a container); `containerd`: removes every task and container while it still runs,
    then is stopped."""
    for identity in stopped_first:
        if signal_group(identity, signal.SIGKILL, "node"):
            wait_gone(identity)
    if containerd is not None and exit_status(containerd) is None:
        _remove_containers(home)
        _stop(containerd)
    _stop_shims(home)
    _kill_pods()
    _unmount_under(home)
    _remove_cgroups()
    _cleanup_kube_proxy(home)
    if _ip("link", "show", BRIDGE).returncode == 0:
        _ip("link", "del", BRIDGE)
    saved = home / "ip_forward"
    if saved.exists():
        with suppress(OSError):
            IP_FORWARD.write_text(saved.read_text())
    for leftover in (SHIM_SOCKETS / "s", SHIM_SOCKETS / "fifo", SHIM_SOCKETS):
        with suppress(OSError):
            leftover.rmdir()  # only when empty: another containerd on the machine keeps it


def leftovers(home: Path) -> list[str]:
    """What a node in `home` left on the machine after teardown: mounts under it, its shims, the pods'
    cgroups, Kubernetes' iptables chains, the bridge (empty when teardown did its job)."""
    prefix = str(home.resolve())
    found = [f"mount {point}" for point in (line.split()[4] for line in
                                             Path("/proc/self/mountinfo").read_text().splitlines())
             if point == prefix or point.startswith(prefix + "/")]
    address = str(socket_path(home)).encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError):
                if address in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(f"process {entry.name}")
    found += [f"cgroup {path}" for path in CGROUP_ROOT.glob("*/kubepods")]
    for command in ("iptables", "ip6tables"):
        if shutil.which(command) is None:  # no node ever ran here: no chains of one
            continue
        for table in ("filter", "nat", "mangle"):
            listed = subprocess.run([command, "-t", table, "-S"], capture_output=True, text=True,
                                    check=False).stdout
            found += [f"{command} -t {table} {line}" for line in listed.splitlines() if "KUBE-" in line]
    if _ip("link", "show", BRIDGE).returncode == 0:
        found.append(f"bridge {BRIDGE}")
    return found


def _remove_containers(home: Path) -> None:
    """Every task killed and deleted and every container removed, so that no sandbox keeps a network
    namespace."""
    for task in ctr(home, "tasks", "ls", "-q", timeout=20).stdout.split():
        ctr(home, "tasks", "kill", "--all", "--signal", "SIGKILL", task, timeout=20)
        ctr(home, "tasks", "delete", "--force", task, timeout=20)
    for container in ctr(home, "containers", "ls", "-q", timeout=20).stdout.split():
        ctr(home, "containers", "rm", container, timeout=20)


def _stop(daemon: Identity) -> None:
    if signal_group(daemon, signal.SIGTERM, "containerd"):
        deadline = time.monotonic() + 10
        while exit_status(daemon) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if exit_status(daemon) is None:
            signal_group(daemon, signal.SIGKILL, "containerd")
            wait_gone(daemon)


def _kill_pods() -> None:
    """Whatever still runs in a pod's cgroup (containerd died before it could remove the containers)."""
    for procs in CGROUP_ROOT.glob("pids/kubepods/**/cgroup.procs"):
        with suppress(OSError, ValueError):
            for pid in procs.read_text().split():
                os.kill(int(pid), signal.SIGKILL)


def _stop_shims(home: Path) -> None:
    """A shim outlives containerd by design; those whose command line names our socket are killed."""
    address = str(socket_path(home)).encode()
    for pid_file in (home / "containerd" / "state").glob("io.containerd.runtime.v2.task/*/*/shim.pid"):
        with suppress(ValueError, OSError):
            pid = int(pid_file.read_text())
            if address in (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0"):
                os.kill(pid, signal.SIGKILL)


def _unmount_under(folder: Path) -> None:
    prefix = str(folder.resolve())
    for _ in range(3):
        points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
        ours = sorted((p for p in points if p == prefix or p.startswith(prefix + "/")), key=len, reverse=True)
        if not ours:
            return
        for point in ours:
            subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)


def _remove_cgroups() -> None:
    """The kubelet's pods' cgroups (kubepods/ under each controller): only those with no process left."""
    for top in CGROUP_ROOT.glob("*/kubepods"):
        for child in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            with suppress(OSError):
                child.rmdir()
        with suppress(OSError):
            top.rmdir()


def _cleanup_kube_proxy(home: Path) -> None:
    binary = home / "kube-proxy.path"
    if binary.exists():
        subprocess.run([binary.read_text().strip(), "--cleanup"], capture_output=True, timeout=60, check=False)
    for command in ("iptables", "ip6tables"):
        if shutil.which(command):
            for table in ("filter", "nat", "mangle"):
                _remove_kube_chains(command, table)


def _remove_kube_chains(command: str, table: str) -> None:
    """The kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY) and whatever kube-proxy left: the rules
    jumping to them first, then the chains."""
    listed = subprocess.run([command, "-t", table, "-S"], capture_output=True, text=True, check=False).stdout
    rules = [line.split() for line in listed.splitlines()]
    for rule in rules:
        if rule[0] == "-A" and not rule[1].startswith("KUBE-") and any(
                word.startswith("KUBE-") for word in rule[2:]):
            subprocess.run([command, "-t", table, "-D", *rule[1:]], capture_output=True, check=False)
    chains = [rule[1] for rule in rules if rule[0] == "-N" and rule[1].startswith("KUBE-")]
    for flag in ("-F", "-X"):
        for chain in chains:
            subprocess.run([command, "-t", table, flag, chain], capture_output=True, check=False)


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)


def _check(result: subprocess.CompletedProcess[str], what: str) -> None:
    if result.returncode != 0:
        raise NodeError(f"{what}: exit {result.returncode}: {(result.stderr or result.stdout).strip()}")


def kubelet_files(home: Path, ca: Path, port: int, healthz_port: int) -> Path:
    """The kubelet's configuration file, written; its path."""
    path = home / "kubelet-config.yaml"
    path.write_text(yaml.safe_dump(kubelet_config(home, ca, port, healthz_port)))
    (home / "kubelet").mkdir(exist_ok=True)
    return path
