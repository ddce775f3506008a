"""Reading simulate/explain inputs: kubectl-style YAML is accepted, and any unreadable file
is one `FILE: KIND NAME: problem` line with exit 2 (never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from binding_scheduler.cli.main import main

CLUSTER = """\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: m1
  creationTimestamp: 2024-01-01T00:00:00Z
spec:
  syncMode: Push
status:
  apiEnablements:
  - groupVersion: apps/v1
    resources: [{name: deployments, kind: Deployment}]
  resourceSummary:
    allocatable: {pods: "10"}
"""

BINDING = """\
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: web
  namespace: default
  labels: {propagationpolicy.karmada.io/permanent-id: p1}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: default}
  replicas: 2
  rescheduleTriggeredAt: 2024-05-01T10:00:00Z
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
status:
  lastScheduledTime: 2024-04-01T10:00:00Z
"""


def test_unquoted_yaml_timestamps_are_read_as_kubectl_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # PyYAML turns an unquoted timestamp into a datetime; kubectl keeps the text, so the file is valid.
    path = tmp_path / "fleet.yaml"
    path.write_text(CLUSTER + "---\n" + BINDING)
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    (result,) = json.loads(out)["results"]
    assert (result["scheduled"], result["clusters"]) == (True, [{"name": "m1", "replicas": 2}])


def test_file_that_is_not_utf8_is_bad_input_line_not_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "a.yaml"
    good.write_text(CLUSTER)
    bad = tmp_path / "b.yaml"
    bad.write_bytes(b"kind: Cluster\nmetadata: {name: \xff\xfe}\n")
    code = main(["simulate", "-f", str(good), "-f", str(bad), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.splitlines() == [f"{bad}: not UTF-8 text: invalid start byte"]


def test_two_clusters_of_one_name_are_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An API server holds one Cluster per name; scheduling against both would list the name twice in spec.clusters.
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(CLUSTER)
    second.write_text(CLUSTER + "---\n" + BINDING)
    code = main(["simulate", "-f", str(first), "-f", str(second), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.splitlines() == [f"{second}: Cluster m1: metadata.name: 'm1' is already a Cluster in {first}"]
