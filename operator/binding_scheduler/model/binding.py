"""ResourceBinding and ClusterResourceBinding (`work.karmada.io/v1alpha2`) as one `Binding` with a scope."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from itertools import repeat
from typing import Any, NamedTuple

from .errors import ValidationError, show
from .fields import EMPTY_MAP, INT32_MAX, Fields
from .placement import Placement, ReplicaSchedulingType, parse_placement
from .quantity import EMPTY_RESOURCES, ResourceList, parse_resource_list
from .selectors import NODE_SELECTOR_OPERATORS, Requirement, Toleration, parse_requirement, parse_toleration

GROUP_VERSION = "work.karmada.io/v1alpha2"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
APPLIED_PLACEMENT_ANNOTATION = "policy.karmada.io/applied-placement"
FILTER_LABELS = (
    "propagationpolicy.karmada.io/permanent-id",
    "clusterpropagationpolicy.karmada.io/permanent-id",
    "binding.karmada.io/managed-by",
)


class Scope(StrEnum):
    NAMESPACED = "ResourceBinding"
    CLUSTER = "ClusterResourceBinding"


class PreemptionPolicy(StrEnum):
    """`spec.schedulePriority.preemptionPolicy` (Karmada's open PR #7832): whether a binding that fits nowhere may
    preempt bindings of lower priority (gate PriorityBasedPreemptiveScheduling). Absent, it is Never."""

    PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
    NEVER = "Never"


@dataclass(frozen=True, slots=True)
class ObjectReference:
    api_version: str
    kind: str
    name: str
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""

    @property
    def group_version(self) -> str:
        return self.api_version


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeClaim:
    hard_node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    node_selector: Mapping[str, str] = EMPTY_MAP
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True, slots=True)
class ReplicaRequirements:
    """What one replica needs; sent to the estimators."""

    resource_request: ResourceList = EMPTY_RESOURCES
    node_claim: NodeClaim | None = None
    namespace: str = ""
    priority_class_name: str = ""


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    replicas: int
    requirements: ReplicaRequirements | None = None


class TargetComponent(NamedTuple):
    """One component's replicas in a cluster (`spec.clusters[].components[]`, karmada-io/karmada #7837)."""

    name: str
    replicas: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "replicas": self.replicas}


class TargetCluster(NamedTuple):
    """One entry of `spec.clusters`: the scheduler's output (a tuple: cheap to build by the thousand).
    `components`: the per-component replicas of a multi-component workload (gate MultiplePodTemplatesScheduling)."""

    name: str
    replicas: int = 0
    components: tuple[TargetComponent, ...] = ()

    @classmethod
    def each(cls, names: Iterable[str], replicas: int) -> list[TargetCluster]:
        """`replicas` on each of `names`: built in C (`tuple.__new__`, as `_make` does), not by `__new__` one by one,
        for a Duplicated result over a whole fleet."""
        return list(map(tuple.__new__, repeat(cls), zip(names, repeat(replicas), repeat(()))))

    def __reduce__(self) -> tuple[Any, tuple[type[TargetCluster], tuple[Any, ...]]]:
        """Unpickled in C (`tuple.__new__`), not by `__new__`: a decision process sends results of thousands."""
        return tuple.__new__, (TargetCluster, tuple(self))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "replicas": self.replicas} if self.replicas else {"name": self.name}
        if self.components:
            out["components"] = [c.to_dict() for c in self.components]
        return out


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""
    observed_generation: int = 0


@dataclass(frozen=True, slots=True)
class AggregatedStatusItem:
    cluster_name: str
    health: str = ""


@dataclass(frozen=True, slots=True)
class BindingStatus:
    scheduler_observed_generation: int = 0
    scheduler_observing_affinity_name: str = ""
    last_scheduled_time: datetime | None = None
    conditions: tuple[Condition, ...] = ()
    aggregated_status: tuple[AggregatedStatusItem, ...] = ()

    def condition(self, kind: str) -> Condition | None:
        for condition in self.conditions:
            if condition.type == kind:
                return condition
        return None


@dataclass(frozen=True, slots=True)
class Binding:
    scope: Scope
    name: str
    resource: ObjectReference
    namespace: str = ""
    uid: str = ""
    generation: int = 0
    resource_version: str = ""
    labels: Mapping[str, str] = EMPTY_MAP
    annotations: Mapping[str, str] = EMPTY_MAP
    deletion_timestamp: datetime | None = None
    creation_timestamp: datetime | None = None
    replicas: int = 0
    replica_requirements: ReplicaRequirements | None = None
    components: tuple[Component, ...] = ()
    clusters: tuple[TargetCluster, ...] = ()
    placement: Placement | None = None
    eviction_clusters: frozenset[str] = frozenset()
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    reschedule_triggered_at: datetime | None = None
    suspend_scheduling: bool = False
    schedule_priority: int = 0
    preemption_policy: PreemptionPolicy = PreemptionPolicy.NEVER
    affinity_group: str = ""
    anti_affinity_group: str = ""
    status: BindingStatus = field(default_factory=BindingStatus)

    @property
    def key(self) -> str:
        """The queue key: `namespace/name` for a ResourceBinding, `name` for a ClusterResourceBinding."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def is_workload(self) -> bool:
        return self.replicas > 0 or self.replica_requirements is not None or len(self.components) >= 1

    @property
    def scheduling_type(self) -> ReplicaSchedulingType:
        return self.placement.scheduling_type if self.placement is not None else ReplicaSchedulingType.DUPLICATED

    @property
    def target_names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.clusters)

    @property
    def reschedule_pending(self) -> bool:
        """An explicit reschedule: rescheduleTriggeredAt strictly after lastScheduledTime (both set)."""
        triggered, last = self.reschedule_triggered_at, self.status.last_scheduled_time
        return triggered is not None and last is not None and triggered > last

    @property
    def applied_placement(self) -> str:
        return self.annotations.get(APPLIED_PLACEMENT_ANNOTATION, "")


def _parse_node_selector_terms(fields: Fields) -> tuple[NodeSelectorTerm, ...]:
    return tuple(
        NodeSelectorTerm(
            match_expressions=tuple(
                parse_requirement(e, NODE_SELECTOR_OPERATORS) for e in term.objects("matchExpressions")
            ),
            match_fields=tuple(parse_requirement(e, NODE_SELECTOR_OPERATORS) for e in term.objects("matchFields")),
        )
        for term in fields.objects("nodeSelectorTerms")
    )


def _parse_node_claim(fields: Fields) -> NodeClaim:
    affinity = fields.obj("hardNodeAffinity")
    return NodeClaim(
        hard_node_affinity=_parse_node_selector_terms(affinity) if affinity is not None else None,
        node_selector=fields.string_map("nodeSelector"),
        tolerations=tuple(parse_toleration(t) for t in fields.objects("tolerations")),
    )


def _parse_requirements(fields: Fields) -> ReplicaRequirements:
    claim = fields.obj("nodeClaim")
    return ReplicaRequirements(
        resource_request=parse_resource_list(fields.raw("resourceRequest"), fields.at("resourceRequest")),
        node_claim=_parse_node_claim(claim) if claim is not None else None,
        namespace=fields.text("namespace"),
        priority_class_name=fields.text("priorityClassName"),
    )


def _parse_status(fields: Fields | None) -> BindingStatus:
    if fields is None:
        return BindingStatus()
    return BindingStatus(
        scheduler_observed_generation=fields.integer("schedulerObservedGeneration"),
        scheduler_observing_affinity_name=fields.text("schedulerObservingAffinityName"),
        last_scheduled_time=fields.time("lastScheduledTime"),
        conditions=tuple(
            Condition(
                type=c.text("type"),
                status=c.text("status"),
                reason=c.text("reason"),
                message=c.text("message"),
                last_transition_time=c.text("lastTransitionTime"),
                observed_generation=c.integer("observedGeneration"),
            )
            for c in fields.objects("conditions")
        ),
        aggregated_status=tuple(
            AggregatedStatusItem(cluster_name=a.text("clusterName"), health=a.text("health"))
            for a in fields.objects("aggregatedStatus")
        ),
    )


def _parse_target_clusters(spec: Fields) -> tuple[TargetCluster, ...]:
    return tuple(_parse_target(entry, spec, i) for i, entry in enumerate(spec.list("clusters")))


def _parse_target(entry: Any, spec: Fields, index: int) -> TargetCluster:
    """One `spec.clusters` entry. A plain `{"name", "replicas"}` one (nearly all: a Duplicated binding at 1,000
    clusters has hundreds) is checked directly; anything else goes through the field-by-field parse."""
    if type(entry) is dict and "components" not in entry:
        name, replicas = entry.get("name"), entry.get("replicas", 0)
        if type(name) is str and name and type(replicas) is int and 0 <= replicas <= INT32_MAX:
            return TargetCluster(name, replicas)
    fields = Fields(entry, f"{spec.at('clusters')}[{index}]")
    return TargetCluster(
        name=fields.required_str("name"),
        replicas=fields.integer("replicas", minimum=0, maximum=INT32_MAX),
        components=tuple(
            TargetComponent(c.required_str("name"), c.integer("replicas", minimum=0, maximum=INT32_MAX))
            for c in fields.objects("components")
        ),
    )


def parse_target_clusters(spec: Any) -> tuple[TargetCluster, ...]:
    """A binding's `spec.clusters`, parsed (`ValidationError` with the entry's path when one is invalid)."""
    return _parse_target_clusters(Fields(spec, "spec"))


def parse_binding(
    data: Any, *, same_spec: Binding | None = None, clusters: tuple[TargetCluster, ...] | None = None
) -> Binding:
    """Parse a ResourceBinding or ClusterResourceBinding from its JSON form.

    Raises `ValidationError` (and only that) for anything it cannot accept. `same_spec`: a binding of the same
    kind parsed from a body with this very `spec` (equal, unchanged): only metadata and status are parsed, the
    rest is taken from it. Most watch events of a binding are status writes, and at 1,000 clusters the spec
    (its placed clusters) is most of the parsing. With `clusters`, the spec equals that binding's except
    `spec.clusters` (a scheduler's spec write), and `clusters` is what the new `spec.clusters` parses to.
    """
    root = Fields(data, "")
    kind = root.text("kind")
    if kind not in (Scope.NAMESPACED.value, Scope.CLUSTER.value):
        raise ValidationError("kind", f"{show(kind)} is not one of ResourceBinding, ClusterResourceBinding")
    scope = Scope(kind)
    meta = root.required_obj("metadata")
    namespace = meta.text("namespace")
    if scope is Scope.NAMESPACED and not namespace:
        raise ValidationError("metadata.namespace", "is required for a ResourceBinding")
    if scope is Scope.CLUSTER and namespace:
        raise ValidationError("metadata.namespace", f"must be empty for a ClusterResourceBinding, got {namespace!r}")
    identity = _parse_identity(meta, namespace)
    if same_spec is not None and same_spec.scope is scope:
        if clusters is not None:
            identity["clusters"] = clusters
        return replace(same_spec, **identity, status=_parse_status(root.obj("status")))
    return Binding(scope=scope, **identity, **_parse_spec(root.required_obj("spec")),
                   status=_parse_status(root.obj("status")))


def _parse_identity(meta: Fields, namespace: str) -> dict[str, Any]:
    """The metadata fields a `Binding` keeps, by field name."""
    return {
        "name": meta.required_str("name"),
        "namespace": namespace,
        "uid": meta.text("uid"),
        "generation": meta.integer("generation"),
        "resource_version": meta.text("resourceVersion"),
        "labels": meta.string_map("labels"),
        "annotations": meta.string_map("annotations"),
        "deletion_timestamp": meta.time("deletionTimestamp"),
        "creation_timestamp": meta.time("creationTimestamp"),
    }


def _parse_spec(spec: Fields) -> dict[str, Any]:
    """The `spec` fields a `Binding` keeps, by field name (read in the order their errors are reported)."""
    resource = spec.required_obj("resource")
    placement = spec.obj("placement")
    requirements = spec.obj("replicaRequirements")
    suspension = spec.obj("suspension")
    priority = spec.obj("schedulePriority")
    groups = spec.obj("workloadAffinityGroups")
    return {
        "resource": _parse_resource(resource),
        "replicas": spec.integer("replicas", minimum=0, maximum=INT32_MAX),
        "replica_requirements": _parse_requirements(requirements) if requirements is not None else None,
        "components": tuple(
            Component(
                name=c.required_str("name"),
                replicas=c.integer("replicas", minimum=0, maximum=INT32_MAX),
                requirements=_parse_requirements(r) if (r := c.obj("replicaRequirements")) is not None else None,
            )
            for c in spec.objects("components")
        ),
        "clusters": _parse_target_clusters(spec),
        "placement": parse_placement(placement) if placement is not None else None,
        "eviction_clusters": frozenset(t.required_str("fromCluster") for t in spec.objects("gracefulEvictionTasks")),
        "scheduler_name": spec.text("schedulerName") or DEFAULT_SCHEDULER_NAME,
        "reschedule_triggered_at": spec.time("rescheduleTriggeredAt"),
        "suspend_scheduling": suspension.flag("scheduling") if suspension is not None else False,
        "schedule_priority": priority.integer("priority", minimum=-(2**31), maximum=INT32_MAX) if priority else 0,
        "preemption_policy": _parse_preemption_policy(priority),
        "affinity_group": groups.text("affinityGroup") if groups is not None else "",
        "anti_affinity_group": groups.text("antiAffinityGroup") if groups is not None else "",
    }


def _parse_preemption_policy(priority: Fields | None) -> PreemptionPolicy:
    if priority is None:
        return PreemptionPolicy.NEVER
    value = priority.enum("preemptionPolicy", [p.value for p in PreemptionPolicy])
    return PreemptionPolicy(value) if value else PreemptionPolicy.NEVER


def _parse_resource(resource: Fields) -> ObjectReference:
    return ObjectReference(
        api_version=resource.required_str("apiVersion"),
        kind=resource.required_str("kind"),
        name=resource.required_str("name"),
        namespace=resource.text("namespace"),
        uid=resource.text("uid"),
        resource_version=resource.text("resourceVersion"),
    )
