"""Differential tests: `binding-scheduler simulate` against Karmada v1.18.2's own scheduler (karmada-oracle) on
generated fleets and bindings (testsupport/oracle/strategies.py), a few hundred cases, seeded.

Every binding must come out the same (scheduled, reason, message, clusters) or differ only as one of the
allowances of testsupport/oracle/differential.py, each a deliberate difference docs/compatibility.md lists. A
divergence fails the test with the case written as an input file under the test's tmp dir, the two commands
that reproduce it, and the difference. The long run (20,000 cases and more) is scripts/differential.py.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from binding_scheduler.cli.inputs import load_inputs
from testsupport.oracle import differential, oracle
from testsupport.oracle.differential import Tally, Verdict
from testsupport.oracle.strategies import Case, fleet_scale_cases, known_cases, workload_affinity_cases

# The differential tier's share of the default run: about a minute on 2 cores (see docs/testing.md).
CASES = 400
WORKLOAD_AFFINITY_CASES = 100  # gate WorkloadAffinity: settled group members and one subject each
SEED = 20260310
FLEET_SCALE = (1000, 5000)  # one case each, 10-25 s (more: scripts/differential.py --fleet-size 5000)

pytestmark = [pytest.mark.usefixtures("karmada_oracle"), pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def run() -> tuple[list[Case], list[list[Verdict]]]:
    cases = (differential.generate(CASES, SEED) + known_cases()
             + differential.generate(WORKLOAD_AFFINITY_CASES, SEED, workload_affinity_cases()))
    return cases, differential.run_batch(cases)


def test_simulate_decides_as_karmada(
    run: tuple[list[Case], list[list[Verdict]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases, results = run
    _judge(cases, results, tmp_path, capsys, "differential")


def test_simulate_decides_over_huge_fleets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = fleet_scale_cases(FLEET_SCALE, SEED)
    assert [sum(d["kind"] == "Cluster" for d in case.documents) for case in cases] == list(FLEET_SCALE)
    _judge(cases, differential.run_batch(cases), tmp_path, capsys, "differential at fleet scale")


def _judge(cases: list[Case], results: list[list[Verdict]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
           label: str) -> None:
    tally = Tally()
    failures = []
    for i, (case, verdicts) in enumerate(zip(cases, results, strict=True)):
        tally.add(verdicts)
        if any(v.verdict == "divergence" for v in verdicts):
            path = differential.write_case(case, tmp_path / f"case-{SEED}-{i}.yaml")
            failures.append(differential.describe(case, verdicts, path))
    with capsys.disabled():
        print(f"\n{label} (seed {SEED}): {tally.summary()}")
    assert tally.cases == len(cases)
    assert not failures, f"{len(failures)} case(s) diverge from Karmada:\n\n" + "\n\n".join(failures)


def _expressions(affinity: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(affinity, dict):
        return
    for part in ("labelSelector", "fieldSelector"):
        for expression in (affinity.get(part) or {}).get("matchExpressions") or ():
            yield part, expression


def _affinities(placement: dict[str, Any]) -> Iterator[Any]:
    yield placement.get("clusterAffinity")
    for term in placement.get("clusterAffinities") or ():
        yield term
        yield from term.get("overflowAffinities") or ()


def _odd(toleration: dict[str, Any]) -> bool:
    """A toleration Kubernetes' pod validation would refuse."""
    operator = toleration.get("operator", "")
    return (operator not in ("", "Exists", "Equal") or (operator == "Exists" and bool(toleration.get("value")))
            or (not toleration.get("key") and operator != "Exists"))


def shapes(case: Case) -> set[str]:
    """What a case exercises, read from its documents."""
    found: set[str] = set()
    clusters = [d for d in case.documents if d["kind"] == "Cluster"]
    found.add("fleet>50" if len(clusters) > 50 else "fleet<=5" if len(clusters) <= 5 else "fleet 6-50")
    for cluster in clusters:
        spec, status = cluster["spec"], cluster["status"]
        found.update(f"taint {t['effect']}" for t in spec.get("taints") or ())
        found.add(f"sync {spec['syncMode']}")
        if "deletionTimestamp" in cluster["metadata"]:
            found.add("deleting cluster")
        if spec.get("resourceModels"):
            found.add("resource models")
        if "allocating" in (status.get("resourceSummary") or {}):
            found.add("allocating")
        if any(c["type"] == "Ready" and c["status"] != "True" for c in status["conditions"]):
            found.add("not ready")
        if any(c["type"] == "CompleteAPIEnablements" for c in status["conditions"]):
            found.add("CompleteAPIEnablements")
    if case.flags.get("featureGates", {}).get("MultiplePodTemplatesScheduling"):
        found.add("gate MultiplePodTemplatesScheduling")
    if case.flags.get("featureGates", {}).get("WorkloadAffinity"):
        found.add("gate WorkloadAffinity")
    for binding in (d for d in case.documents if d["kind"] != "Cluster"):
        spec = binding["spec"]
        found.add(binding["kind"])
        groups = spec.get("workloadAffinityGroups") or {}
        found.update(field for field in ("affinityGroup", "antiAffinityGroup") if groups.get(field))
        if spec.get("components"):
            found.add("components")
        if spec.get("replicaRequirements", {}).get("nodeClaim"):
            found.add("nodeClaim")
        if spec.get("clusters"):
            found.add("previous clusters")
        if spec.get("gracefulEvictionTasks"):
            found.add("eviction")
        if spec.get("rescheduleTriggeredAt"):
            found.add("rescheduleTriggeredAt")
        placement = spec.get("placement")
        if placement is None:
            found.add("no placement")
            continue
        scheduling = placement.get("replicaScheduling") or {}
        preference = scheduling.get("replicaDivisionPreference")
        weights = scheduling.get("weightPreference") or {}
        found.add("static weights" if weights.get("staticWeightList") else "dynamic weights"
                  if weights.get("dynamicWeight") else str(preference or scheduling.get("replicaSchedulingType")))
        if any("fieldSelector" in w["targetCluster"] for w in weights.get("staticWeightList") or ()):
            found.add("static weights by field")
        if placement.get("clusterAffinities"):
            found.add("clusterAffinities")
            if binding.get("status", {}).get("schedulerObservingAffinityName"):
                found.add("observed affinity")
            if any(t.get("overflowAffinities") for t in placement["clusterAffinities"]):
                found.add("overflowAffinities")
        if placement.get("clusterTolerations"):
            found.add("tolerations")
            if any(_odd(t) for t in placement["clusterTolerations"]):
                found.add("odd tolerations")
        spreads = placement.get("spreadConstraints") or []
        for spread in spreads:
            by = spread.get("spreadByField") or ("label" if spread.get("spreadByLabel") else "without field")
            found.add(f"spread {by}")
        by_field = [s.get("spreadByField") for s in spreads if s.get("spreadByField")]
        if len(by_field) != len(set(by_field)):
            found.add("repeated spreadByField")
        if any(not s.get("minGroups") for s in spreads):
            found.add("minGroups 0")
        if ("replicaScheduling" in placement and not preference
                and (scheduling.get("replicaSchedulingType") or "Divided") == "Divided"):
            found.add("Divided without preference")
        for affinity in _affinities(placement):
            for part, expression in _expressions(affinity):
                found.add(f"{part} {expression.get('operator')}")
                if part == "fieldSelector" and expression.get("key") == "":
                    found.add("fieldSelector empty key")
                if expression.get("operator") in ("Gt", "Lt") and not expression.get("values"):
                    found.add("Gt/Lt without values")
        if placement.get("clusterAffinities") == []:
            found.add("empty clusterAffinities")
    return found


EXERCISED = {
    "fleet<=5", "fleet 6-50", "fleet>50", "taint NoSchedule", "taint NoExecute", "taint PreferNoSchedule",
    "sync Push", "sync Pull", "deleting cluster", "resource models", "allocating", "not ready",
    "CompleteAPIEnablements", "gate MultiplePodTemplatesScheduling", "gate WorkloadAffinity", "affinityGroup",
    "antiAffinityGroup", "ResourceBinding", "ClusterResourceBinding",
    "components", "nodeClaim", "previous clusters", "eviction", "rescheduleTriggeredAt", "no placement",
    "Duplicated", "Aggregated", "Weighted", "static weights", "static weights by field", "dynamic weights",
    "clusterAffinities", "observed affinity", "overflowAffinities", "tolerations", "spread cluster",
    "spread region", "spread zone", "spread provider", "spread label",
    "labelSelector In", "labelSelector NotIn", "labelSelector Exists", "labelSelector DoesNotExist",
    "fieldSelector In", "fieldSelector NotIn", "fieldSelector Exists", "fieldSelector DoesNotExist",
    # the shapes only a binding created directly has (docs/compatibility.md says what each does)
    "repeated spreadByField", "minGroups 0", "spread without field", "Divided without preference",
    "fieldSelector empty key", "Gt/Lt without values", "empty clusterAffinities", "odd tolerations",
}


def test_cases_exercise_every_shape(run: tuple[list[Case], list[list[Verdict]]]) -> None:
    cases, _ = run
    seen = set(itertools.chain.from_iterable(shapes(c) for c in cases))
    assert not EXERCISED - seen, f"the generated cases miss: {sorted(EXERCISED - seen)}"


def test_known_allowances_are_met(run: tuple[list[Case], list[list[Verdict]]]) -> None:
    """The deliberate differences show up (so their checks are exercised, not dead code)."""
    _, results = run
    seen = {v.verdict for verdicts in results for v in verdicts}
    assert {"filter-order", "no-placement", "policy-defaults"} <= seen


def test_karmada_gives_both_workload_affinity_reasons(run: tuple[list[Case], list[list[Verdict]]]) -> None:
    """The workload affinity cases reach both filters' verdicts on Karmada's side (so their texts are compared,
    not only the placements)."""
    _, results = run
    messages = " ".join(v.theirs["message"] for verdicts in results for v in verdicts if v.theirs is not None)
    assert "ResourceBinding with the same affinity group does not target this cluster" in messages
    assert "cluster already has workload with the same anti-affinity group" in messages


def test_input_file_reproduces_both_sides(run: tuple[list[Case], list[list[Verdict]]], tmp_path: Path) -> None:
    """What a failure prints is the truth: `simulate -f FILE` (its own file reading) decides as the in-process
    run did, and `karmada-oracle -f FILE` (single-run mode) as the batch did (up to its filter order, which is
    drawn again in every scheduler)."""
    cases, results = run
    checked = 0
    for i, (case, verdicts) in enumerate(zip(cases, results, strict=True)):
        if case.flags or checked == 3:
            continue
        path = differential.write_case(case, tmp_path / f"case-{i}.yaml")
        inputs = load_inputs([str(path)])
        assert not inputs.errors
        ours = differential.run_ours([case])[0]
        assert [b.name for b in inputs.bindings] == [r["name"] for r in ours.results]
        assert ours.results == [v.ours for v in verdicts]
        theirs = oracle.run("-f", str(path))["results"]
        documents = [d for d in case.documents if d["kind"] != "Cluster"]
        for binding, verdict, karmada in zip(ours.bindings, verdicts, theirs, strict=True):
            assert binding is not None and verdict.ours is not None and verdict.theirs is not None
            assert _without_message(karmada) == _without_message(verdict.theirs)
            if karmada["message"] != verdict.theirs["message"]:
                snapshot, plugins = ours.snapshot, ours.plugins
                assert snapshot is not None and plugins is not None
                allowed = differential.allowed_fit_messages(binding, snapshot, plugins)
                assert {karmada["message"], verdict.theirs["message"]} <= allowed
        checked += 1
        assert len(documents) == len(theirs)
    assert checked == 3


def _without_message(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "message"}


# --- the allowances are narrow ------------------------------------------------------------------------------

RESULT = {"kind": "ResourceBinding", "namespace": "default", "name": "web"}
PLACED = {"spec": {"placement": {}, "clusters": [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1},
                                                   {"name": "m3", "replicas": 1}]}}


def verdict(ours: dict[str, Any], theirs: dict[str, Any], document: dict[str, Any] | None = None,
            messages: set[str] | None = None) -> str:
    doc = {"kind": "ResourceBinding", "metadata": {"namespace": "default", "name": "web"}, **(document or PLACED)}
    return differential.classify(doc, {**RESULT, **ours}, {**RESULT, **theirs}, {}, lambda: messages or set())[0]


def test_filter_order_allows_only_messages_another_order_gives() -> None:
    fit = {"scheduled": False, "reason": "NoClusterFit", "clusters": []}
    allowed = {"0/2 clusters are available: 2 a.", "0/2 clusters are available: 1 a, 1 b."}
    a, b = sorted(allowed)
    assert verdict({**fit, "message": a}, {**fit, "message": b}, messages=allowed) == "filter-order"
    assert verdict({**fit, "message": a}, {**fit, "message": "0/2 clusters are available: 2 b."},
                   messages=allowed) == "divergence"
    assert verdict({**fit, "message": a}, {**fit, "message": b, "clusters": [{"name": "m1"}]},
                   messages=allowed) == "divergence"


def test_merge_order_reorders_only_tail() -> None:
    done = {"scheduled": True, "reason": "Success", "message": "ok"}
    ours = [{"name": "m4", "replicas": 3}, {"name": "m2", "replicas": 1}, {"name": "m3", "replicas": 1}]
    karmada = [{"name": "m4", "replicas": 3}, {"name": "m3", "replicas": 1}, {"name": "m2", "replicas": 1}]
    assert verdict({**done, "clusters": ours}, {**done, "clusters": karmada}) == "merge-order"
    # not previous clusters, or ours not in name order, or other replicas: divergences
    assert verdict({**done, "clusters": list(reversed(ours))}, {**done, "clusters": ours}) == "divergence"
    changed = [*karmada[:2], {"name": "m2", "replicas": 2}]
    assert verdict({**done, "clusters": ours}, {**done, "clusters": changed}) == "divergence"
    # with empty-workload propagation the zero-replica clusters follow, alike on both sides
    zero = [{"name": "m9"}, {"name": "m0"}]
    assert verdict({**done, "clusters": ours + zero}, {**done, "clusters": karmada + zero}) == "merge-order"
    assert verdict({**done, "clusters": ours + zero}, {**done, "clusters": karmada + zero[::-1]}) == "divergence"


def test_no_placement_allows_only_our_condition() -> None:
    previous = [{"name": "m1", "replicas": 2}]
    document = {"spec": {"clusters": previous}}
    ours = {"scheduled": False, "reason": "SchedulerError",
            "message": "failed to get placement from resourceBinding(default/web)", "clusters": previous}
    assert verdict(ours, {**ours, "reason": "", "message": ""}, document) == "no-placement"
    assert verdict(ours, {**ours, "reason": "", "message": "", "clusters": []}, document) == "divergence"
    assert verdict({**ours, "message": "other"}, {**ours, "reason": "", "message": ""}, document) == "divergence"


def test_int32_sum_allows_only_wrapped_sum_of_candidates() -> None:
    document = {"spec": {"replicaRequirements": {}, "rescheduleTriggeredAt": "2026-02-11T00:00:00Z",
                         "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided",
                                                             "replicaDivisionPreference": "Aggregated"}},
                         "clusters": [{"name": "m1", "replicas": 3}]},
                "status": {"lastScheduledTime": "2026-02-10T12:00:00Z"}}
    doc = {"kind": "ResourceBinding", "metadata": {"namespace": "default", "name": "web"}, **document}
    ours = {**RESULT, "scheduled": True, "reason": "Success", "message": "ok", "clusters": []}

    def karmada(total: int) -> dict[str, Any]:
        message = f"failed to assign replicas: failed to do fresh scale: Clusters available replicas {total} are " \
                  "not enough to schedule."
        return {**RESULT, "scheduled": False, "reason": "Unschedulable", "message": message,
                "clusters": [{"name": "m1", "replicas": 3}]}

    # two candidates: (2^31 - 1 + 3) + (2^31 - 1) wraps to 1 (not negative: Karmada would not fail)
    two, three = (lambda: ["m1", "m2"]), (lambda: ["m1", "m2", "m3"])
    assert differential.classify(doc, ours, karmada(1), {}, set, two)[0] == "divergence"
    # three candidates: 3 * (2^31 - 1) + 3 = 3 * 2^31 wraps to -2^31
    assert differential.classify(doc, ours, karmada(-2147483648), {}, set, three)[0] == "int32-sum"
    assert differential.classify(doc, ours, karmada(-2147483647), {}, set, three)[0] == "divergence"
    steady = {**doc, "status": {"lastScheduledTime": "2026-02-12T00:00:00Z"}}
    assert differential.classify(steady, ours, karmada(-2147483648), {}, set, three)[0] == "divergence"


def test_component_results_only_own_components() -> None:
    parts = [{"name": "driver", "replicas": 1}, {"name": "worker", "replicas": 3}]
    doc = {"kind": "ResourceBinding", "metadata": {"namespace": "default", "name": "job"},
           "spec": {"components": parts, "placement": {}}}
    theirs = {**RESULT, "scheduled": True, "reason": "Success", "message": "ok", "clusters": [{"name": "m1"}]}
    ours = {**theirs, "clusters": [{"name": "m1", "components": parts}]}
    assert differential.classify(doc, ours, theirs, {}, set)[0] == "component-results"
    wrong = {**ours, "clusters": [{"name": "m1", "components": parts[:1]}]}
    assert differential.classify(doc, wrong, theirs, {}, set)[0] == "divergence"
    elsewhere = {**theirs, "clusters": [{"name": "m2"}]}
    assert differential.classify(doc, ours, elsewhere, {}, set)[0] == "divergence"
    one_part = {**doc, "spec": {"components": parts[:1], "placement": {}}}
    assert differential.classify(one_part, {**ours, "clusters": [{"name": "m1", "components": parts[:1]}]},
                                 theirs, {}, set)[0] == "divergence"


def test_variant_allows_only_what_karmada_decides_on_it() -> None:
    document = {"spec": {"placement": {"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2}]}}}
    doc = {"kind": "ResourceBinding", "metadata": {"namespace": "default", "name": "web"}, **document}
    ours = {**RESULT, "scheduled": True, "reason": "Success", "message": "ok", "clusters": [{"name": "m1"}]}
    theirs = {**ours, "scheduled": False, "reason": "SchedulerError", "message": "x", "clusters": []}
    assert differential.needs_policy_defaults(doc)
    assert differential.classify(doc, ours, theirs, {"policy-defaults": ours}, set)[0] == "policy-defaults"
    assert differential.classify(doc, ours, theirs, {"policy-defaults": theirs}, set)[0] == "divergence"
    defaulted = {**document["spec"]["placement"]["spreadConstraints"][0], "minGroups": 1}
    doc["spec"] = {"placement": {"spreadConstraints": [defaulted]}}
    assert differential.classify(doc, ours, theirs, {"policy-defaults": ours}, set)[0] == "divergence"


def test_oracle_batch_mode_answers_each_case_alone() -> None:
    served = [{"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}]
    cluster = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"},
               "status": {"apiEnablements": served}}
    binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
               "metadata": {"name": "cm", "namespace": "default"},
               "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm"}, "placement": {}}}
    answers = oracle.decide_cases([
        {"id": "a", "documents": [cluster, binding], "flags": {}},
        {"id": "b", "documents": [binding], "flags": {"featureGates": {"NoSuchGate": True}}},
        {"id": "c", "documents": [binding], "flags": {}},  # no cluster: nothing of case a is left
        {"id": "d", "documents": [{"kind": "Cluster", "metadata": {}}], "flags": {}},
    ])
    assert [a["id"] for a in answers] == ["a", "b", "c", "d"]
    assert answers[0]["results"][0]["clusters"] == [{"name": "m1"}]
    assert answers[1]["error"] == 'featureGates: unknown gate "NoSuchGate"'
    assert answers[2]["results"][0]["message"] == "0/0 clusters are available: no cluster exists."
    assert "metadata.name: is required" in answers[3]["error"]
    assert json.loads(json.dumps(answers)) == answers
