"""How a binding's replicas were divided, in the terms a user checks by hand: the strategy and the mode it took, each
cluster's weight, its exact share of the replicas, and the seats Webster's method gave it.

Every figure comes from the functions the division itself runs (`select_strategy`, `plan_dynamic`, `aggregate`,
`static_weights`, `allocate_webster`): this module only lays their answers out, so `explain` cannot tell one
division while the scheduler makes another."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ..model import Binding, TargetCluster
from .assign import AssignState, Strategy, is_workload_assignment
from .candidates import ClusterDetail
from .dynamic import FRESH_SCALE, SCALE_DOWN, DynamicPlan, aggregate, merge, plan_dynamic
from .overflow import overflow_enabled
from .static_weight import static_weights
from .webster import allocate_webster

WEBSTER = ("seats by Webster's method: each replica in turn goes to the cluster with the highest weight / "
           "(2 x its replicas so far + 1); equal claims to the one with fewer replicas, then by name in the "
           "direction the binding's uid picks")


def division_lines(binding: Binding, selected: Sequence[ClusterDetail]) -> list[str]:
    """The division of `binding`'s replicas over the `selected` clusters, line by line (empty when nothing was
    selected)."""
    if not selected:
        return []
    if not is_workload_assignment(binding):
        return ["no replicas to divide (not a single-template workload): the selected clusters are listed by name"]
    state = AssignState.of(binding)
    if overflow_enabled(binding):
        return [f"{state.strategy.value} within each overflow tier of the observed clusterAffinities term, tier by "
                "tier until the replicas fit"]
    if state.strategy is Strategy.DUPLICATED:
        count = len(selected)
        return [f"Duplicated: each of the {count} selected cluster{'' if count == 1 else 's'} runs all "
                f"{binding.replicas} replicas"]
    if state.strategy is Strategy.STATIC_WEIGHT:
        weights = static_weights(selected, state.weight_preference)
        source = "the static weight rules (a cluster's weight is its highest matching rule)" \
            if state.weight_preference is not None else "weight 1 each (no weight preference)"
        return [f"StaticWeight: {binding.replicas} replicas by {source}", WEBSTER,
                *_webster_lines(binding.replicas, weights, state.descending)]
    return _dynamic_lines(binding, selected, state)


def _dynamic_lines(binding: Binding, selected: Sequence[ClusterDetail], state: AssignState) -> list[str]:
    aggregated = state.strategy is Strategy.AGGREGATED
    plan = plan_dynamic(selected, binding.replicas, state.previous, fresh=state.fresh)
    name = "Aggregated" if aggregated else "DynamicWeight"
    if isinstance(plan, list):
        return [f"{name}, steady: the previous placement already holds the {binding.replicas} replicas, unchanged"]
    lines = [f"{name}, {_mode(plan, binding)}"]
    weights = plan.weights
    if aggregated:
        weights = aggregate(plan.weights, plan.scheduled, plan.target)
        lines.append(f"the fewest clusters whose room holds {plan.target} (the previous ones first, then the "
                     f"roomiest): {', '.join(n for n, _ in weights)}")
    room = sum(weight for _, weight in weights)
    if room < plan.target:
        return [*lines, f"their room, {room}, is less than the {plan.target} replicas: not scheduled"]
    lines.append(WEBSTER)
    lines += _webster_lines(plan.target, weights, state.descending)
    if plan.scheduled:
        won = allocate_webster(plan.target, weights, descending=state.descending)
        merged = merge(won, plan.scheduled)
        lines.append(f"added to the previous placement ({_targets(plan.scheduled)}): {_targets(merged)}")
    return lines


def _mode(plan: DynamicPlan, binding: Binding) -> str:
    if plan.error_prefix == FRESH_SCALE:
        return (f"fresh: all {plan.target} replicas divided again, each cluster weighted by its available replicas "
                "(its room for more plus what it holds now)")
    if plan.error_prefix == SCALE_DOWN:
        return (f"scale down to {plan.target}: divided over the clusters that hold replicas now, weighted by what "
                "each holds")
    placed = binding.replicas - plan.target
    if not plan.scheduled:
        return (f"first placement (scale up from 0): the {plan.target} replicas divided by each cluster's "
                "allocatable replicas (its room for more)")
    return (f"scale up from {placed} to {binding.replicas}: the {plan.target} new replicas divided by each cluster's "
            "allocatable replicas (its room for more), then added to the previous placement")


def _webster_lines(seats: int, weights: Sequence[tuple[str, int]], descending: bool) -> list[str]:
    total = sum(weight for _, weight in weights)
    won = dict(allocate_webster(seats, weights, descending=descending))
    lines = []
    for name, weight in weights:
        share = Fraction(seats * weight, total) if total else Fraction(0)
        lines.append(f"  {name}: weight {weight} of {total}, exact share {seats} x {weight}/{total} = "
                     f"{float(share):.2f} -> {won.get(name, 0)}")
    return lines


def _targets(targets: Sequence[TargetCluster]) -> str:
    return ", ".join(f"{t.name}:{t.replicas}" for t in targets) or "none"
