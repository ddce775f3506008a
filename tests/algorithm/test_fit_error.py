"""The FitError text (Karmada's pkg/scheduler/framework/types.go: FitError.Error; TestFitError_Error)."""

from __future__ import annotations

from binding_scheduler.algorithm.errors import FitError, SchedulingError, fit_error_message

API = "cluster(s) did not have the API resource"
AFFINITY = "cluster(s) did not match the placement cluster affinity constraint"


def test_reasons_are_counted_and_sorted() -> None:
    error = FitError(3, {"m1": API, "m2": AFFINITY, "m3": AFFINITY})
    assert str(error) == (
        "0/3 clusters are available: 1 cluster(s) did not have the API resource, "
        "2 cluster(s) did not match the placement cluster affinity constraint."
    )


def test_no_clusters_at_all() -> None:
    assert str(FitError(0, {})) == "0/0 clusters are available: no cluster exists."


def test_empty_diagnosis_says_no_cluster() -> None:
    assert str(FitError(2, {})) == "0/2 clusters are available: no cluster exists."


def test_items_sort_as_strings_not_numbers() -> None:
    diagnosis = {f"a{i}": API for i in range(10)} | {"b1": AFFINITY, "b2": AFFINITY}
    assert fit_error_message(12, diagnosis) == (
        "0/12 clusters are available: 10 cluster(s) did not have the API resource, "
        "2 cluster(s) did not match the placement cluster affinity constraint."
    )


def test_taint_reason_keeps_braces() -> None:
    assert fit_error_message(1, {"m1": "cluster(s) had untolerated taint {a:NoSchedule}"}) == (
        "0/1 clusters are available: 1 cluster(s) had untolerated taint {a:NoSchedule}."
    )


def test_fit_error_is_scheduling_error_and_keeps_diagnosis() -> None:
    error = FitError(1, {"m1": API})
    assert isinstance(error, SchedulingError)
    assert (error.num_all_clusters, error.diagnosis) == (1, {"m1": API})
