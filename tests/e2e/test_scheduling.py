"""The operator schedules on a real kube-apiserver exactly what `simulate` computes, in at most two writes per
binding, with Karmada's events on the binding and its resource template."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.harness import Journal, Objects, condition, e2e_config, start_operator, wait_scheduled, with_scheduler
from testsupport.realcluster.controlplane import ROOT, ControlPlane
from testsupport.realcluster.kube import KubeClient

EXAMPLES = ROOT / "examples"


def example_documents(scheduler_name: str) -> list[dict[str, Any]]:
    documents = []
    for name in ("clusters.yaml", "bindings.yaml"):
        documents.extend(d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d)
    return with_scheduler(documents, scheduler_name)


def create_examples(objects: Objects, scheduler_name: str) -> list[dict[str, Any]]:
    documents = example_documents(scheduler_name)
    namespaces = sorted({d["metadata"]["namespace"] for d in documents if d["metadata"].get("namespace")})
    objects.create(*({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces))
    clusters = [d for d in documents if d["kind"] == "Cluster"]
    bindings = [d for d in documents if d["kind"] != "Cluster"]
    objects.create(*clusters)
    return objects.create(*bindings)


def simulated(kube: KubeClient, bindings: list[dict[str, Any]], tmp_path: Path, config: Path,
              ) -> dict[tuple[str, str], Any]:
    """`binding-scheduler simulate -o json` over the objects as the server stores them now, with the scheduler's
    configuration file (its scheduler name: the others' bindings would be skipped)."""
    names = {d["metadata"]["name"] for d in bindings}
    stored = [c for c in kube.list("Cluster")] + [
        b for b in kube.list("ResourceBinding") + kube.list("ClusterResourceBinding") if b["metadata"]["name"] in names
    ]
    source = tmp_path / "stored.yaml"
    source.write_text(yaml.safe_dump_all(stored))
    result = subprocess.run(
        [sys.executable, "-m", "binding_scheduler.cli.main", "simulate", "-f", str(source), "-o", "json",
         "--config-file", str(config)],
        capture_output=True, text=True, check=True,
    )
    return {(r["namespace"] or "", r["name"]): r for r in json.loads(result.stdout)["results"]}


def test_every_example_strategy_is_scheduled_as_simulate_decides(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, scheduler_name: str,
    tmp_path: Path,
) -> None:
    bindings = create_examples(objects, scheduler_name)
    config = e2e_config(tmp_path / "config.yaml", scheduler_name)
    expected = simulated(kube, bindings, tmp_path, config)
    operator = start_operator(control_plane, config)
    try:
        for binding in bindings:
            meta = binding["metadata"]
            body = wait_scheduled(kube, binding["kind"], meta["name"], meta.get("namespace"))
            want = expected[(meta.get("namespace") or "", meta["name"])]
            assert (body["spec"].get("clusters") or []) == want["clusters"], meta["name"]
            got = condition(body)
            assert got is not None and (got["reason"], got["message"]) == (want["reason"], want["message"])
    finally:
        assert operator.stop() == 0


def test_each_binding_gets_at_most_spec_write_and_status_write(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, scheduler_name: str,
    tmp_path: Path,
) -> None:
    bindings = create_examples(objects, scheduler_name)
    operator = start_operator(control_plane, e2e_config(tmp_path / "config.yaml", scheduler_name))
    try:
        for binding in bindings:
            wait_scheduled(kube, binding["kind"], binding["metadata"]["name"], binding["metadata"].get("namespace"))
    finally:
        assert operator.stop() == 0
    writes = [e for e in journal.operator_writes() if e.resource in ("resourcebindings", "clusterresourcebindings")]
    for binding in bindings:
        name = binding["metadata"]["name"]
        mine = [(e.verb, e.subresource, e.code) for e in writes if e.name == name]
        assert mine in (
            [("patch", "", 200), ("patch", "status", 200)],  # a new placement, then its condition
            [("patch", "status", 200)],  # the placement was already right (or it could not be scheduled)
        ), (name, mine)


def test_scheduling_records_karmadas_events(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, scheduler_name: str, tmp_path: Path
) -> None:
    bindings = create_examples(objects, scheduler_name)
    binding = next(b for b in bindings if b["metadata"]["name"] == "checkout-deployment")
    namespace = binding["metadata"]["namespace"]
    operator = start_operator(control_plane, e2e_config(tmp_path / "config.yaml", scheduler_name))
    try:
        wait_scheduled(kube, "ResourceBinding", "checkout-deployment", namespace)
    finally:
        assert operator.stop() == 0
    body = kube.get("ResourceBinding", "checkout-deployment", namespace)
    assert body is not None
    result = ", ".join(sorted(f"{c['name']}:{c['replicas']}" for c in body["spec"]["clusters"]))
    template = binding["spec"]["resource"]
    for kind, name in (("ResourceBinding", "checkout-deployment"), (template["kind"], template["name"])):
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        events = [e for e in kube.list("Event", namespace, fieldSelector=selector)
                  if e["source"].get("component") == scheduler_name]
        assert [(e["type"], e["reason"], e["message"]) for e in events] == [
            ("Normal", "ScheduleBindingSucceed", f"Binding has been scheduled successfully. Result: {{{result}}}")
        ], kind
