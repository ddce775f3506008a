"""What observers of the scheduling framework hear (the scheduler's metrics, `explain`'s record, a decision
process reporting back): the extension points, and the hook they implement. The algorithm does not know them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from ...algorithm.candidates import ClusterDetail
from ...algorithm.schedule import Candidates
from ...algorithm.walk import Outcome
from ...model import Binding
from ..observability.labels import PluginResult


class ExtensionPoint(StrEnum):
    FILTER = "Filter"
    SCORE = "Score"
    ESTIMATE = "Estimate"
    SELECT = "Select"
    ASSIGN = "Assign"
    POST_FILTER = "PostFilter"
    RESERVE = "Reserve"
    UNRESERVE = "Unreserve"
    BIND = "Bind"


class FrameworkHook:
    """Told what the framework does; every method does nothing unless overridden. `wants_trace`: the hook
    reads `selected`'s trace of the spread selection (building it costs a little). `timings_only`: the hook reads
    nothing but `step` and `plugin`, which a decision process reports back (so decisions may run there)."""

    wants_trace = False
    timings_only = False

    def step(self, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        """An extension point ran for one attempt."""

    def plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        """One plugin ran at one extension point."""

    def attempt_started(self, binding: Binding) -> None:
        """An attempt begins (the binding with the affinity term under trial as its observed term)."""

    def estimated(
        self, candidates: Candidates, general: Mapping[str, int], accurate: Mapping[str, int],
        failures: Mapping[str, str],
    ) -> None:
        """The candidates with their estimates applied, and what the estimators answered."""

    def selected(self, selected: Sequence[ClusterDetail], trace: Sequence[str]) -> None:
        """What selection kept (and its trace, when a hook wants it)."""

    def attempt_ended(self, outcome: Outcome) -> None:
        """The attempt's result or its error."""
