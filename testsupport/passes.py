"""What the pass tests (tests/scheduling/test_pass_*.py) run a pass with: scripted API clients that answer
each write from a list and record what was sent, a recorder of Events, a pass over one binding in its own stores, and
the bodies and logs they read back."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from binding_scheduler.algorithm.errors import ConditionVerdict, FitError, condition_for
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.kube.errors import Conflict, Forbidden, KubeError
from binding_scheduler.kube.gate import WriteGateClosed
from binding_scheduler.model import Binding, TargetCluster, parse_binding, parse_cluster
from binding_scheduler.scheduling.observability.labels import PassOutcome, WriteKind, WriteResult
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, PassTracker
from binding_scheduler.scheduling.passes.run import _write_status, binding_ref, run_pass
from binding_scheduler.scheduling.state.assumptions import AssumptionCache
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster, names, placement
from testsupport.fencing import fence
from testsupport.pass_plugins import During, plugins_with

CONFLICT = Conflict(409, "Conflict", "the object has been modified")


class ScriptedClient:
    """Answers each patch with the next scripted answer for its kind (an error, or a body); records requests."""

    def __init__(self, *, spec: list[Any] | None = None, status: list[Any] | None = None,
                 fresh: Mapping[str, Any] | None = None) -> None:
        self.answers = {"spec": list(spec or []), "status": list(status or [])}
        self.fresh = fresh
        self.sent: list[tuple[str, str, Mapping[str, Any]]] = []

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        kind = "status" if path.endswith("/status") else "spec"
        self.sent.append((kind, path, body))
        answer = self.answers[kind].pop(0) if self.answers[kind] else {}
        if isinstance(answer, Exception):
            raise answer
        return dict(answer)

    async def get(self, path: str) -> Mapping[str, Any]:
        self.sent.append(("get", path, {}))
        assert self.fresh is not None
        return self.fresh

    def versions(self) -> list[tuple[str, str]]:
        """(kind, resourceVersion precondition) of every write sent."""
        return [(kind, fence(body, f"the {kind} write to {path}")) for kind, path, body in self.sent if kind != "get"]


class Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[dict[str, str], str, str, str]] = []

    async def record(self, involved: Mapping[str, str], type: str, reason: str, message: str) -> None:
        self.recorded.append((dict(involved), type, reason, message))


class Run:
    def __init__(self, body: dict[str, Any], client: ScriptedClient, *clusters: str) -> None:
        self.store, fleet = BindingStore(), ClusterStore()
        self.store.upsert(body)
        for name in clusters or ("m1",):
            fleet.upsert(parse_cluster(cluster(name)))
        self.events = Events()
        self.metrics = SchedulerMetrics()
        self.ctx = PassContext(client=client, events=self.events, bindings=self.store, clusters=fleet,  # type: ignore[arg-type]
                               metrics=self.metrics)
        self.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins())

    async def pass_(self, key: str = "default/web") -> PassOutcome:
        return await run_pass(key, self.ctx, self.settings, PassTracker(key))

    def writes(self, kind: WriteKind, result: WriteResult) -> float:
        value = self.metrics.registry.get_sample_value(
            "binding_scheduler_writes_total", {"kind": kind.value, "result": result.value})
        return value or 0.0


def written(generation: int, version: str) -> dict[str, Any]:
    return {"metadata": {"resourceVersion": version, "generation": generation}}


def placed_body(chosen: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A binding at generation 2 whose applied placement and clusters already are what a pass decides (m1:1;
    Duplicated unless `chosen` says otherwise)."""
    body = binding(replicas=1, placement=chosen or placement(), clusters={"m1": 1}, generation=2)
    applied = parse_binding(body).placement
    assert applied is not None
    body["metadata"]["annotations"] = {
        "policy.karmada.io/applied-placement": json.dumps(applied.to_dict(), separators=(",", ":"))}
    return body


DIVIDED = placement(scheduling={"replicaSchedulingType": "Divided"})


# -- who must act on a failure: the log level and the error metric ------------------------------------------------

PASSES_LOGGER = "binding_scheduler.scheduling.passes.run"


def errors_by_fault(run: Run) -> dict[str, float | None]:
    return {fault: run.metrics.registry.get_sample_value("binding_scheduler_schedule_errors_total", {"fault": fault})
            for fault in ("owner", "operator")}


NAMESPACE_TERMINATING = {"details": {"causes": [{"reason": "NamespaceTerminating", "message": "ns is terminating"}]}}


class FakeClient:
    """Answers spec and status patches from scripted errors; records what was sent."""

    def __init__(self, spec_error: KubeError | None = None, status_error: KubeError | None = None) -> None:
        self.spec_error, self.status_error = spec_error, status_error
        self.sent: list[tuple[str, Mapping[str, Any]]] = []

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        self.sent.append((path, body))
        error = self.status_error if path.endswith("/status") else self.spec_error
        if error is not None:
            raise error
        return {"metadata": {"resourceVersion": "8", "generation": 2}}


class KindEvents:
    def __init__(self) -> None:
        self.recorded: list[tuple[str, str, str, str]] = []

    async def record(self, involved: Mapping[str, str], type: str, reason: str, message: str) -> None:
        self.recorded.append((involved["kind"], type, reason, message))


async def run(body: dict[str, Any], client: FakeClient, *clusters: str) -> tuple[PassOutcome, KindEvents]:
    bindings, fleet = BindingStore(), ClusterStore()
    bindings.upsert(body)
    for name in clusters:
        fleet.upsert(parse_cluster(cluster(name)))
    events = KindEvents()
    ctx = PassContext(client=client, events=events, bindings=bindings, clusters=fleet, metrics=SchedulerMetrics())
    settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins())
    outcome = await run_pass("default/web", ctx, settings, PassTracker("default/web"))
    return outcome, events


def status_condition(client: FakeClient) -> Mapping[str, Any]:
    (body,) = [b for path, b in client.sent if path.endswith("/status")]
    (condition,) = body["status"]["conditions"]
    return condition


PASSES = "binding_scheduler.scheduling.passes.run"


SCHEDULED_TRUE = {"type": "Scheduled", "status": "True", "reason": "Success", "message": "ok",
                  "lastTransitionTime": "2026-01-01T00:00:00Z"}


def status_of(client: ScriptedClient) -> dict[str, Any]:
    (body,) = [body for kind, _, body in client.sent if kind == "status"]
    return dict(body["status"])


def condition_of(client: ScriptedClient) -> tuple[str, str, str]:
    (condition,) = status_of(client)["conditions"]
    return condition["status"], condition["reason"], condition["message"]


def attempts(run: Run, result: str, schedule_type: str) -> float:
    value = run.metrics.registry.get_sample_value(
        "karmada_scheduler_schedule_attempts_total", {"result": result, "schedule_type": schedule_type})
    return value or 0.0


def decision_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [re.sub(r", \d+ ms,", ", N ms,", m) for m in caplog.messages if m.startswith("binding default/web (")]


WIDE = [f"wide-{i:02d}" for i in range(26)]


EXPONENTIAL = placement(
    affinity=names(*WIDE),
    spread=[{"spreadByField": "region", "minGroups": 1, "maxGroups": 26},
            {"spreadByField": "cluster", "minGroups": 13, "maxGroups": 26}],
    scheduling={"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
)


# -- a lost condition decided again -----------------------------------------------------------------------------


def owing(on: str) -> dict[str, Any]:
    """Divided onto m1 by name, placed `on` a cluster, at generation 2, observed 1, with no Scheduled condition:
    no rule asks for a decision, but the condition of the last one is missing."""
    body = placed_body(placement(affinity=names("m1"), scheduling={"replicaSchedulingType": "Divided"}))
    body["spec"]["clusters"] = [{"name": on, "replicas": 1}]
    body["status"] = {"schedulerObservedGeneration": 1}
    return body


# -- reservations ---------------------------------------------------------------------------------------------


def protected(body: dict[str, Any], client: ScriptedClient, *clusters: str, during: During | None = None) -> Run:
    """A run with overcommit protection on: the passes reserve their decisions in an assumption cache."""
    run = Run(body, client, *clusters)
    run.ctx.assumptions = AssumptionCache()
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=plugins_with(during),
                                assumptions=run.ctx.assumptions)
    return run


def other(name: str) -> Binding:
    parsed = Run(binding(name, replicas=1, placement=DIVIDED), ScriptedClient()).store.parsed(f"default/{name}")
    assert isinstance(parsed, Binding)
    return parsed


class FullLedger:
    name = "FullLedger"

    def reserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        raise RuntimeError("the ledger is full")

    def unreserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        return None


class ForgettingClient(ScriptedClient):
    """Its spec write answers, and meanwhile the binding's delete event empties the store."""

    def __init__(self, store: Any) -> None:
        super().__init__(spec=[written(2, "8")])
        self.store = store

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        if not path.endswith("/status"):
            self.store.remove("default/web")
        return await super().patch_merge(path, body)


# -- a pass whose only write is a status write ----------------------------------------------------------------

TERMINATING = Forbidden(403, "Forbidden", "namespace default is being terminated",
                        {"details": {"causes": [{"reason": "NamespaceTerminating", "message": "terminating"}]}})


def recording() -> dict[str, Any]:
    """Needs no decision, only its generation recorded (a status write alone)."""
    body = placed_body(DIVIDED)
    body["status"] = {"schedulerObservedGeneration": 1, "conditions": [SCHEDULED_TRUE]}
    return body


NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


PATH = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/web"


NO_PLACEMENT = "failed to get placement from resourceBinding(default/web)"


FIT_ERROR_TEXT = "0/1 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint."


OTHER_CONDITION = {"type": "Ready", "status": "True", "reason": "Fine", "message": "all good",
                   "lastTransitionTime": "2026-01-01T00:00:00Z"}


def fit_error() -> FitError:
    return FitError(1, {"m1": "cluster(s) did not match the placement cluster affinity constraint"})


def scheduled(status: str, reason: str, message: str) -> dict[str, str]:
    """The Scheduled condition as a pass writes it at NOW."""
    return {"type": "Scheduled", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-03-01T12:00:00Z"}


def at_now(run: Run) -> Run:
    run.ctx.now = lambda: NOW
    return run


def parsed(body: Mapping[str, Any]) -> Binding:
    result = parse_binding(body)
    assert isinstance(result, Binding)
    return result


class GateClosedClient(ScriptedClient):
    """Every patch is refused by the closed write gate."""

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        self.sent.append(("status" if path.endswith("/status") else "spec", path, body))
        raise WriteGateClosed("leadership lost")


class Settling:
    """A Reserve and Bind plugin: records what it was told, with the clusters of each decision."""

    name = "Settling"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, tuple[str, ...]]] = []

    def reserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.calls.append(("reserve", binding.key, tuple(t.name for t in result)))

    def unreserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.calls.append(("unreserve", binding.key, tuple(t.name for t in result)))

    def bound(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        self.calls.append(("bound", binding.key, tuple(t.name for t in result)))


def settling(client: ScriptedClient) -> tuple[Run, Settling]:
    plugin = Settling()
    run = Run(binding(replicas=1, placement=placement()), client)
    run.settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(extra=[plugin]))
    return run, plugin


async def write_status(
    run: Run, verdict: ConditionVerdict, *, affinity_name: str | None = None, after_spec_write: bool = False
) -> PassOutcome | None:
    """The status write of the stored default/web, fenced with version 8 (as after a spec write) at generation 2."""
    body = run.store.body("default/web")
    assert body is not None
    target = parsed(body)
    return await _write_status(target, binding_ref(target), verdict, run.ctx, version="8", generation=2,
                               affinity_name=affinity_name, after_spec_write=after_spec_write)


SUCCESS = condition_for(None)


SCHEDULER_ERROR = ConditionVerdict("False", "SchedulerError", "etcd is unhappy", retry=True)
