"""The differential comparison: our `simulate` against Karmada's scheduler (karmada-oracle) on the same cases.

Used by tests/oracle/test_differential.py (a few hundred cases in the default run) and scripts/differential.py
(the long run). Our side runs in-process through `simulate`'s own code: the CLI's parser and flag handling
(`flag_settings`), the model's parsers, then `binding_scheduler.cli.simulate.simulate`.
Karmada's side runs in one oracle process per batch (`karmada-oracle --cases`).

Every binding must come out identical (scheduled, reason, message, clusters), or differ only in one of the
deliberate ways docs/compatibility.md lists. Each of those is an `Allowance` below: a named, narrow check of
what exactly that difference may change, never "ignore this field".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import itertools
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import hypothesis
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.strategies import SearchStrategy

from binding_scheduler.algorithm.errors import fit_error_message
from binding_scheduler.algorithm.explain import cluster_filter_verdicts, fleet_filter_verdicts
from binding_scheduler.algorithm.plugins import AttemptContext, WorkloadGroups
from binding_scheduler.algorithm.registry import PluginSet
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.algorithm.walk import attempts
from binding_scheduler.cli.main import build_parser
from binding_scheduler.cli.settings import flag_settings
from binding_scheduler.cli.simulate import simulate
from binding_scheduler.model import Binding, Cluster, ValidationError, parse_binding, parse_cluster
from binding_scheduler.scheduling.framework.runner import Framework
from testsupport.oracle import oracle, strategies
from testsupport.oracle.strategies import Case, cases

FIELDS = ("kind", "namespace", "name", "scheduled", "reason", "message", "clusters")

# name -> the entry of docs/compatibility.md that makes the difference deliberate
ALLOWANCES: dict[str, str] = {
    "filter-order": "Fixed: 'Filters run in one fixed order' (Karmada's filter order is Go map order, random per "
    "scheduler, so a FitError may count a cluster under another failing filter)",
    "no-placement": "Fixed: 'A binding without placement says why' (Karmada writes nothing)",
    "policy-defaults": "Kept: 'the policy webhook's placement defaults' (we read a binding as its policy would "
    "have made it; Karmada's scheduler takes the stored placement as it is)",
    "merge-order": "Fixed: 'Merging previous and new dynamic results' (Karmada appends the clusters only in the "
    "old result in Go map order)",
    "empty-affinities": "Fixed: 'nil and empty lists compare equal everywhere' (Karmada takes an empty "
    "clusterAffinities list for the ClusterAffinities path and writes nothing)",
    "reschedule-restarts-walk": "Versions: the reference (1c278577e) restarts the ClusterAffinities walk at the "
    "first term on an explicit reschedule; v1.18.2 resumes at the observed term",
    "int32-sum": "Fixed: 'Available replicas are summed without wrapping around' (a workload scaled to 0 on a "
    "Fresh reschedule: Karmada's int32 sum of MaxInt32 per candidate wraps negative for an even count)",
    "component-results": "Versions: Karmada #7833 (master after v1.19.0-rc.0) writes a multi-component workload's "
    "per-component replicas into spec.clusters[].components (gate MultiplePodTemplatesScheduling); v1.18.2 "
    "writes the cluster name only",
}


# ------------------------------------------------------------------------------------------------- cases


def generate(count: int, seed: int, strategy: SearchStrategy[Case] | None = None) -> list[Case]:
    """`count` cases from the strategy (default: `cases()`), the same ones for the same seed (and hypothesis
    version): only the generate phase runs, with no example database. Kept in the build cache under a key of
    everything they depend on (the strategies' source, hypothesis's version, the strategy, count and seed):
    generating the default run's 500 cases took 10-15 s of the suite's CPU."""
    strategy = strategy if strategy is not None else cases()
    kept = _kept_cases(count, seed, strategy)
    try:
        return [Case(documents=c["documents"], flags=c["flags"]) for c in json.loads(kept.read_text())]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    found: list[Case] = []

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(case: Case) -> None:
        found.append(case)

    collect()
    with contextlib.suppress(OSError):
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps([{"documents": c.documents, "flags": c.flags} for c in found]))
        partial.replace(kept)
    return found


def _kept_cases(count: int, seed: int, strategy: SearchStrategy[Case]) -> Path:
    key = hashlib.sha256("\0".join((
        Path(strategies.__file__).read_text(), hypothesis.__version__, repr(strategy), str(count), str(seed),
    )).encode()).hexdigest()[:24]
    root = Path(os.environ.get("BINDING_SCHEDULER_CACHE") or Path.home() / ".cache" / "binding-scheduler")
    return root / "differential-cases" / f"{key}.json"


# ------------------------------------------------------------------------------------------------- our side


@dataclass
class Ours:
    """Our answer for one case: one result per binding (input order), or the case refused as a whole."""

    results: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    refusals: dict[int, str] = field(default_factory=dict)  # binding index -> why we refused it
    bindings: list[Binding | None] = field(default_factory=list)
    snapshot: Snapshot | None = None
    plugins: PluginSet | None = None
    groups: WorkloadGroups | None = None  # gate WorkloadAffinity: the input bindings' groups, as stored


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return build_parser()


def _simulate_args(case: Case) -> argparse.Namespace:
    return _parser().parse_args(["simulate", "-f", "-", "-o", "json", *case.simulate_args()])


async def _ours(case: Case) -> Ours:
    settings = flag_settings(_simulate_args(case))
    plugins = settings.plugins()
    options = settings.options
    answer = Ours(plugins=plugins)
    clusters: list[Cluster] = []
    seen: set[str] = set()
    binding_docs = []
    for document in case.documents:
        kind = document.get("kind")
        try:
            if kind == "Cluster":
                cluster = parse_cluster(document)
                if cluster.name in seen:
                    raise ValidationError("metadata.name", f"{cluster.name!r} is already a Cluster")
                seen.add(cluster.name)
                clusters.append(cluster)
            else:
                binding_docs.append(document)
        except ValidationError as error:
            answer.refused.append(f"{kind} {document.get('metadata', {}).get('name')}: {error}")
    if answer.refused:
        return answer
    snapshot = answer.snapshot = Snapshot(clusters)
    for document in binding_docs:
        try:
            answer.bindings.append(parse_binding(document))
        except ValidationError as error:
            answer.refusals[len(answer.bindings)] = str(error)
            answer.bindings.append(None)
    answer.groups = settings.workload_groups([b for b in answer.bindings if b is not None])
    for binding in answer.bindings:
        if binding is not None:
            (result,) = await simulate([binding], snapshot, plugins, None, options, answer.groups)
            answer.results.append(result.to_dict())
    return answer


def run_ours(cases: Sequence[Case]) -> list[Ours]:
    """`simulate`'s decisions for every case, in-process (one event loop for the batch)."""

    async def run_all() -> list[Ours]:
        return [await _ours(case) for case in cases]

    return asyncio.run(run_all())


# ------------------------------------------------------------------------------------------------- Karmada


def needs_policy_defaults(document: Mapping[str, Any]) -> bool:
    """Would the PropagationPolicy webhook change this placement (Karmada's SetDefaultSpreadConstraints and
    SetReplicaDivisionPreferenceWeighted, after the CRD's replicaSchedulingType default)?"""
    placement = (document.get("spec") or {}).get("placement")
    if not isinstance(placement, Mapping):
        return False
    for constraint in placement.get("spreadConstraints") or ():
        if not constraint.get("spreadByField") and not constraint.get("spreadByLabel"):
            return True
        if not constraint.get("minGroups"):
            return True
    scheduling = placement.get("replicaScheduling")
    if isinstance(scheduling, Mapping):
        kind = scheduling.get("replicaSchedulingType") or "Divided"
        if kind == "Divided" and not scheduling.get("replicaDivisionPreference"):
            return True
    return False


def oracle_case(case: Case, case_id: Any, policy_defaults: bool = False) -> dict[str, Any]:
    flags = dict(case.flags)
    if policy_defaults:
        flags["policyDefaults"] = True
    return {"id": case_id, "documents": case.documents, "flags": flags}


def reschedule_restarts_walk(document: Mapping[str, Any]) -> bool:
    """Would the reference (1c278577e) start this binding's ClusterAffinities walk at term 0 where v1.18.2
    starts at the observed term: an explicit reschedule pending and an observed term other than the first?"""
    spec, status = document.get("spec") or {}, document.get("status") or {}
    terms = [t.get("affinityName") for t in ((spec.get("placement") or {}).get("clusterAffinities") or ())]
    observed = status.get("schedulerObservingAffinityName")
    triggered, last = spec.get("rescheduleTriggeredAt"), status.get("lastScheduledTime")
    return bool(observed in terms[1:] and triggered and last and triggered > last)


def _without_observed_term(case: Case) -> Case:
    """The case with the observed term dropped where a reschedule restarts the walk: v1.18.2 then starts at
    term 0 too, and nothing else it decides reads that name (the filter and the overflow order read the term
    under trial, the applied-placement comparison is skipped: the oracle drops the annotation)."""
    documents = []
    for document in case.documents:
        if document.get("kind") != "Cluster" and reschedule_restarts_walk(document):
            status = {k: v for k, v in document["status"].items() if k != "schedulerObservingAffinityName"}
            documents.append({**document, "status": status})
        else:
            documents.append(document)
    return Case(documents, case.flags)


# Variants of a case run on Karmada's side as well, to check an allowance: name -> (applies to the binding,
# the variant of the case, whether the oracle applies the policy webhook's defaults).
VARIANTS: dict[str, tuple[Callable[[Mapping[str, Any]], bool], Callable[[Case], Case], bool]] = {
    "policy-defaults": (needs_policy_defaults, lambda case: case, True),
    "reschedule-restarts-walk": (reschedule_restarts_walk, _without_observed_term, False),
}


@dataclass
class Theirs:
    results: list[dict[str, Any]] | None
    error: str = ""
    variants: dict[str, list[dict[str, Any]] | None] = field(default_factory=dict)


def run_karmada(cases: Sequence[Case], parallel: int = 16) -> list[Theirs]:
    """Karmada's answers for every case, and for the variants an allowance needs (see VARIANTS)."""
    requests = []
    positions: list[tuple[int, dict[str, int]]] = []  # per case: its answer, and its variants'
    for i, case in enumerate(cases):
        position = len(requests)
        requests.append(oracle_case(case, i))
        variants = {}
        bindings = [d for d in case.documents if d.get("kind") != "Cluster"]
        for name, (applies, variant, defaults) in VARIANTS.items():
            if any(applies(d) for d in bindings):
                variants[name] = len(requests)
                requests.append(oracle_case(variant(case), f"{i}-{name}", policy_defaults=defaults))
        positions.append((position, variants))
    answers = oracle.decide_cases(requests, parallel=parallel)
    out = []
    for position, variants in positions:
        answer = answers[position]
        theirs = Theirs(answer.get("results"), answer.get("error", ""))
        for name, at in variants.items():
            theirs.variants[name] = answers[at].get("results")
        out.append(theirs)
    return out


# ------------------------------------------------------------------------------------------------- comparison


@dataclass
class Verdict:
    """One binding's comparison: `identical`, the name of an allowance, or `divergence`."""

    index: int
    key: str
    verdict: str
    ours: Mapping[str, Any] | None
    theirs: Mapping[str, Any] | None
    note: str = ""


def _input_clusters(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for target in (document.get("spec") or {}).get("clusters") or ():
        entry = {"name": target["name"]}
        if target.get("replicas"):
            entry["replicas"] = target["replicas"]
        out.append(entry)
    return out


def _key(document: Mapping[str, Any]) -> str:
    meta = document.get("metadata") or {}
    return f"{document.get('kind')} {meta.get('namespace', '')}/{meta.get('name')}".replace(" /", " ")


def allowed_fit_messages(
    binding: Binding, snapshot: Snapshot, plugins: PluginSet, groups: WorkloadGroups | None = None
) -> set[str]:
    """Every FitError message some order of the enabled filters gives for the binding's first attempt (the
    one whose FitError Karmada reports): each cluster counts under the first filter, in that order, that
    rejects it."""
    first = attempts(binding)[0].binding
    ctx = AttemptContext.of(first, snapshot, groups)
    by_fleet = fleet_filter_verdicts(ctx, plugins)
    index = snapshot.columns.index
    verdicts = {c.name: dict(cluster_filter_verdicts(by_fleet, index[c.name])) for c in snapshot.live}
    messages = set()
    for order in itertools.permutations([p.name for p in plugins.filters]):
        diagnosis = {}
        for name, reasons in verdicts.items():
            for plugin in order:
                if reasons[plugin] is not None:
                    diagnosis[name] = reasons[plugin]  # type: ignore[assignment]
                    break
        messages.add(fit_error_message(len(snapshot), diagnosis))
    return messages


def _same_but(ours: Mapping[str, Any], theirs: Mapping[str, Any], *fields: str) -> bool:
    return all(ours.get(f) == theirs.get(f) for f in FIELDS if f not in fields)


def _filter_order(ours: Mapping[str, Any], theirs: Mapping[str, Any], allowed: Callable[[], set[str]]) -> bool:
    if not (_same_but(ours, theirs, "message") and ours["reason"] == "NoClusterFit"):
        return False
    messages = allowed()
    return ours["message"] in messages and theirs["message"] in messages


def _merge_order(ours: Mapping[str, Any], theirs: Mapping[str, Any], document: Mapping[str, Any]) -> bool:
    """Same targets, and the stretch where the lists differ holds only clusters of the previous result, in name
    order in ours (Karmada appends them in map order; with empty-workload propagation the zero-replica
    clusters come after them, alike)."""
    if not _same_but(ours, theirs, "clusters"):
        return False
    mine, karmada = ours["clusters"], theirs["clusters"]
    if len(mine) != len(karmada):
        return False
    differ = [i for i, (a, b) in enumerate(zip(mine, karmada, strict=True)) if a != b]
    start, end = differ[0], differ[-1] + 1
    window = lambda targets: sorted(json.dumps(t, sort_keys=True) for t in targets[start:end])  # noqa: E731
    if window(mine) != window(karmada):
        return False
    previous = {t["name"] for t in _input_clusters(document)}
    names = [t["name"] for t in mine[start:end]]
    return all(name in previous for name in names) and names == sorted(names)


def _int32(value: int) -> int:
    """Go's int32 wrap-around."""
    value %= 2**32
    return value - 2**32 if value >= 2**31 else value


def _int32_sum(document: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any],
               candidates: Callable[[], list[str]]) -> bool:
    """A workload scaled to 0 (replicas 0, replicaRequirements, no components), Divided with dynamic weights or
    Aggregated, on a Fresh reschedule, ClusterAffinity path: Karmada skips estimation (replicas 0), so every
    candidate has MaxInt32 available replicas (plus its previous replicas, in int32), and dynamicFreshScale's
    int32 sum wraps. Karmada then fails with exactly that negative sum; we place the zero replicas."""
    spec, status = document.get("spec") or {}, document.get("status") or {}
    placement = spec.get("placement") or {}
    scheduling = placement.get("replicaScheduling") or {}
    preference = scheduling.get("replicaDivisionPreference")
    dynamic = preference == "Aggregated" or (
        preference == "Weighted" and bool((scheduling.get("weightPreference") or {}).get("dynamicWeight")))
    triggered, last = spec.get("rescheduleTriggeredAt"), status.get("lastScheduledTime")
    if (spec.get("replicas") or "replicaRequirements" not in spec or spec.get("components")
            or placement.get("clusterAffinities") is not None or not dynamic
            or (scheduling.get("replicaSchedulingType") or "Divided") != "Divided"
            or not (triggered and last and triggered > last)):
        return False
    previous = {t["name"]: t.get("replicas", 0) for t in spec.get("clusters") or ()}
    total = _int32(sum(_int32(2**31 - 1 + previous.get(name, 0)) for name in candidates()))
    message = ("failed to assign replicas: failed to do fresh scale: "
               f"Clusters available replicas {total} are not enough to schedule.")
    karmada_failed = dict(theirs) == {**theirs, "scheduled": False, "reason": "Unschedulable", "message": message,
                                      "clusters": _input_clusters(document)}
    return total < 0 and karmada_failed and ours["scheduled"] and ours["reason"] == "Success"


def _component_results(document: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> bool:
    """Ours carries exactly the binding's components on its one cluster, and is Karmada's result otherwise."""
    parts = (document.get("spec") or {}).get("components") or []
    clusters = ours.get("clusters") or []
    if len(parts) < 2 or len(clusters) != 1:
        return False
    expected = [{"name": c["name"], "replicas": c.get("replicas", 0)} for c in parts]
    stripped = [{k: v for k, v in t.items() if k != "components"} for t in clusters]
    return clusters[0].get("components") == expected and all(
        ({**ours, "clusters": stripped}).get(f) == theirs.get(f) for f in FIELDS
    )


def classify(
    document: Mapping[str, Any],
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    variants: Mapping[str, Mapping[str, Any] | None],
    allowed_messages: Callable[[], set[str]],
    candidates: Callable[[], list[str]] = list,
) -> tuple[str, str]:
    """(verdict, note) for one binding: `identical`, an allowance's name, or `divergence`."""
    if all(ours.get(f) == theirs.get(f) for f in FIELDS):
        return "identical", ""
    placement = (document.get("spec") or {}).get("placement")
    meta = document.get("metadata") or {}
    if placement is None:
        where = (f"resourceBinding({meta.get('namespace')}/{meta.get('name')})" if document["kind"] == "ResourceBinding"
                 else f"clusterResourceBinding({meta.get('name')})")
        karmada_wrote_nothing = dict(theirs) == {**ours, "scheduled": False, "reason": "", "message": ""}
        if (karmada_wrote_nothing and ours["reason"] == "SchedulerError"
                and ours["message"] == f"failed to get placement from {where}"
                and ours["clusters"] == _input_clusters(document)):
            return "no-placement", ""
        return "divergence", ""
    if _component_results(document, ours, theirs):
        return "component-results", ""
    if _filter_order(ours, theirs, allowed_messages):
        return "filter-order", ""
    if _merge_order(ours, theirs, document):
        return "merge-order", ""
    if _int32_sum(document, ours, theirs, candidates):
        return "int32-sum", ""
    if (placement.get("clusterAffinities") == [] and "clusterAffinity" not in placement
            and theirs["scheduled"] and theirs["reason"] == "Success"
            and theirs["clusters"] == _input_clusters(document)):
        return "empty-affinities", ""
    notes = []
    for name, (applies, _, _) in VARIANTS.items():
        variant = variants.get(name)
        if variant is None or not applies(document):
            continue
        if all(ours.get(f) == variant.get(f) for f in FIELDS):
            return name, ""
        if _filter_order(ours, variant, allowed_messages) or _merge_order(ours, variant, document):
            return name, "and an allowed difference against that variant"
        notes.append(f"Karmada on the {name} variant: {json.dumps(variant)}")
    return "divergence", "; ".join(notes)


def compare(case: Case, ours: Ours, theirs: Theirs) -> list[Verdict]:
    """One verdict per binding of the case (a refused or failed case: one `divergence` for it all)."""
    documents = [d for d in case.documents if d.get("kind") != "Cluster"]
    if theirs.error or theirs.results is None:
        return [Verdict(-1, "case", "divergence", None, None, f"karmada-oracle failed: {theirs.error}")]
    if ours.snapshot is None:
        return [Verdict(-1, "case", "divergence", None, None, "we refused the input: " + "; ".join(ours.refused))]
    verdicts = []
    mine = iter(ours.results)
    for i, (document, karmada) in enumerate(zip(documents, theirs.results, strict=True)):
        binding = ours.bindings[i]
        key = _key(document)
        if binding is None:
            verdicts.append(Verdict(i, key, "divergence", None, karmada,
                                    f"we refused the binding: {ours.refusals[i]}; karmada: {json.dumps(karmada)}"))
            continue
        result = next(mine)
        variants = {name: (found[i] if found is not None else None) for name, found in theirs.variants.items()}
        assert ours.plugins is not None

        def allowed(binding: Binding = binding, snapshot: Snapshot = ours.snapshot,
                    plugins: PluginSet = ours.plugins, groups: WorkloadGroups | None = ours.groups) -> set[str]:
            return allowed_fit_messages(binding, snapshot, plugins, groups)

        def candidates(binding: Binding = binding, snapshot: Snapshot = ours.snapshot,
                       plugins: PluginSet = ours.plugins, groups: WorkloadGroups | None = ours.groups) -> list[str]:
            feasible, _ = Framework(plugins).filter_clusters(AttemptContext.of(binding, snapshot, groups))
            return [c.name for c in feasible]

        verdict, note = classify(document, result, karmada, variants, allowed, candidates)
        verdicts.append(Verdict(i, key, verdict, result, karmada, note))
    return verdicts


# ------------------------------------------------------------------------------------------------- reports


def write_case(case: Case, path: Path) -> Path:
    """The case as a ready-to-run input file (simulate -f / karmada-oracle -f)."""
    header = f"# differential case; flags: {' '.join(case.simulate_args()) or '(none)'}\n"
    path.write_text(header + yaml.safe_dump_all(case.documents, sort_keys=False))
    return path


def commands(case: Case, path: Path, policy_defaults: bool = False) -> list[str]:
    flags = " ".join(f"'{a}'" if "*" in a else a for a in case.simulate_args())
    binary = oracle.binary()
    return [
        f".venv/bin/binding-scheduler simulate -f {path} -o json {flags}".rstrip(),
        f"{binary} -f {path} {flags}".rstrip() + (" --policy-defaults" if policy_defaults else ""),
    ]


def describe(case: Case, verdicts: Iterable[Verdict], path: Path) -> str:
    """A divergence, ready to reproduce: the file, the two commands, and each binding's difference."""
    lines = [f"input: {path}", *(f"  $ {c}" for c in commands(case, path))]
    for v in verdicts:
        if v.verdict != "divergence":
            continue
        lines.append(f"{v.key}: {v.note}" if v.note else f"{v.key}:")
        if v.ours is None or v.theirs is None:
            continue
        for name in FIELDS:
            if v.ours.get(name) != v.theirs.get(name):
                lines.append(f"  {name}:\n    ours:    {json.dumps(v.ours.get(name))}\n"
                             f"    karmada: {json.dumps(v.theirs.get(name))}")
    return "\n".join(lines)


@dataclass
class Tally:
    cases: int = 0
    bindings: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)

    def add(self, verdicts: Sequence[Verdict]) -> None:
        self.cases += 1
        self.bindings += sum(1 for v in verdicts if v.index >= 0)
        self.verdicts.update(v.verdict for v in verdicts)

    def summary(self) -> str:
        allowed = {k: v for k, v in sorted(self.verdicts.items()) if k not in ("identical", "divergence")}
        return (f"cases {self.cases}, bindings {self.bindings}, identical {self.verdicts['identical']}, "
                f"allowed {sum(allowed.values())} {dict(allowed)}, divergences {self.verdicts['divergence']}")


def run_batch(cases: Sequence[Case], parallel: int = 16) -> list[list[Verdict]]:
    theirs = run_karmada(cases, parallel)
    ours = run_ours(cases)
    return [compare(case, o, t) for case, o, t in zip(cases, ours, theirs, strict=True)]


__all__ = ["ALLOWANCES", "Tally", "Verdict", "compare", "describe", "replace", "run_batch", "write_case"]
