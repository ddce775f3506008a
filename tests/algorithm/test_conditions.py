"""Error -> Scheduled condition (Karmada's pkg/scheduler/helper.go: getConditionByError; Test_getConditionByError) and
the error kinds kept through wrapping (pkg/scheduler/core/generic_scheduler.go: Schedule)."""

from __future__ import annotations

from binding_scheduler.algorithm.errors import (
    ConditionVerdict,
    FitError,
    SchedulingError,
    UnschedulableError,
    condition_for,
)


def test_success_is_true_and_not_retried() -> None:
    assert condition_for(None) == ConditionVerdict(
        "True", "Success", "Binding has been scheduled successfully.", retry=False
    )


def test_unschedulable_error_is_retried() -> None:
    error = UnschedulableError("Clusters available replicas are not enough to schedule.")
    assert condition_for(error) == ConditionVerdict(
        "False", "Unschedulable", "Clusters available replicas are not enough to schedule.", retry=True
    )


def test_wrapped_unschedulable_error_is_still_unschedulable() -> None:
    error = UnschedulableError("failed to scale up: Clusters available replicas 3 are not enough to schedule.")
    wrapped = error.wrapped("failed to assign replicas")
    assert condition_for(wrapped) == ConditionVerdict(
        "False",
        "Unschedulable",
        "failed to assign replicas: failed to scale up: Clusters available replicas 3 are not enough to schedule.",
        retry=True,
    )


def test_fit_error_is_no_cluster_fit_and_not_retried() -> None:
    error = FitError(1, {"m1": "cluster(s) is in the process of eviction"})
    assert condition_for(error) == ConditionVerdict(
        "False",
        "NoClusterFit",
        "0/1 clusters are available: 1 cluster(s) is in the process of eviction.",
        retry=False,
    )


def test_any_other_error_is_scheduler_error_and_retried() -> None:
    error = SchedulingError("failed to assign replicas: no clusters available to schedule")
    assert condition_for(error) == ConditionVerdict(
        "False", "SchedulerError", "failed to assign replicas: no clusters available to schedule", retry=True
    )


def test_plain_exception_is_scheduler_error() -> None:
    assert condition_for(RuntimeError("boom")) == ConditionVerdict("False", "SchedulerError", "boom", retry=True)


def test_wrapping_keeps_original_untouched() -> None:
    error = SchedulingError("no enough resource when selecting 2 clusters")
    wrapped = error.wrapped("failed to select clusters")
    assert (str(error), str(wrapped)) == (
        "no enough resource when selecting 2 clusters",
        "failed to select clusters: no enough resource when selecting 2 clusters",
    )
    assert type(wrapped) is SchedulingError
