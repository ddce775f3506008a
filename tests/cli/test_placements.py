"""`binding-scheduler placements`: where the replicas are, bindings × clusters, with totals and free capacity, as a
table, a JSON document or an SVG heat map; from files or a live plane (read-only)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli.main import main
from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import binding_doc, cluster_doc

DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
TRIPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Triplicated"}}
SVG = "{http://www.w3.org/2000/svg}"


def summarised(name: str, allocatable: dict[str, str], allocated: dict[str, str] | None = None,
               allocating: dict[str, str] | None = None) -> dict[str, Any]:
    doc = cluster_doc(name)
    doc["status"]["resourceSummary"] = {"allocatable": allocatable, "allocated": allocated or {},
                                        "allocating": allocating or {}}
    return doc


def unsummarised(name: str) -> dict[str, Any]:
    doc = cluster_doc(name)
    del doc["status"]["resourceSummary"]
    return doc


def cluster_scoped(name: str, clusters: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ClusterResourceBinding", "metadata": {"name": name},
            "spec": {"resource": {"apiVersion": "v1", "kind": "Namespace", "name": name}, "clusters": clusters}}


def fleet() -> list[dict[str, Any]]:
    """Two clusters with pods only in their summaries; a Divided binding on both, a Duplicated one on both, one
    placed nowhere, and a ClusterResourceBinding (no replicas) on one."""
    return [
        cluster_doc("m2", pods=50),
        cluster_doc("m1", pods=100),
        binding_doc("web", replicas=3, clusters=[{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]),
        binding_doc("cache", replicas=4, placement=DUPLICATED,
                    clusters=[{"name": "m1", "replicas": 4}, {"name": "m2", "replicas": 4}]),
        binding_doc("new", namespace="shop"),
        cluster_scoped("viewer", [{"name": "m2"}]),
    ]


def write(tmp_path: Path, *docs: dict[str, Any]) -> str:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def placements(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> tuple[str, str]:
    assert main(["placements", *args]) == code
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_table_has_binding_rows_cluster_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = placements(capsys, "-f", write(tmp_path, *fleet()))
    assert out == (
        "BINDING                         m1  m2  TOTAL\n"
        "ClusterResourceBinding viewer    -   0      0\n"
        "ResourceBinding default/cache    4   4      8\n"
        "ResourceBinding default/web      2   1      3\n"
        "ResourceBinding shop/new         -   -      0\n"
        "TOTAL                            6   5     11\n"
        "FREE PODS                      100  50    150\n"
        "FREE CPU (cores)                 -   -      -\n"
        "FREE MEMORY (GiB)                -   -      -\n"
    )
    assert err == "4 bindings on 2 clusters: 11 replicas placed, 1 binding placed nowhere\n"


def test_free_is_allocatable_minus_used_and_allocating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = summarised("busy", {"pods": "110", "cpu": "16", "memory": "64Gi"},
                      {"pods": "30", "cpu": "10500m", "memory": "20Gi"}, {"pods": "5", "cpu": "450m", "memory": "4Gi"})
    full = summarised("full", {"pods": "10", "cpu": "2"}, {"pods": "12", "cpu": "2100m"})
    placed = binding_doc("web", clusters=[{"name": "busy", "replicas": 1}, {"name": "dark", "replicas": 2}])
    out, _ = placements(capsys, "-f", write(tmp_path, busy, full, unsummarised("dark"), placed))
    assert out.splitlines()[-4:] == [
        "TOTAL                           1     2     0      3",
        "FREE PODS                      75     -    -2     73",
        "FREE CPU (cores)              5.0     -  -0.1    4.9",
        "FREE MEMORY (GiB)            40.0     -     -   40.0",
    ]


def test_json_is_one_document_of_clusters_and_bindings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = summarised("busy", {"pods": "110", "cpu": "16", "memory": "64Gi"}, {"pods": "30", "cpu": "10500m"})
    web = binding_doc("web", clusters=[{"name": "busy", "replicas": 3}, {"name": "gone", "replicas": 1}])
    out, err = placements(capsys, "-f", write(tmp_path, busy, web, binding_doc("new")), "-o", "json")
    assert json.loads(out) == {
        "clusters": [
            {"name": "busy", "found": True, "replicas": 3, "bindings": 1,
             "free": {"pods": 80, "cpuMillicores": 5500, "memoryBytes": 64 * 2**30}},
            {"name": "gone", "found": False, "replicas": 1, "bindings": 1, "free": None},
        ],
        "bindings": [
            {"kind": "ResourceBinding", "namespace": "default", "name": "new", "replicas": 0, "clusters": {},
             "invalid": None},
            {"kind": "ResourceBinding", "namespace": "default", "name": "web", "replicas": 4,
             "clusters": {"busy": 3, "gone": 1}, "invalid": None},
        ],
    }
    assert err.splitlines()[0] == "warning: 1 binding placed on cluster 'gone', which is not among the Clusters"


def test_clusters_without_bindings_show_free_capacity_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = summarised("busy", {"pods": "110", "cpu": "16", "memory": "64Gi"}, {"pods": "30", "cpu": "10500m"})
    out, _ = placements(capsys, "-f", write(tmp_path, busy), "-o", "json")
    assert json.loads(out) == {
        "clusters": [{"name": "busy", "found": True, "replicas": 0, "bindings": 0,
                      "free": {"pods": 80, "cpuMillicores": 5500, "memoryBytes": 64 * 2**30}}],
        "bindings": [],
    }


def test_invalid_binding_is_row_saying_why_and_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, cluster_doc("m1"), binding_doc("bad", placement=TRIPLICATED),
                 binding_doc("web", clusters=[{"name": "m1", "replicas": 1}]))
    out, err = placements(capsys, "-f", path)
    problem = "spec.placement.replicaScheduling.replicaSchedulingType: 'Triplicated' is not one of Duplicated, Divided"
    assert out.splitlines()[:3] == [
        "BINDING                       m1  TOTAL",
        f"ResourceBinding default/bad  invalid: {problem}",
        "ResourceBinding default/web    1      1",
    ]
    assert err.splitlines() == [
        f"warning: {path}: ResourceBinding default/bad: invalid binding: {problem} (its placement is not shown)",
        "2 bindings on 1 cluster: 1 replica placed, 1 invalid",
    ]


def test_svg_is_heat_map_with_cell_per_placement_and_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = placements(capsys, "-f", write(tmp_path, *fleet()), "-o", "svg")
    root = ET.fromstring(out)
    cells = root.findall(f"{SVG}rect[@class='cell']")
    numbers = [t.text for t in root.findall(f"{SVG}text[@class='replicas']")]
    assert root.tag == f"{SVG}svg"
    assert [c.findtext(f"{SVG}title") for c in cells] == [
        "ClusterResourceBinding viewer on m2: 0 replicas",
        "ResourceBinding default/cache on m1: 4 replicas",
        "ResourceBinding default/cache on m2: 4 replicas",
        "ResourceBinding default/web on m1: 2 replicas",
        "ResourceBinding default/web on m2: 1 replicas",
    ]
    assert numbers == ["0", "4", "4", "2", "1"]
    assert [c.get("fill") for c in cells] == ["#c6dbef", "#08306b", "#08306b", "#6786ad", "#96b0ce"]
    assert [t.text for t in root.findall(f"{SVG}text[@class='cluster']")] == ["m1", "m2"]
    assert [t.text for t in root.findall(f"{SVG}text[@class='total']")] == ["0", "8", "3", "0", "6", "5", "11"]
    assert [t.text for t in root.findall(f"{SVG}text[@class='free']")] == ["100", "50", "150"]


def test_svg_escapes_names_it_draws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = binding_doc('a<b&"c', namespace="x>y", clusters=[{"name": "m<1", "replicas": 2}])
    out, _ = placements(capsys, "-f", write(tmp_path, cluster_doc("m<1"), odd), "-o", "svg")
    root = ET.fromstring(out)
    assert 'x&gt;y/a&lt;b&amp;"c' in out
    assert [t.text for t in root.findall(f"{SVG}text[@class='binding']")] == [
        'ResourceBinding x>y/a<b&"c'
    ]
    assert [t.text for t in root.findall(f"{SVG}text[@class='cluster']")] == ["m<1"]


def test_big_matrix_shrinks_cells_and_keeps_counts_in_tooltips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clusters = [cluster_doc(f"c{i:02d}") for i in range(40)]
    bindings = [binding_doc(f"b{i:03d}", clusters=[{"name": f"c{i % 40:02d}", "replicas": 1 + i % 7}])
                for i in range(200)]
    out, _ = placements(capsys, "-f", write(tmp_path, *clusters, *bindings), "-o", "svg")
    root = ET.fromstring(out)
    cells = root.findall(f"{SVG}rect[@class='cell']")
    assert (len(cells), {c.get("width") for c in cells}) == (200, {"10"})
    assert root.findall(f"{SVG}text[@class='replicas']") == []
    assert cells[0].findtext(f"{SVG}title") == "ResourceBinding default/b000 on c00: 1 replicas"


def test_big_fleet_prints_row_per_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clusters = [cluster_doc(f"c{i:02d}", pods=10) for i in range(11)]
    web = binding_doc("web", clusters=[{"name": "c00", "replicas": 2}, {"name": "c10", "replicas": 1}])
    out, _ = placements(capsys, "-f", write(tmp_path, *clusters, web, cluster_scoped("viewer", [{"name": "c00"}])))
    lines = out.splitlines()
    assert lines[:2] == [
        "CLUSTER  REPLICAS  FREE PODS  FREE CPU (cores)  FREE MEMORY (GiB)  BINDINGS",
        "c00             2         10                 -                  -  viewer:0, default/web:2",
    ]
    assert lines[2] == "c01             0         10                 -                  -  -"
    assert lines[-2:] == [
        "c10             1         10                 -                  -  default/web:1",
        "TOTAL           3        110                 -                  -  2 bindings",
    ]


def test_clusters_flag_narrows_picture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, *(cluster_doc(n) for n in ("aws-1", "aws-2", "gcp-1")),
                 binding_doc("a", clusters=[{"name": "aws-1", "replicas": 1}, {"name": "gcp-1", "replicas": 5}]),
                 binding_doc("g", clusters=[{"name": "gcp-1", "replicas": 2}]))
    out, err = placements(capsys, "-f", path, "--clusters", "aws-*")
    assert out.splitlines()[:4] == [
        "BINDING                    aws-1  aws-2  TOTAL",
        "ResourceBinding default/a      1      -      1",
        "TOTAL                          1      0      1",
        "FREE PODS                    100    100    200",
    ]
    assert err == "1 binding on 2 clusters: 1 replica placed (1 more on no cluster --clusters shows)\n"


def test_clusters_pattern_that_matches_nothing_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err = placements(capsys, "-f", write(tmp_path, *fleet()), "--clusters", "m1,azure-*", code=2)
    assert err == "error: --clusters 'azure-*' matches no cluster (clusters: m1, m2)\n"


def test_bad_input_is_exit_2_and_nothing_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: [unclosed\n")
    out, err = placements(capsys, "-f", str(broken), code=2)
    assert (out, err.startswith(f"{broken}: not valid YAML or JSON: ")) == ("", True)


def test_with_strict_invalid_binding_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = placements(capsys, "-f", write(tmp_path, cluster_doc("m1"), binding_doc("bad", placement=TRIPLICATED)),
                        "--strict", code=2)
    assert out == ""


@pytest.fixture
def plane() -> Iterator[DevCluster]:
    """karmada-apiserver (emulated) holding two clusters and two bindings placed on them."""
    with DevCluster.in_thread() as api:
        for name, pods in (("m1", 100), ("m2", 40)):
            body = cluster_doc(name, pods=pods)
            api.store.create("clusters", {k: v for k, v in body.items() if k != "status"})
            api.store.patch("clusters", name, {"status": body["status"]}, subresource="status")
        api.store.create("resourcebindings", binding_doc("web", replicas=3, clusters=[
            {"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]))
        api.store.create("resourcebindings", binding_doc("api", clusters=[{"name": "m2", "replicas": 1}]))
        yield api


WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def test_live_plane_is_read_and_nothing_is_written(plane: DevCluster, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = placements(capsys, "--kubeconfig", str(plane.kubeconfig_path), "-o", "json")
    document = json.loads(out)
    assert [(c["name"], c["replicas"], c["free"]["pods"]) for c in document["clusters"]] == [
        ("m1", 2, 100), ("m2", 2, 40)]
    assert [(b["name"], b["clusters"]) for b in document["bindings"]] == [
        ("api", {"m2": 1}), ("web", {"m1": 2, "m2": 1})]
    assert [e for e in plane.journal if e.method in WRITES] == []
    assert not any("leases" in e.path for e in plane.journal)


def test_plane_that_cannot_be_read_is_one_line_and_status_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "crds"
    empty.mkdir()
    with DevCluster.in_thread(crds_dir=empty) as api:
        out, err = placements(capsys, "--kubeconfig", str(api.kubeconfig_path), code=1)
    assert (out, err) == ("", f"error: {api.url} does not serve cluster.karmada.io/v1alpha1 clusters (is "
                              "--kubeconfig karmada-apiserver's? The host cluster's kubeconfig, or ~/.kube/config, "
                              "is not)\n")
