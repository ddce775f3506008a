"""The in-cluster plane (`dev.py karmada up --in-cluster`): Karmada's own components stay processes, the host
cluster is a real one with a node run by a kubelet (testsupport/karmada/node.py), and the scheduler runs in it as the
chart's pods, from the image `dev.py image` builds, reaching karmada-apiserver through the kubeconfig Secret
Karmada's install layout puts in the host cluster's karmada-system.

    host            etcd + kube-apiserver + kube-controller-manager + kube-scheduler (the `karmada-host`
                    context), and the node `karmada-host`: containerd, kubelet, kube-proxy
    karmada         as in plane.py, its API server and the estimators also listening on the pods' gateway

The chart is installed by helm into karmada-system; `--layout` picks which of Karmada's install layouts the
host cluster is made to look like (the Secrets that install creates), and the chart's value selecting it."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from testsupport.chart.helm import CHART
from testsupport.karmada import manifests, node
from testsupport.karmada.plane import (
    KARMADA_SYSTEM,
    Builder,
    Cluster,
    KarmadaError,
    KarmadaPlane,
    Processes,
    cni_binaries,
    wait_for,
)
from testsupport.realcluster.controlplane import free_port
from testsupport.realcluster.kube import KubeClient

HOST = "host"
RELEASE = "binding-scheduler"
SELECTOR = "app.kubernetes.io/name=binding-scheduler"

KUBECONFIG, CA, CERT, KEY = "kubeconfig", "ca", "cert", "key"
LAYOUTS: dict[str, dict[str, dict[str, str]]] = {
    "local-up": {"karmada-scheduler-config": {"karmada.config": KUBECONFIG},
                 "karmada-scheduler-scheduler-estimator-client-cert": {"ca.crt": CA, "tls.crt": CERT,
                                                                       "tls.key": KEY}},
    "karmadactl-init": {"karmada-scheduler-config": {"karmada.config": KUBECONFIG},
                        "karmada-cert": {"ca.crt": CA, "karmada.crt": CERT, "karmada.key": KEY}},
    "helm": {"karmada-kubeconfig": {"kubeconfig": KUBECONFIG},
             "karmada-cert": {"server-ca.crt": CA, "karmada.crt": CERT, "karmada.key": KEY}},
    "operator": {"karmada-demo-scheduler-config": {"karmada.config": KUBECONFIG},
                 "karmada-demo-cert": {"ca.crt": CA, "karmada.crt": CERT, "karmada.key": KEY}},
}
"""The Secrets each of Karmada's installs creates in karmada-system for its karmada-scheduler (secret -> key ->
what it holds), with the chart's defaults for the names Karmada leaves to the user (the helm release `karmada`,
the operator's instance `karmada-demo`): hack/local-up-karmada.sh and artifacts/deploy/karmada-scheduler.yaml,
`karmadactl init` (pkg/karmadactl/cmdinit), Karmada's chart (charts/karmada), karmada-operator (operator/pkg)."""
DEFAULT_LAYOUT = "local-up"
SCHEDULER_FLAGS = ["--enable-scheduler-estimator=true", "--v=2"]
"""As Karmada's own Deployment of karmada-scheduler (artifacts/deploy): every member's estimator asked."""
NODE_READY_TIMEOUT = 120.0
PODS_READY_TIMEOUT = 180.0


def start_host(builder: Builder) -> Cluster:
    """The host cluster with its node Ready and the images imported; its bridge must already exist
    (node.make_bridge)."""
    host = builder.kube_cluster(HOST)
    start_node(builder, host)
    return host


def start_node(builder: Builder, host: Cluster) -> None:
    home = builder.state / "node"
    node.write_configuration(home, cni_binaries())
    (home / "kube-proxy.path").write_text(str(builder.kube / "kube-proxy"))
    processes = builder.processes
    processes.start("node-containerd", ["containerd", "--config", str(home / "containerd" / "config.toml")])
    node.wait_containerd(home, processes.identities["node-containerd"])
    for archive in images():
        node.import_image(home, archive)
    pki = builder.pki
    builder.issue_client(f"node-{node.NODE_NAME}", f"system:node:{node.NODE_NAME}", org=["system:nodes"])
    kubelet_kubeconfig = home / "kubelet.kubeconfig"
    _client_kubeconfig(kubelet_kubeconfig, host.url, pki / "ca.crt", pki / f"node-{node.NODE_NAME}.crt",
                       pki / f"node-{node.NODE_NAME}.key")
    config = node.kubelet_files(home, pki / "ca.crt", free_port(), free_port())
    processes.start("node-kubelet", [
        str(builder.kube / "kubelet"), f"--config={config}", f"--kubeconfig={kubelet_kubeconfig}",
        f"--root-dir={home / 'kubelet'}", f"--cert-dir={home / 'kubelet-pki'}",
        f"--hostname-override={node.NODE_NAME}", f"--node-ip={node.GATEWAY}", "--v=1",
    ])
    processes.start("node-kube-proxy", [
        str(builder.kube / "kube-proxy"), f"--kubeconfig={host.kubeconfig}", "--proxy-mode=iptables",
        f"--hostname-override={node.NODE_NAME}", f"--cluster-cidr={node.POD_CIDR}",
        f"--metrics-bind-address=127.0.0.1:{free_port()}", f"--healthz-bind-address=127.0.0.1:{free_port()}",
        "--conntrack-max-per-core=0", "--v=1",
    ])
    client = host.client()
    wait_for(lambda: _node_ready(client), f"the node {node.NODE_NAME} Ready", processes,
             timeout=NODE_READY_TIMEOUT)


def images() -> list[Path]:
    """binding-scheduler's image, karmada-scheduler's and the sandbox's, built when missing (scripts/image.py)."""
    from scripts import binary_image, image

    return [image.build(), binary_image.pause_image(), binary_image.karmada_scheduler_image()]


def _client_kubeconfig(path: Path, server: str, ca: Path, cert: Path, key: Path) -> None:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "u", "user": {"client-certificate": str(cert), "client-key": str(key)}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}], "current-context": "c",
    }))


def embedded_kubeconfig(server: str, pki: Path, user: str = "admin") -> str:
    """A kubeconfig with everything inline, as the Secrets of Karmada's installs hold it."""
    def data(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "karmada-apiserver",
                      "cluster": {"server": server, "certificate-authority-data": data("ca.crt")}}],
        "users": [{"name": user, "user": {"client-certificate-data": data(f"{user}.crt"),
                                          "client-key-data": data(f"{user}.key")}}],
        "contexts": [{"name": "karmada-apiserver", "context": {"cluster": "karmada-apiserver", "user": user}}],
        "current-context": "karmada-apiserver",
    })


def secret(name: str, data: dict[str, bytes], namespace: str = KARMADA_SYSTEM) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
            "type": "Opaque", "data": {key: base64.b64encode(value).decode() for key, value in data.items()}}


def install(plane: KarmadaPlane, layout: str, *values: str) -> None:
    """The Secrets of Karmada's install `layout` in the host cluster, then the scheduler: the chart with the
    value that selects that layout (and `values`, `--set` arguments), or, for karmada-scheduler, the Deployment
    of Karmada's own manifest; its two pods Running and Ready."""
    if layout not in LAYOUTS:
        raise KarmadaError(f"--layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    if plane.scheduler == "karmada" and layout != "local-up":
        raise KarmadaError("karmada-scheduler in-cluster runs from artifacts/deploy/karmada-scheduler.yaml: "
                           "the local-up layout only")
    pki = plane.pki
    url = plane.karmada.url.replace("127.0.0.1", node.GATEWAY)
    held = {KUBECONFIG: embedded_kubeconfig(url, pki).encode(), CA: (pki / "ca.crt").read_bytes(),
            CERT: (pki / "karmada-scheduler-grpc.crt").read_bytes(),
            KEY: (pki / "karmada-scheduler-grpc.key").read_bytes()}
    documents: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": KARMADA_SYSTEM}},
        *(secret(name, {key: held[what] for key, what in keys.items()}) for name, keys in LAYOUTS[layout].items()),
    ]
    others = {name for other, secrets in LAYOUTS.items() if other != layout for name in secrets} - set(
        LAYOUTS[layout])
    plane.kubectl("-n", KARMADA_SYSTEM, "delete", "secret", "--ignore-not-found", *sorted(others),
                  context="karmada-host")  # only the layout's own Secrets are there
    plane.kubectl("apply", "-f", "-", context="karmada-host", input=yaml.safe_dump_all(documents))
    if plane.scheduler == "karmada":
        plane.kubectl("apply", "-f", "-", context="karmada-host",
                      input=yaml.safe_dump_all(karmada_scheduler_manifest()))
        selector = "app=karmada-scheduler"
    else:
        helm(plane, "upgrade", "--install", RELEASE, str(CHART), "--namespace", KARMADA_SYSTEM,
             "--set", f"karmadaAPI.layout={layout}", "--set", "image.pullPolicy=Never",
             "--set-json", f"extraArgs={json.dumps(SCHEDULER_FLAGS)}", *values)
        selector = SELECTOR
    client = host_client(plane)
    wait_for(lambda: pods_ready(client, selector, 2), f"the scheduler's two pods ({selector}) Running and Ready",
             Processes.of(plane.state), timeout=PODS_READY_TIMEOUT)
    wait_rollout(plane, "karmada-scheduler" if plane.scheduler == "karmada" else RELEASE)


def uninstall(plane: KarmadaPlane) -> None:
    """The scheduler's pods gone (the chart uninstalled, or Karmada's Deployment deleted), the Secrets kept."""
    if plane.scheduler == "karmada":
        plane.kubectl("-n", KARMADA_SYSTEM, "delete", "deployment", "karmada-scheduler", "--ignore-not-found",
                      context="karmada-host")
        selector = "app=karmada-scheduler"
    else:
        helm(plane, "uninstall", RELEASE, "--namespace", KARMADA_SYSTEM, "--wait")
        selector = SELECTOR
    client = host_client(plane)
    wait_for(lambda: not client.ok("GET", f"/api/v1/namespaces/{KARMADA_SYSTEM}/pods?labelSelector={selector}")[
        "items"], "the scheduler's pods gone", Processes.of(plane.state), timeout=PODS_READY_TIMEOUT)


def karmada_scheduler_manifest() -> list[dict[str, Any]]:
    """artifacts/deploy/karmada-scheduler.yaml as hack/deploy-karmada.sh applies it, with the image built here
    (scripts/binary_image.py) and pulled never."""
    from scripts import binary_image

    deployments = manifests.documents(manifests.karmada_module() / "artifacts" / "deploy" / "karmada-scheduler.yaml",
                                      {"{{KUBE_CACHE_MUTATION_DETECTOR}}": "false"})
    for deployment in deployments:
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            container["image"] = binary_image.karmada_scheduler_reference()
            container["imagePullPolicy"] = "Never"
    return deployments


def host_client(plane: KarmadaPlane) -> KubeClient:
    return KubeClient.from_kubeconfig(plane.state / HOST / "admin.kubeconfig")


def _node_ready(client: KubeClient) -> bool:
    status, answer = client.request("GET", f"/api/v1/nodes/{node.NODE_NAME}")
    if status != 200:
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (answer.get("status") or {}).get("conditions") or ())


def pods_ready(client: KubeClient, selector: str, count: int, namespace: str = KARMADA_SYSTEM) -> bool:
    status, answer = client.request("GET", f"/api/v1/namespaces/{namespace}/pods?labelSelector={selector}")
    if status != 200:
        return False
    ready = [pod for pod in answer.get("items", []) if pod["status"].get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in pod["status"].get("conditions") or ())]
    return len(ready) >= count


def helm(plane: KarmadaPlane, *args: str, timeout: float = 300) -> str:
    from testsupport.chart.helm import binary

    command = [str(binary()), "--kubeconfig", str(plane.kubeconfig), "--kube-context", "karmada-host", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise KarmadaError(f"helm {' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def wait_rollout(plane: KarmadaPlane, deployment: str, timeout: float = PODS_READY_TIMEOUT) -> None:
    """Until the Deployment's newest ReplicaSet has all its pods Ready and no old pod is left."""
    plane.kubectl("-n", KARMADA_SYSTEM, "rollout", "status", f"deployment/{deployment}", f"--timeout={timeout:.0f}s",
                  context="karmada-host")
