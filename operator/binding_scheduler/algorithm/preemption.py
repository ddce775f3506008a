"""Binding priority preemption's pure rules (gate PriorityBasedPreemptiveScheduling with PriorityBasedScheduling), as
Karmada's open PR #7832 defines them (`pkg/scheduler/core/preemption.go`, `preemption_claims.go` at f0d1e5ece;
docs/design/preemption.md says what each rule is there). No I/O and no state: the scheduling layer holds the
claims and writes the evictions.

- `not_applicable`: why a binding that failed for capacity may not preempt (None: it may).
- `victim_candidates`: the bindings on the target cluster that a preemptor may evict.
- `select_victims`: the victims, by the PR's reprieve walk: all candidates at first, then each one spared, from
  the highest priority and oldest down, while what the others free still covers the preemptor's deficit.
- `claimed_replicas`: how many of a requester's replicas the live claims of others take from a cluster.
- `target_cluster`: the one cluster a preemption may free room on (selection run again, capacity ignored).
- `PreemptingError`: the attempt's outcome when it preempts, with its `PreemptionPlan`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..model import Binding, PreemptionPolicy, ReplicaSchedulingType, Scope
from ..model.placement import DivisionPreference
from ..model.quantity import Quantity
from .candidates import ClusterDetail
from .errors import NotEnoughResources, SchedulingError, UnschedulableError
from .spread.by_cluster import IGNORE_CAPACITY
from .spread.select import select_best_clusters

if TYPE_CHECKING:
    from .schedule import Candidates

MAX_VICTIM_CANDIDATES = 1000
"""More bindings than this on the target cluster, eligible or not, and the preemption fails (the PR's
`maxPreemptionVictimCandidates`)."""


@dataclass(frozen=True, slots=True)
class PreemptionGates:
    priority_based_scheduling: bool = False
    priority_based_preemptive_scheduling: bool = False

    @property
    def enabled(self) -> bool:
        """Preemption runs only with both gates on (the PR's `features.PreemptionEnabled`)."""
        return self.priority_based_scheduling and self.priority_based_preemptive_scheduling


BOTH_GATES = PreemptionGates(priority_based_scheduling=True, priority_based_preemptive_scheduling=True)


def not_applicable(binding: Binding, gates: PreemptionGates) -> str | None:
    """Why `binding` may not preempt, or None when it may (the PR's `isPreemptionApplicable`): both gates on, a
    ResourceBinding that requests resources, with policy PreemptLowerPriority, at most one component, a
    `clusterAffinity` (not `clusterAffinities`) and Divided/Aggregated replicas."""
    placement = binding.placement
    reasons = (
        (not gates.enabled, "gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling are not both on"),
        (binding.scope is not Scope.NAMESPACED, "a ClusterResourceBinding never preempts"),
        (binding.preemption_policy is not PreemptionPolicy.PREEMPT_LOWER_PRIORITY,
         f"its preemptionPolicy is {binding.preemption_policy.value}"),
        (len(binding.components) > 1, "it has more than one component"),
        (not milli_request(binding), "it requests no resources"),
        (placement is None or placement.cluster_affinity is None or bool(placement.cluster_affinities),
         "its placement has no clusterAffinity, or has clusterAffinities"),
        (placement is None or placement.scheduling_type is not ReplicaSchedulingType.DIVIDED
         or placement.replica_scheduling is None
         or placement.replica_scheduling.division_preference is not DivisionPreference.AGGREGATED,
         "its replicas are not Divided and Aggregated"),
    )
    return next((reason for failed, reason in reasons if failed), None)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A binding that may be evicted from the target cluster: what it has there and what each replica asks."""

    key: str
    priority: int
    replicas: int
    """Its replicas on the target cluster."""
    request: Mapping[str, int]
    """Per replica, in thousandths (Kubernetes' MilliValue), the resources it requests."""
    created: datetime | None = None


def milli_request(binding: Binding) -> dict[str, int]:
    """Per replica, in thousandths (Kubernetes' MilliValue), every resource `binding` requests more than none of."""
    requirements = binding.replica_requirements
    requests: Mapping[str, Quantity] = requirements.resource_request if requirements is not None else {}
    return {name: q.milli_value() for name, q in requests.items() if q.milli_value() > 0}


def victim_candidates(preemptor: Binding, cluster: str, bindings: Iterable[Binding]) -> list[Candidate]:
    """The ResourceBindings placed on `cluster` that `preemptor` may evict (the PR's
    `listPreemptionVictimCandidates`): any namespace, the same scheduler, a strictly lower priority, replicas on
    that cluster and no eviction from it under way. Bindings that request nothing free nothing and are left out."""
    found = []
    for binding in bindings:
        if binding.scope is not Scope.NAMESPACED or binding.key == preemptor.key:
            continue
        if binding.scheduler_name != preemptor.scheduler_name:
            continue
        if binding.schedule_priority >= preemptor.schedule_priority:
            continue
        if cluster in binding.eviction_clusters:
            continue
        replicas = sum(t.replicas for t in binding.clusters if t.name == cluster)
        request = milli_request(binding)
        if replicas > 0 and request:
            found.append(Candidate(binding.key, binding.schedule_priority, replicas, request,
                                   binding.creation_timestamp))
    return found


def select_victims(
    preemptor: Binding, available: int, candidates: Sequence[Candidate]
) -> tuple[Candidate, ...] | None:
    """The victims that free room for `preemptor`'s missing replicas on one cluster, or None when there is no
    deficit or all the candidates together would not cover it (then nothing is preempted).

    `available`: the replicas the cluster still takes for the preemptor, its own there included. The deficit is
    its replicas minus that; the need is its per-replica request times the deficit, for every resource it
    requests. Resources are added up over the cluster (no node is looked at), as the PR does."""
    deficit = preemptor.replicas - available
    if deficit <= 0:
        return None
    need = {name: amount * deficit for name, amount in milli_request(preemptor).items()}
    if not need or not _covers(candidates, need):
        return None
    victims = list(candidates)
    for spared in sorted(candidates, key=_reprieve_order):
        rest = [c for c in victims if c is not spared]
        if _covers(rest, need):
            victims = rest
    return tuple(sorted(victims, key=lambda c: c.key))


def _reprieve_order(candidate: Candidate) -> tuple[int, float, str]:
    """Spared first: the highest priority, then the oldest (no creation time: as old as can be), then by key."""
    created = candidate.created.timestamp() if candidate.created is not None else float("-inf")
    return (-candidate.priority, created, candidate.key)


def _covers(victims: Iterable[Candidate], need: Mapping[str, int]) -> bool:
    freed: dict[str, int] = {}
    for victim in victims:
        for name, amount in victim.request.items():
            freed[name] = freed.get(name, 0) + amount * victim.replicas
    return all(freed.get(name, 0) >= amount for name, amount in need.items())


@dataclass(frozen=True, slots=True)
class Claim:
    """A preemptor's hold on the capacity its victims free on one cluster (the PR's preemption claim)."""

    key: str
    cluster: str
    priority: int
    replicas: int
    request: Mapping[str, int]
    """Per replica, in thousandths."""


def claimed_replicas(requester: Binding, cluster: str, claims: Iterable[Claim]) -> int:
    """How many of `requester`'s replicas the other bindings' claims on `cluster` take (the PR's
    `withClaimDeductions`): claims of a priority at least the requester's (equal ones too, so that two bindings
    of one priority do not preempt each other in turn), each converted into the requester's replicas by the
    resource that needs the most of them, rounded up."""
    request = milli_request(requester)
    if not request:
        return 0
    taken = 0
    for claim in claims:
        if claim.cluster != cluster or claim.key == requester.key or claim.priority < requester.schedule_priority:
            continue
        taken += max((_ceil_div(amount * claim.replicas, request[name])
                      for name, amount in claim.request.items() if name in request), default=0)
    return taken


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def starts_preemption(error: SchedulingError) -> bool:
    """Only a failure for capacity in selection or assignment starts a preemption (the PR's `tryPreempt`): not a
    FitError (nothing passed the filters), not a MinGroups failure, not any other error."""
    return isinstance(error, UnschedulableError | NotEnoughResources) and not isinstance(error, PreemptingError)


def target_cluster(binding: Binding, details: Sequence[ClusterDetail], unclaimed: Mapping[str, int]) -> str | None:
    """The one cluster a preemption may free room on, or None: selection run again with capacity ignored and
    the candidates' availability before claims (the PR's `selectClustersForPreemption`); it must pick exactly one
    cluster. `unclaimed`: the replicas the claims took from each candidate, given back here."""
    restored = [ClusterDetail(d.cluster, d.score, d.allocatable + unclaimed.get(d.name, 0),
                              d.available + unclaimed.get(d.name, 0), d.overflow_order) for d in details]
    try:
        selected = select_best_clusters(binding, restored, IGNORE_CAPACITY)
    except SchedulingError:
        return None
    return selected[0].name if len(selected) == 1 else None


@dataclass(frozen=True, slots=True)
class PreemptionPlan:
    """What a preemption does: on `cluster`, evict `victims` (none while the preemptor waits for the capacity its
    earlier victims are freeing), for `preemptor`, which needs `replicas` there at `request` each."""

    preemptor: str
    priority: int
    cluster: str
    victims: tuple[Candidate, ...]
    replicas: int
    request: Mapping[str, int]

    @property
    def message(self) -> str:
        if not self.victims:
            return f'waiting for the capacity preempted on cluster "{self.cluster}"'
        return f'preemption initiated on cluster "{self.cluster}" for {len(self.victims)} victim(s)'

    def claim(self) -> Claim:
        return Claim(self.preemptor, self.cluster, self.priority, self.replicas, self.request)


class PreemptingError(UnschedulableError):
    """The attempt preempts: the binding waits for the capacity its plan frees (reason `Preempting`, parked as
    unschedulable, as the PR's `PreemptingError`). `cause` is the capacity failure that started it."""

    reason = "Preempting"

    def __init__(self, plan: PreemptionPlan, cause: SchedulingError) -> None:
        super().__init__(plan.message)
        self.plan = plan
        self.cause = cause


def deduct_claims(candidates: Candidates, taken: Mapping[str, int]) -> None:
    """What other bindings' preemption claims hold on a cluster (`taken`, replicas by cluster) is not available to
    this one (the PR's `withClaimDeductions`), so a victim rescheduled meanwhile cannot take back what was freed for
    its preemptor."""
    if not taken:
        return
    claimed = candidates.context.state.claimed
    allocatable, available = candidates.allocatable.copy(), candidates.available.copy()
    for name, position in candidates.positions(taken).items():
        cut = min(taken[name], int(allocatable[position]))
        if cut > 0:
            allocatable[position] -= cut
            available[position] -= cut
            claimed[name] = cut
    candidates.estimated(allocatable, available)
