"""`binding-scheduler examples [DIR] [--apply]`: the bundled examples, written out for `simulate -f DIR` or applied to
an API server with their namespaces and the Clusters' status."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli.examples import bundled_documents, bundled_examples
from binding_scheduler.cli.main import main
from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import request

ROOT = Path(__file__).resolve().parents[2]


def test_bundled_examples_are_written_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["examples", str(tmp_path / "fleet")]) == 0
    written = sorted((tmp_path / "fleet").iterdir())
    assert [p.name for p in written] == ["bindings.yaml", "clusters.yaml", "scheduler-configuration.yaml"]
    assert all(p.read_bytes() == (ROOT / "examples" / p.name).read_bytes() for p in written)
    assert capsys.readouterr().out.split() == [str(p) for p in written]


def test_default_folder_is_examples_in_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["examples"]) == 0
    assert (tmp_path / "examples" / "clusters.yaml").is_file()


def test_existing_files_are_kept_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "clusters.yaml").write_text("mine\n")
    assert main(["examples", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"examples: not overwriting {tmp_path / 'clusters.yaml'} (--force does)\n"
    assert (tmp_path / "clusters.yaml").read_text() == "mine\n"
    assert not (tmp_path / "bindings.yaml").exists()  # nothing is half-written
    assert main(["examples", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "clusters.yaml").read_bytes() == (ROOT / "examples" / "clusters.yaml").read_bytes()


def test_written_examples_simulate_as_repository_ones_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["examples", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["simulate", "-f", str(tmp_path), "-o", "json"]) == 0
    written = capsys.readouterr().out
    assert main(["simulate", "-f", str(ROOT / "examples"), "-o", "json"]) == 0
    assert written == capsys.readouterr().out


def test_bundled_examples_are_read_through_importlib_resources() -> None:
    assert [item.name for item in bundled_examples()] == [
        "bindings.yaml", "clusters.yaml", "scheduler-configuration.yaml"
    ]


def examples_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "binding_scheduler.cli.main", "examples", *args],
                          capture_output=True, text=True, timeout=60, check=False)


def stored(api: DevCluster, plural_path: str) -> list[dict[str, Any]]:
    status, answer = request(api, "GET", plural_path)
    assert status == 200, answer
    return list(answer["items"])


def test_apply_puts_examples_with_namespaces_and_status() -> None:
    documents = bundled_documents()
    with DevCluster.in_thread() as api:
        result = examples_cli("--apply", "--kubeconfig", str(api.kubeconfig_path))
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[:2] == ["namespace/karmada-system applied", "namespace/shop applied"]
        assert "cluster.cluster.karmada.io/aws-use1-a applied (with its status)" in result.stdout.splitlines()
        clusters = {c["metadata"]["name"]: c for c in stored(api, "/apis/cluster.karmada.io/v1alpha1/clusters")}
        for document in (d for d in documents if d["kind"] == "Cluster"):
            assert clusters[document["metadata"]["name"]]["status"] == document["status"]
        bindings = stored(api, "/apis/work.karmada.io/v1alpha2/resourcebindings")
        assert sorted(b["metadata"]["name"] for b in bindings) == sorted(
            d["metadata"]["name"] for d in documents if d["kind"] == "ResourceBinding")
        assert len(stored(api, "/apis/config.binding-scheduler.io/v1alpha1/schedulerconfigurations")) == 1
    assert not Path("examples").exists() or Path("examples").resolve() == ROOT / "examples"  # no folder written


def test_what_apply_stored_schedules_exactly_as_examples_do(tmp_path: Path) -> None:
    with DevCluster.in_thread() as api:
        assert examples_cli("--apply", "--kubeconfig", str(api.kubeconfig_path)).returncode == 0
        objects = [*stored(api, "/apis/cluster.karmada.io/v1alpha1/clusters"),
                   *stored(api, "/apis/work.karmada.io/v1alpha2/resourcebindings"),
                   *stored(api, "/apis/work.karmada.io/v1alpha2/clusterresourcebindings")]
    (tmp_path / "stored.yaml").write_text(yaml.safe_dump_all(objects))
    from_server = simulate_json(tmp_path / "stored.yaml")
    assert from_server == simulate_json(ROOT / "examples")
    assert sum(r["scheduled"] for r in from_server.values()) == 9  # of 11: two fail on purpose


def simulate_json(path: Path) -> dict[tuple[str, str], Any]:
    """`simulate -o json`'s results by binding (a list from the server comes in name order, the files' in theirs)."""
    result = subprocess.run([sys.executable, "-m", "binding_scheduler.cli.main", "simulate", "-f", str(path), "-o",
                             "json"], capture_output=True, text=True, timeout=60, check=True)
    return {(r["namespace"] or "", r["name"]): r for r in json.loads(result.stdout)["results"]}


def test_apply_second_time_updates_in_place() -> None:
    with DevCluster.in_thread() as api:
        assert examples_cli("--apply", "--kubeconfig", str(api.kubeconfig_path)).returncode == 0
        again = examples_cli("--apply", "--kubeconfig", str(api.kubeconfig_path))
        assert again.returncode == 0, again.stderr
        assert len(stored(api, "/apis/cluster.karmada.io/v1alpha1/clusters")) == sum(
            d["kind"] == "Cluster" for d in bundled_documents())


def test_apply_with_folder_writes_it_too(tmp_path: Path) -> None:
    with DevCluster.in_thread() as api:
        result = examples_cli(str(tmp_path / "fleet"), "--apply", "--kubeconfig", str(api.kubeconfig_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == str(tmp_path / "fleet" / "bindings.yaml")
    assert (tmp_path / "fleet" / "clusters.yaml").is_file()


def test_apply_skips_config_without_its_crd(tmp_path: Path) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    for crd in (ROOT / "crds").glob("*karmada.io_*.yaml"):
        shutil.copy(crd, crds)
    with DevCluster.in_thread(crds) as api:
        result = examples_cli("--apply", "--kubeconfig", str(api.kubeconfig_path))
    assert result.returncode == 0, result.stderr
    assert (
        "karmada-system/schedulerconfiguration.config.binding-scheduler.io/binding-scheduler skipped: the server "
        "does not serve config.binding-scheduler.io/v1alpha1 schedulerconfigurations "
        "(install crds/config.binding-scheduler.io_schedulerconfigurations.yaml)"
    ) in result.stdout.splitlines()
    last = "clusterresourcebinding.work.karmada.io/platform-viewer-clusterrole applied"
    assert result.stdout.splitlines()[-1] == last


def test_apply_without_crds_is_one_line_and_status_1(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    with DevCluster.in_thread(tmp_path / "crds") as api:
        result = examples_cli("--apply", "--kubeconfig", str(api.kubeconfig_path))
    assert result.returncode == 1
    assert result.stderr == (
        "examples: cluster.cluster.karmada.io/aws-use1-a: the server does not serve cluster.karmada.io/v1alpha1 "
        "clusters (are Karmada's CRDs installed?)\n"
    )


def test_apply_with_missing_kubeconfig_is_one_line_and_status_1(tmp_path: Path) -> None:
    result = examples_cli("--apply", "--kubeconfig", str(tmp_path / "nosuch"))
    assert result.returncode == 1
    assert result.stderr.startswith("examples: ") and str(tmp_path / "nosuch") in result.stderr
    assert len(result.stderr.splitlines()) == 1
