"""The general estimator: how many replicas (or component sets) a cluster still takes, from its status alone
(Karmada's `general-estimator`: `pkg/estimator/client/general.go: GeneralEstimator`).

Two answers per cluster, both pure functions of the `Cluster` snapshot:

* `max_available_replicas` for single-template workloads (`replicas`);
* `max_available_component_sets` for multi-template workloads (`component_sets`).

Both deduct the workloads assumed on a cluster (`assumed`, `deduction`) and compute on integer forms of what a
cluster offers and a request asks (`profiles`, `units`), which an `EstimatorCache` (`cache`) builds once per
object and beside which it memoises answers.
"""

from .assumed import AssumedLoad, AssumedProfile, AssumedWorkload, LoadTotals, assumed_profile, replica_units
from .cache import EstimatorCache
from .component_sets import estimate_component_sets, max_available_component_sets
from .replicas import estimate_replicas, max_available_replicas
from .units import MAX_INT32

__all__ = [
    "MAX_INT32",
    "AssumedLoad",
    "AssumedProfile",
    "AssumedWorkload",
    "EstimatorCache",
    "LoadTotals",
    "assumed_profile",
    "estimate_component_sets",
    "estimate_replicas",
    "max_available_component_sets",
    "max_available_replicas",
    "replica_units",
]
