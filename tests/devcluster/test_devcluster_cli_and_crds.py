"""`binding-scheduler devcluster` and the CRDs it serves."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from binding_scheduler.cli.devcluster import serve
from binding_scheduler.devcluster import GC_THRESHOLDS, PACKAGE_CRDS, DevCluster, default_crds_dir

ROOT = Path(__file__).resolve().parents[2]


def test_package_crds_are_identical_to_repository_crds() -> None:
    packaged = sorted(p.name for p in PACKAGE_CRDS.glob("*.yaml"))
    assert packaged == [
        "cluster.karmada.io_clusters.yaml",
        "config.binding-scheduler.io_schedulerconfigurations.yaml",
        "work.karmada.io_clusterresourcebindings.yaml",
        "work.karmada.io_resourcebindings.yaml",
    ]
    for name in packaged:
        assert (ROOT / "crds" / name).read_bytes() == (PACKAGE_CRDS / name).read_bytes(), name


def test_default_crds_dir_is_repository_folder_in_checkout() -> None:
    assert default_crds_dir() == ROOT / "crds"


def _walk(schema: dict[str, object], where: str) -> list[str]:
    """Places that break the structural-schema rules (every node typed unless it preserves unknowns)."""
    problems = []
    if "type" not in schema and "anyOf" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        problems.append(where)
    for key, child in (schema.get("properties") or {}).items():  # type: ignore[attr-defined]
        problems += _walk(child, f"{where}.{key}")
    if isinstance(schema.get("items"), dict):
        problems += _walk(schema["items"], f"{where}[]")  # type: ignore[arg-type]
    return problems


def test_crds_are_structural_with_status_subresource() -> None:
    for path in sorted(PACKAGE_CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
        (version,) = crd["spec"]["versions"]
        assert (version["served"], version["storage"], version["subresources"]) == (True, True, {"status": {}})
        assert _walk(version["schema"]["openAPIV3Schema"], path.name) == []


def test_crd_scopes_groups_and_short_names() -> None:
    facts = {}
    for path in sorted(PACKAGE_CRDS.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())["spec"]
        facts[spec["names"]["kind"]] = (spec["group"], spec["versions"][0]["name"], spec["scope"],
                                        spec["names"].get("shortNames"))
    assert facts == {
        "Cluster": ("cluster.karmada.io", "v1alpha1", "Cluster", None),
        "ClusterResourceBinding": ("work.karmada.io", "v1alpha2", "Cluster", ["crb"]),
        "ResourceBinding": ("work.karmada.io", "v1alpha2", "Namespaced", ["rb"]),
        "SchedulerConfiguration": ("config.binding-scheduler.io", "v1alpha1", "Namespaced", ["schedconf"]),
    }


async def test_crds_folder_of_our_own_is_served(tmp_path: Path) -> None:
    crd = yaml.safe_load((PACKAGE_CRDS / "cluster.karmada.io_clusters.yaml").read_text())
    crd["metadata"]["name"] = "widgets.example.com"
    crd["spec"].update(group="example.com", names={"plural": "widgets", "singular": "widget", "kind": "Widget"})
    (tmp_path / "widgets.yaml").write_text(yaml.safe_dump(crd))
    async with DevCluster(crds_dir=tmp_path) as api:
        status, body = await api.client.get("/apis/example.com/v1alpha1")
        assert status == 200
        assert [r["name"] for r in body["resources"]] == ["widgets", "widgets/status"]
        assert (await api.client.get("/apis/work.karmada.io/v1alpha2"))[0] == 404


async def test_creating_crd_through_api_serves_resource(api: DevCluster) -> None:
    crd = yaml.safe_load((PACKAGE_CRDS / "cluster.karmada.io_clusters.yaml").read_text())
    crd["metadata"] = {"name": "gadgets.example.com"}
    crd["spec"].update(group="example.com", names={"plural": "gadgets", "singular": "gadget", "kind": "Gadget"})
    status, _ = await api.client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 201
    status, body = await api.client.create("/apis/example.com/v1alpha1/gadgets",
                                           {"metadata": {"name": "g1"}, "spec": {"syncMode": "Push"}})
    assert (status, body["kind"]) == (201, "Gadget")


def test_cli_serves_until_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "binding_scheduler.cli.devcluster", "devcluster", "--kubeconfig-out",
         str(kubeconfig)],
        stdout=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("devcluster: serving http://127.0.0.1:")
        url = first.split()[-1]
        with urllib.request.urlopen(f"{url}/api/v1/namespaces", timeout=10) as response:
            assert [n["metadata"]["name"] for n in json.load(response)["items"]] == ["default", "kube-system"]
        assert f"server: {url}" in kubeconfig.read_text()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


async def test_cli_collects_garbage_at_devclusters_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_to: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "set_threshold", lambda *thresholds: set_to.append(thresholds))
    args = argparse.Namespace(crds=None, host="127.0.0.1", port=0, history=100,
                              kubeconfig_out=tmp_path / "kc.yaml")
    serving = asyncio.create_task(serve(args))
    while "devcluster: serving" not in capsys.readouterr().out:  # noqa: ASYNC110 - printed, no event to wait on
        await asyncio.sleep(0.01)
    serving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await serving
    assert set_to == [GC_THRESHOLDS]
