"""Which events concern the scheduler: the binding event filter and cluster requeues (Karmada's
`pkg/scheduler/event_handler.go`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import FILTER_LABELS, Binding, Cluster
from ..model.body import BindingBody
from ..model.conditions import SCHEDULED
from .affinity import cluster_matches
from .triggers import observed_term_index


def passes_event_filter(body: Mapping[str, Any], scheduler_name: str) -> bool:
    """Karmada's binding event filter (`pkg/scheduler/event_handler.go: resourceBindingEventFilter`), on the raw
    object (so even a binding the model rejects is seen): our scheduler name (empty means `default-scheduler`),
    scheduling not suspended, and one of the policy labels present with a non-empty value."""
    return event_filter_refusal(body, scheduler_name) is None


def event_filter_refusal(body: Mapping[str, Any], scheduler_name: str) -> str | None:
    """Why Karmada's binding event filter (`passes_event_filter`) refuses `body`, in a user's words; None when it
    passes."""
    view = BindingBody(body)
    if view.scheduler_name != scheduler_name:
        return f"spec.schedulerName is {view.scheduler_name}, and this scheduler is {scheduler_name}"
    if view.scheduling_suspended:
        return "spec.suspension.scheduling is true"
    labels = view.labels
    if not any(isinstance(labels.get(label), str) and labels.get(label) for label in FILTER_LABELS):
        return (f"it carries none of the labels {', '.join(FILTER_LABELS)} (Karmada's event filter: a binding made "
                "by Karmada's detector from a PropagationPolicy has one)")
    return None


def cluster_change_requeues(old: Cluster | None, new: Cluster) -> list[Cluster]:
    """The cluster objects whose affected bindings are requeued for an update (Karmada's
    `pkg/scheduler/event_handler.go: updateCluster`): the new one when deletion just started; old and new when
    labels or generation changed; none otherwise (status-only changes, and cluster additions, requeue nothing)."""
    if old is None:
        return []
    if old.deletion_timestamp is None and new.deletion_timestamp is not None:
        return [new]
    if old.labels != new.labels or old.generation != new.generation:
        return [old, new]
    return []


def gained_apis(old: Cluster | None, new: Cluster) -> bool:
    """The cluster's status now lists a kind of an API version it did not list before. (Karmada requeues
    nothing for a status-only change; see `waits_for_an_api`.)"""
    if old is None:
        return False
    before = {(e.group_version, kind) for e in old.api_enablements for kind in e.kinds}
    return any((e.group_version, kind) not in before for e in new.api_enablements for kind in e.kinds)


def waits_for_an_api(binding: Binding) -> bool:
    """Its last pass found no cluster fit (Scheduled=False, NoClusterFit). Karmada leaves such a binding until
    its own next change, so one that failed because a cluster had not yet reported the API of its resource
    (a Cluster created with kubectl before its status arrived, say) would wait forever: we requeue it when a
    cluster gains an API (a deliberate difference, in docs/compatibility.md)."""
    condition = binding.status.condition(SCHEDULED)
    return condition is not None and condition.status == "False" and condition.reason == "NoClusterFit"


def affected_by_cluster(binding: Binding, cluster: Cluster, scheduler_name: str) -> bool:
    """Karmada's cluster reconcile for one binding (`pkg/scheduler/event_handler.go: enqueueAffectedBindings`):
    skip bindings without placement, of another scheduler or suspended; with clusterAffinities, requeue when not
    yet observed at this generation, else test the observed term's own affinity only (a QUIRK kept: overflow
    affinities do not requeue); otherwise test clusterAffinity (none at all requeues)."""
    placement = binding.placement
    if placement is None or binding.scheduler_name != scheduler_name or binding.suspend_scheduling:
        return False
    if placement.cluster_affinities:
        if binding.status.scheduler_observed_generation != binding.generation:
            return True
        index = observed_term_index(placement, binding.status.scheduler_observing_affinity_name)
        affinity = placement.cluster_affinities[index].affinity
        return cluster_matches(cluster, affinity)
    if placement.cluster_affinity is None:
        return True
    return cluster_matches(cluster, placement.cluster_affinity)
