"""devcluster: an embedded Kubernetes API emulator with real concurrency semantics.

It imports nothing else from binding_scheduler but the CRDs it serves (`binding_scheduler.crds`); it is a
distribution of its own, binding-scheduler-devcluster. See docs/devcluster.md.
"""

from binding_scheduler.crds import PACKAGE_CRDS, default_crds_dir

from .client import DevClient, Reply, WatchStream, resource_path
from .cluster import GC_THRESHOLDS, DevCluster
from .errors import ApiError
from .faults import Fault, Faults
from .journal import Journal, JournalEntry
from .patch import copy_json
from .resources import Registry, ResourceType
from .store import Store

__all__ = [
    "GC_THRESHOLDS",
    "PACKAGE_CRDS",
    "ApiError",
    "DevClient",
    "DevCluster",
    "Fault",
    "Faults",
    "Journal",
    "JournalEntry",
    "Registry",
    "Reply",
    "ResourceType",
    "Store",
    "WatchStream",
    "copy_json",
    "default_crds_dir",
    "resource_path",
]
