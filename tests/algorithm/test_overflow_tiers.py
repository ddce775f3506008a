"""Each feasible cluster's overflow tier for a clusterAffinities term with overflow affinities (Karmada's
pkg/scheduler/core/spreadconstraint/group_clusters.go: getClusterOverflowOrder): 0 for the term's own affinity, i + 1
for its i-th overflow affinity, the unmatched order otherwise."""

from __future__ import annotations

import numpy as np

from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.schedule import UNMATCHED_OVERFLOW_ORDER, candidates_of, overflow_order
from binding_scheduler.model import parse_binding
from testsupport.builders import binding, make_cluster, snapshot, term

OVERFLOWS = [{"affinityName": "near", "clusterNames": ["m3"]}, {"affinityName": "far", "clusterNames": ["m4", "m1"]}]


def test_each_cluster_gets_first_tier_that_matches_it() -> None:
    body = binding("web", replicas=4, placement={"clusterAffinities": [term("home", "m1", "m2", overflow=OVERFLOWS)]})
    body["status"] = {"schedulerObservingAffinityName": "home"}
    web = parse_binding(body)
    fleet = snapshot("m1", "m2", "m3", "m4", "m5")

    candidates = candidates_of(web, AttemptContext.of(web, fleet, None), np.arange(5), {}, {})

    orders = [(d.cluster.name, d.overflow_order) for d in candidates.details]
    assert orders == [("m1", 0), ("m2", 0), ("m3", 1), ("m4", 2), ("m5", UNMATCHED_OVERFLOW_ORDER)]
    assert [d.overflow_order for d in candidates.details] == [
        overflow_order(web, d.cluster, fleet) for d in candidates.details]


def test_cluster_outside_snapshot_is_matched_without_memo() -> None:
    body = binding("web", replicas=4, placement={"clusterAffinities": [term("home", "m1", "m2", overflow=OVERFLOWS)]})
    body["status"] = {"schedulerObservingAffinityName": "home"}
    assert overflow_order(parse_binding(body), make_cluster("m3"), snapshot("m1")) == 1
