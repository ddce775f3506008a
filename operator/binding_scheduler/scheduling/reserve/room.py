"""Whether a decision still fits where other passes reserved after it read the assumptions.

When the general estimator was the only estimate, it is made again for those clusters with the assumptions as they
are now (`room_now`: exact, resource models included); when accurate estimators took part, the room the estimates
gave is cut by the most that what was assumed since can take (`AssumptionCache.taken_since`, only where that
bound holds: `bounded_by_assumptions`). A decision that can be neither checked nor bounded is refused when anything
changed on its clusters (`still_fits`), and the caller decides again on fresh data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ...algorithm.plugins import CycleState
from ...algorithm.registry import PluginSet
from ...algorithm.schedule import Candidates, ScheduleOptions, general_column, merged_estimates
from ...algorithm.snapshot import Snapshot
from ...model import Binding, TargetCluster
from ..state.assumptions import AssumptionCache


def room_now(
    assumptions: AssumptionCache,
    options: ScheduleOptions,
    workloads: Callable[[str], bool] | bool,
    binding: Binding,
    snapshot: Snapshot,
    candidates: Candidates,
    claimed: Mapping[str, int],
    names: Sequence[str],
) -> dict[str, int]:
    """The general estimate of each of `names` (candidates) again, with the assumptions as they are now, merged as
    the pass merged it (`apply_estimates`, then the claims it deducted). `workloads`: where the assumed workloads
    are listed one by one (`Framework.listed_workloads`)."""
    at = candidates.positions(names)
    known = [name for name in names if name in at]
    indices = candidates.indices[np.array([at[name] for name in known], dtype=np.intp)]
    held = assumptions.at(binding, snapshot.columns, indices, workloads=workloads)
    general = general_column(binding, indices, snapshot, options, held.columns)
    merged = merged_estimates([general], len(known), binding.replicas)
    return {name: max(room - claimed.get(name, 0), 0) for name, room in zip(known, merged.tolist(), strict=True)}


def bounded_by_assumptions(assumptions: AssumptionCache | None, plugins: PluginSet, snapshot: Snapshot) -> bool:
    """Whether each estimate a pass merged can lose at most `AssumptionCache.taken_since` replicas to what other
    passes assume after it read them: the general estimate on resource summaries and the accurate estimators pack
    pods into free resources, while resource models place workloads as sets and estimate plugins may do anything
    with what they read."""
    return assumptions is not None and not plugins.estimators and not snapshot.modelled()


def still_fits(
    assumptions: AssumptionCache | None,
    binding: Binding,
    result: Sequence[TargetCluster],
    state: CycleState,
    multi_template: bool,
) -> bool:
    """Every cluster of `result` whose assumptions changed since the pass read them still has room for the replicas
    the decision adds there: the general estimate made again (`room_now`, when it was the only one), else the room
    its estimates gave less the most that the workloads assumed there since can take. Without either (or for
    component sets) any change refuses."""
    assert assumptions is not None
    changed = assumptions.changed(state.versions, [t.name for t in result])
    if not changed:
        return True
    if multi_template:
        return False
    before = {t.name: t.replicas for t in binding.clusters}
    placed = {t.name: t.replicas for t in result}
    grown = [name for name in changed if placed[name] > before.get(name, 0)]
    if not grown:
        return True
    if state.room_now is not None:
        room = state.room_now(grown)
    elif state.room:
        taken = assumptions.taken_since(state.versions, grown)
        if taken is None:
            return False
        room = {name: state.room[name] - taken[name] for name in grown if name in state.room}
    else:
        return False
    return all(name in room and placed[name] - before.get(name, 0) <= room[name] for name in grown)
