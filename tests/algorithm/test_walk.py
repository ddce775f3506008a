"""The ClusterAffinity and ClusterAffinities paths (Karmada's TestScheduleResourceBindingWithClusterAffinities /
...WithClusterAffinity and their CRB twins, TestTargetClustersToString, TestRecordScheduleResultEvent*).

`attempts` says which tries run; `decide` turns their outcomes into what is written and which events are recorded.
"""

from __future__ import annotations

from typing import Any

from binding_scheduler.algorithm.errors import FitError, SchedulingError, UnschedulableError
from binding_scheduler.algorithm.events import clusters_text, deleting_message, success_message
from binding_scheduler.algorithm.walk import Attempt, Decision, Outcome, attempts, decide
from binding_scheduler.model import Binding, TargetCluster
from testsupport.builders import make_binding, placement, term

TERMS = [term("group1", "m1"), term("group2", "m2"), term("group3", "m3")]
FIT = FitError(3, {"m1": "cluster(s) did not match the placement cluster affinity constraint"})
FIT_TEXT = "0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint."


def with_terms(**kwargs: Any) -> Binding:
    return make_binding("foo", namespace="default", replicas=1, placement=placement(affinities=TERMS), **kwargs)


def walk(rb: Binding, outcomes: list[Outcome]) -> Decision:
    """Run the attempts with the given outcomes (a driver stops after the first success)."""
    tries = attempts(rb)
    ran: list[tuple[Attempt, Outcome]] = []
    for attempt, outcome in zip(tries, outcomes, strict=False):
        ran.append((attempt, outcome))
        if not isinstance(outcome, SchedulingError):
            break
    return decide(rb, ran)


# --- which attempts -------------------------------------------------------------------------------------


def test_clusteraffinity_path_has_one_attempt_with_no_term() -> None:
    rb = make_binding(placement=placement(affinity={"clusterNames": ["m1"]}))
    (attempt,) = attempts(rb)
    assert (attempt.term_index, attempt.binding) == (-1, rb)


def test_walk_starts_at_first_term_when_nothing_is_observed() -> None:
    tries = attempts(with_terms())
    assert [(a.term_index, a.term_name) for a in tries] == [(0, "group1"), (1, "group2"), (2, "group3")]


def test_walk_resumes_from_observed_term() -> None:
    tries = attempts(with_terms(observed_affinity="group2"))
    assert [a.term_name for a in tries] == ["group2", "group3"]


def test_explicit_reschedule_restarts_walk_at_zero() -> None:
    rb = with_terms(observed_affinity="group3", reschedule_at="2024-01-01T00:00:02Z",
                    last_scheduled="2024-01-01T00:00:01Z")
    assert [a.term_name for a in attempts(rb)] == ["group1", "group2", "group3"]


def test_attempt_sees_term_as_observed_and_original_is_untouched() -> None:
    rb = with_terms()
    assert attempts(rb)[1].binding.status.scheduler_observing_affinity_name == "group2"
    assert rb.status.scheduler_observing_affinity_name == ""


# --- ClusterAffinities: decisions and events (TestScheduleResourceBindingWithClusterAffinities) ----------


def test_first_term_succeeds_writes_result_and_name() -> None:
    rb = with_terms()
    decision = walk(rb, [[TargetCluster("m1", 1)]])
    assert decision == Decision((TargetCluster("m1", 1),), "group1", None, (), 0)
    assert decision.event(rb) == ("Normal", "Binding has been scheduled successfully. Result: {m1:1}")


def test_fallback_to_second_term_warns_about_first() -> None:
    rb = with_terms()
    decision = walk(rb, [FIT, [TargetCluster("m2", 1)]])
    assert decision.clusters == (TargetCluster("m2", 1),)
    assert decision.affinity_name == "group2"
    assert decision.warnings == (
        f"failed to schedule ResourceBinding(default/foo) with clusterAffiliates index(0): {FIT_TEXT}",
    )
    assert decision.event(rb) == ("Normal", "Binding has been scheduled successfully. Result: {m2:1}")


def test_resuming_on_observed_term_does_not_rewrite_name() -> None:
    rb = with_terms(observed_affinity="group2")
    decision = walk(rb, [[TargetCluster("m2", 1)]])
    assert (decision.clusters, decision.affinity_name, decision.term_index) == ((TargetCluster("m2", 1),), None, 1)


def test_all_terms_failing_keep_first_error() -> None:
    rb = with_terms()
    later = FitError(3, {"m2": "cluster(s) is in the process of eviction"})
    decision = walk(rb, [FIT, later, later])
    assert (decision.clusters, decision.affinity_name, decision.error) == ((), None, FIT)
    assert [w.split(":")[0] for w in decision.warnings] == [
        "failed to schedule ResourceBinding(default/foo) with clusterAffiliates index(0)",
        "failed to schedule ResourceBinding(default/foo) with clusterAffiliates index(1)",
        "failed to schedule ResourceBinding(default/foo) with clusterAffiliates index(2)",
    ]
    assert decision.event(rb) == ("Warning", FIT_TEXT)


def test_first_error_that_is_not_fit_error_patches_nothing() -> None:
    rb = with_terms()
    first = SchedulingError("failed to select clusters: the number of feasible clusters is less than "
                            "spreadConstraint.MinGroups")
    decision = walk(rb, [first, FIT, FIT])
    assert (decision.clusters, decision.affinity_name, decision.error) == (None, None, first)
    assert decision.event(rb) == ("Warning", str(first))


def test_later_non_fit_error_still_clears_when_first_is_fit_error() -> None:
    decision = walk(with_terms(), [FIT, UnschedulableError("not enough"), FIT])
    assert (decision.clusters, decision.error) == ((), FIT)


def test_all_fail_numbers_warnings_by_term() -> None:
    rb = with_terms(observed_affinity="group3")
    decision = walk(rb, [FIT])
    assert decision.warnings == (
        f"failed to schedule ResourceBinding(default/foo) with clusterAffiliates index(2): {FIT_TEXT}",
    )


def test_cluster_resource_binding_warns_with_own_name() -> None:
    crb = make_binding("foo", cluster_scoped=True, replicas=1, placement=placement(affinities=TERMS))
    decision = walk(crb, [FIT, [TargetCluster("m2", 1)]])
    assert decision.warnings == (
        f"failed to schedule ClusterResourceBinding(foo) with clusterAffiliates index(0): {FIT_TEXT}",
    )
    assert decision.event(crb) == ("Normal", "Binding has been scheduled successfully. Result {m2:1}")


# --- ClusterAffinity path (TestScheduleResourceBindingWithClusterAffinity) --------------------------------


def single() -> Binding:
    return make_binding("foo", replicas=1, placement=placement(affinity={"clusterNames": ["m1"]}))


def test_single_affinity_success_writes_clusters_but_no_name() -> None:
    decision = walk(single(), [[TargetCluster("m1", 1)]])
    assert decision == Decision((TargetCluster("m1", 1),), None, None)


def test_single_affinity_fit_error_clears_clusters() -> None:
    decision = walk(single(), [FIT])
    assert (decision.clusters, decision.affinity_name, decision.error, decision.warnings) == ((), None, FIT, ())
    assert decision.event(single()) == ("Warning", FIT_TEXT)


def test_single_affinity_other_error_patches_nothing() -> None:
    error = SchedulingError("failed to assign replicas: no clusters available to schedule")
    assert walk(single(), [error]) == Decision(None, None, error)


def test_decide_needs_outcome() -> None:
    try:
        decide(single(), [])
    except ValueError as error:
        assert str(error) == "decide needs at least one attempt outcome"
    else:
        raise AssertionError("expected ValueError")


# --- event texts (TestTargetClustersToString, TestRecordScheduleResultEvent*) ------------------------------


def test_clusters_text() -> None:
    assert clusters_text([]) == "{}"
    assert clusters_text([TargetCluster("m1")]) == "{m1:0}"
    assert clusters_text([TargetCluster("m1", 2), TargetCluster("m2", 1)]) == "{m1:2, m2:1}"
    assert clusters_text([TargetCluster("b", 1), TargetCluster("a", 3)]) == "{b:1, a:3}"


def test_success_messages_differ_between_rb_and_crb() -> None:
    result = [TargetCluster("m1", 2), TargetCluster("m2", 1)]
    assert success_message(make_binding(), result) == "Binding has been scheduled successfully. Result: {m1:2, m2:1}"
    assert success_message(make_binding(cluster_scoped=True), result[:1]) == (
        "Binding has been scheduled successfully. Result {m1:2}"
    )


def test_empty_success_result() -> None:
    assert success_message(make_binding(), []) == "Binding has been scheduled successfully. Result: {}"


def test_deleting_binding_messages() -> None:
    assert deleting_message(make_binding("foo", namespace="ns")) == "skip schedule deleting resourceBinding: ns/foo"
    assert deleting_message(make_binding("foo", cluster_scoped=True)) == (
        "skip schedule deleting clusterResourceBinding: foo"
    )
