"""The integers the estimates count in, and what a component asks in them.

Replicas count cpu in milli-units and any other resource in whole units (`Value()`); component sets count each
quantity in the unit of its own format (the QUIRK in `max_available_component_sets`). Answers are Go int32s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...model import Component, Quantity
from ..resource_models import Demand, replica_demand

MAX_INT32 = 2**31 - 1


def set_units(quantity: Quantity) -> int:
    """Karmada's `quantityAsInt64`: milli-units for decimal quantities, whole units for binary (Ki, Mi, ...)."""
    return quantity.value() if quantity.binary else quantity.milli_value()


def component_request(component: Component) -> Mapping[str, Quantity]:
    requirements = component.requirements
    return {} if requirements is None else requirements.resource_request


def set_demands(components: Sequence[Component]) -> list[tuple[Demand, int]]:
    return [(replica_demand(component_request(c)), c.replicas) for c in components]
