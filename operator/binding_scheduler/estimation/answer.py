"""What one fan-out to the accurate estimators produced."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class EstimateAnswer:
    """`replicas`: the answers kept, per cluster (-1 passes through as Karmada's UnauthenticReplica; empty
    when `partial_failure` is `discard` and any cluster failed). `failures`: cluster -> reason text, for every
    cluster without a usable answer (including clusters not asked because they are in Pull mode)."""

    replicas: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    failures: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "replicas", MappingProxyType(dict(self.replicas)))
        object.__setattr__(self, "failures", MappingProxyType(dict(self.failures)))
