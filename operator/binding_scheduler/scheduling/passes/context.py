"""What every scheduling pass is given: the settings in force when it starts (with the framework built from
them), the scheduler-wide collaborators, and the tracker the runtime reads to tell a pass deciding (cancelled at
a stop) from one committing (drained)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal, Protocol

from ...algorithm.plugins import CycleState
from ...algorithm.registry import PluginSet
from ...algorithm.schedule import ScheduleOptions
from ...algorithm.snapshot import Snapshot
from ...algorithm.walk import Decision
from ...kube.client import ApiClient
from ...model import Binding
from ..decisions.pool import DecisionPool
from ..framework.hooks import FrameworkHook
from ..framework.ports import Preemptor, ReplicaEstimator
from ..framework.runner import Framework
from ..observability.metrics import SchedulerMetrics
from ..state.assumptions import AssumptionCache
from ..state.claims import PreemptionClaims
from ..state.stores import BindingStore, ClusterStore
from ..state.workload_groups import WorkloadGroupIndex


class Phase(StrEnum):
    DECIDING = "deciding"
    COMMITTING = "committing"
    DONE = "done"


EventType = Literal["Normal", "Warning"]


class EventSink(Protocol):
    async def record(self, involved: Mapping[str, str], type: EventType, reason: str, message: str) -> None: ...


@dataclass(slots=True)
class PassSettings:
    """What a pass needs from the configuration in force when it starts: the framework built from it."""

    scheduler_name: str
    plugins: PluginSet
    options: ScheduleOptions = field(default_factory=ScheduleOptions)
    estimator: ReplicaEstimator | None = None
    hooks: InitVar[tuple[FrameworkHook, ...]] = ()
    assumptions: AssumptionCache | None = None
    workload_groups: WorkloadGroupIndex | None = None
    preemptor: Preemptor | None = None
    """Binding priority preemption, while its two gates are on."""
    decisions: DecisionPool | None = None
    """The decision processes (`decisionProcesses`), or None: every decision is made in this process."""
    framework: Framework = field(init=False)

    def __post_init__(self, hooks: tuple[FrameworkHook, ...]) -> None:
        self.framework = Framework(
            self.plugins, estimator=self.estimator, options=self.options, hooks=hooks, assumptions=self.assumptions,
            workload_groups=self.workload_groups, preemptor=self.preemptor,
        )

    async def decide(self, binding: Binding, snapshot: Snapshot, state: CycleState) -> Decision:
        """The framework's decision, in a decision process when there are some and the framework can run there."""
        if self.decisions is None:
            return await self.framework.decide(binding, snapshot, state)
        return await self.decisions.decide(self.framework, binding, snapshot, state)


@dataclass(slots=True)
class PassTracker:
    """Where a pass is (the runtime reads it to decide cancel vs drain at shutdown)."""

    key: str
    phase: Phase = Phase.DECIDING
    on_commit: Callable[[PassTracker], None] | None = None
    attempt: int = 1
    """Which try of this binding in a row this pass is (1, then 2 after a failure or a conflict, ...)."""

    def enter_commit(self) -> None:
        """The commit point: from here the pass is drained, not cancelled, at a stop."""
        if self.on_commit is not None:
            self.on_commit(self)
        self.phase = Phase.COMMITTING


class PassContext:
    """The scheduler-wide collaborators of every pass."""

    def __init__(
        self,
        *,
        client: ApiClient,
        events: EventSink,
        bindings: BindingStore,
        clusters: ClusterStore,
        metrics: SchedulerMetrics,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        assumptions: AssumptionCache | None = None,
        workload_groups: WorkloadGroupIndex | None = None,
    ) -> None:
        self.client = client
        self.events = events
        self.bindings = bindings
        self.clusters = clusters
        self.metrics = metrics
        self.now = now
        self.assumptions = assumptions if assumptions is not None else AssumptionCache()
        """Overcommit protection's assumptions: the passes' Reserve step fills them while the gate is on; the
        runtime releases them (a workload reported Healthy, a binding deleted) whatever the gate."""
        self.claims = PreemptionClaims()
        """Preemption's claims: kept across configuration changes (the passes of each set the planner reads)."""
        self.workload_groups = workload_groups
        """The workload groups index while gate `WorkloadAffinity` is on (None otherwise): the runtime feeds it
        every binding event, and each pass its own spec write."""
