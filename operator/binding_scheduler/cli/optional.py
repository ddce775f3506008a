"""The part of binding-scheduler an installation may lack: devcluster, the embedded API server, is a distribution
of its own (binding-scheduler-devcluster, the `devcluster` extra). The two commands that start it, `demo` and
`devcluster`, ask for it here before anything else and, without it, exit 1 with one line saying what to install;
no other command imports it (an import-linter contract holds that)."""

from __future__ import annotations

import importlib.util
import sys

DEVCLUSTER = "binding_scheduler.devcluster"
INSTALL_DEVCLUSTER = "pip install 'binding-scheduler[devcluster]'"
MISSING = 1
"""The exit status without it: a failure at run time, as the CLI's others (2 is for bad usage or input)."""


def devcluster_missing(needed_by: str) -> bool:
    """Whether devcluster is not installed; then one line on stderr says that `needed_by` needs it."""
    if importlib.util.find_spec(DEVCLUSTER) is not None:
        return False
    print(f"error: {needed_by} needs the embedded API server: {INSTALL_DEVCLUSTER}", file=sys.stderr)
    return True
