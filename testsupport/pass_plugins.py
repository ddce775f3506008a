"""Plugins the tests install to hold, slow, race or cancel a pass where a real one waits: its Estimate point,
the await before the commit point where an estimator's gRPC call would be (Karmada's shutdown report holds its
mock algorithm there too). They are plugins like any other (`build_plugins(extra=[...])`,
`SchedulerService(plugins=[...])`), so the pass under test is the product's own, unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from binding_scheduler.algorithm.plugins import AttemptContext, EstimatePlugin
from binding_scheduler.algorithm.registry import PluginSet, build_plugins
from binding_scheduler.model import Cluster

During = Callable[[AttemptContext], Awaitable[object]]


class AtEstimate(EstimatePlugin):
    """Runs `during(ctx)` at every attempt's Estimate point and answers no estimate (the others decide). Only
    bindings with replicas or components are estimated: give the binding under test some."""

    name = "TestAtEstimate"

    def __init__(self, during: During) -> None:
        self.during = during

    async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        await self.during(ctx)
        return {}


def plugins_with(during: During | None = None) -> PluginSet:
    """Every in-tree plugin, and `AtEstimate(during)` when given."""
    return build_plugins(extra=[AtEstimate(during)] if during is not None else [])
