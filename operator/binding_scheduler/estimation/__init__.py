"""Replica estimators reached over the network: Karmada's accurate estimator protocol (gRPC), client and stub.

May import `binding_scheduler.model` and `binding_scheduler.algorithm` only (and never kopf).
"""

from .accurate import AccurateEstimator
from .answer import EstimateAnswer
from .canonical import canonical_quantity
from .discovery import DiscoveryError, ServiceLookup
from .failures import FAILURES_METRIC, Reason
from .settings import DEFAULT_PORT, EstimatorSettings, PartialFailure

__all__ = [
    "DEFAULT_PORT",
    "FAILURES_METRIC",
    "AccurateEstimator",
    "DiscoveryError",
    "EstimateAnswer",
    "EstimatorSettings",
    "PartialFailure",
    "Reason",
    "ServiceLookup",
    "canonical_quantity",
]
