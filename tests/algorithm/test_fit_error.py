"""The FitError text (Karmada's pkg/scheduler/framework/types.go: FitError.Error; TestFitError_Error)."""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.errors import FitError, SchedulingError, fit_error_message
from binding_scheduler.algorithm.plugins import Diagnosis, FilterMask

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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["api", "taint", "each"]), min_size=0, max_size=4), st.integers(0, 2**16))
def test_diagnosis_counts_reasons_as_its_names_do(filters: list[str], seed: int) -> None:
    """The message's counts, read from the filters' masks, equal those of the diagnosis named cluster by cluster."""
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(40)]
    remaining = np.ones(len(names), dtype=bool)
    failures = []
    for kind in filters:
        failed = rng.random(len(names)) < 0.3
        failed &= remaining
        remaining &= ~failed
        if not failed.any():
            continue
        reason = (lambda index: f"reason {index % 3}") if kind == "each" else kind
        failures.append(FilterMask(failed, reason))
    diagnosis = Diagnosis(names, failures)
    named = Counter(dict(diagnosis).values())
    assert diagnosis.reason_counts() == dict(named)
    assert fit_error_message(len(names), diagnosis) == fit_error_message(len(names), dict(diagnosis))


def test_pickled_fit_error_names_its_clusters() -> None:
    failed = np.array([True, False, True])
    error = FitError(3, Diagnosis(["m1", "m2", "m3"], [FilterMask(failed, lambda index: f"reason {index}")]))
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.diagnosis) == (str(error), {"m1": "reason 0", "m3": "reason 2"})
