"""Multi-template (multi-component) workloads, behind Karmada's alpha gate `MultiplePodTemplatesScheduling`: such
a binding is estimated in whole component sets and placed on exactly one cluster
(`pkg/scheduler/core/estimation.go: isMultiTemplateSchedulingApplicable` and `calculateMultiTemplateAvailableSets`;
selection with one replica in `pkg/scheduler/core/common.go: SelectClusters`)."""

from __future__ import annotations

from ..model import Binding, SpreadField


def multi_template_applicable(binding: Binding, gate: bool) -> bool:
    """The gate is on, the binding has components and a placement, and a spread constraint by cluster asks
    for exactly one cluster (minGroups == maxGroups == 1)."""
    placement = binding.placement
    if not gate or not binding.components or placement is None:
        return False
    return any(
        c.spread_by_field == SpreadField.CLUSTER.value and c.min_groups == 1 and c.max_groups == 1
        for c in placement.spread_constraints
    )
