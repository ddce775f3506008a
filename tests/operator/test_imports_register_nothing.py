"""Importing a module of the package registers nothing in Kopf and reads no environment: only
`binding_scheduler.operator.kopf_main`, the module `kopf run -m` imports, registers the scheduler's handlers in
Kopf's default registry (configured from BINDING_SCHEDULER_*), and it registers exactly those.

The imports run in a fresh interpreter with a clean environment (in this process the modules are imported
already, and an import's side effects happen once), one after the other, each one's registrations and reads
noted apart."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import binding_scheduler

KOPF_RUN_MODULE = "binding_scheduler.operator.kopf_main"
PACKAGE_PARENT = str(Path(binding_scheduler.__file__).resolve().parent.parent)

# Imports each of `sys.argv[1:]` in turn, and prints, per module, the handlers in Kopf's default registry after
# it and which BINDING_SCHEDULER_* variables it asked for by name. os.environ is replaced before the package is
# imported, so a default argument bound to it (`from_env(env=os.environ)`) and `os.getenv` read through the
# recorder too.
PROBE = r"""
import collections.abc, importlib, json, os, sys

read = []

class RecordingEnviron(collections.abc.MutableMapping):
    def __init__(self, real):
        self._real = real
    def __getitem__(self, key):
        if str(key).startswith("BINDING_SCHEDULER_"):
            read.append(key)
        return self._real[key]
    def __setitem__(self, key, value):
        self._real[key] = value
    def __delitem__(self, key):
        del self._real[key]
    def __iter__(self):
        return iter(self._real)
    def __len__(self):
        return len(self._real)
    # A copy of the whole environment (wsgiref's, under prometheus_client) asks for no variable by name.
    def items(self):
        return self._real.items()
    def values(self):
        return self._real.values()
    def copy(self):
        return dict(self._real)

os.environ = RecordingEnviron(os.environ)

def registered():
    handlers = []
    if "kopf" in sys.modules:  # otherwise nothing could register
        registry = sys.modules["kopf"].get_default_registry()
        for part in vars(registry).values():
            for handler in getattr(part, "get_all_handlers", lambda: [])():
                activity = getattr(handler, "activity", None)
                selector = getattr(handler, "selector", None)
                target = activity.value if activity is not None else selector.plural or selector.any_name
                handlers.append([type(handler).__name__, str(target)])
    return sorted(handlers)

results = {}
for module in sys.argv[1:]:
    del read[:]
    importlib.import_module(module)
    results[module] = {"handlers": registered(), "read": sorted(set(read))}
print(json.dumps(results))
"""

INVALID_ENVIRONMENT = {
    # Values no start could use (missing files, a malformed URL and name): an import that acted on them would
    # fail, or register the watch of a configuration; one that merely read them is caught by the recorder.
    "BINDING_SCHEDULER_KUBECONFIG": "/nonexistent/kubeconfig",
    "BINDING_SCHEDULER_MASTER": "not a url",
    "BINDING_SCHEDULER_CONFIG": "Not_A_Valid/Name",
    "BINDING_SCHEDULER_CONFIG_FILE": "/nonexistent/config.yaml",
}


def probe_all(modules: list[str], environment: dict[str, str] | None = None) -> dict[str, Any]:
    """Import `modules` in turn in a fresh interpreter whose environment holds only `environment` and the path to
    the package under test (no PYTHON* variables but that, no coverage hook, nothing of this process)."""
    env = {"PYTHONPATH": PACKAGE_PARENT, **(environment or {})}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *modules], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def probe(module: str, environment: dict[str, str] | None = None) -> dict[str, Any]:
    result = probe_all([module], environment)
    return result if "failed" in result else dict(result[module])


def kopf_own_handlers() -> list[list[str]]:
    """What Kopf's default registry holds before anything registers: its fallback logins (through the
    kubernetes client or pykube, when installed)."""
    result = probe("kopf")
    assert "failed" not in result, result
    handlers: list[list[str]] = result["handlers"]
    return handlers


def beyond(handlers: list[list[str]], kopf_own: list[list[str]]) -> list[list[str]]:
    """`handlers` less one of each of Kopf's own (ours may have the same kind and target: a login)."""
    rest = list(handlers)
    for handler in kopf_own:
        assert handler in rest, f"Kopf's own {handler} is gone: was the default registry replaced?"
        rest.remove(handler)
    return rest


def package_modules() -> list[str]:
    return sorted(
        info.name for info in pkgutil.walk_packages(binding_scheduler.__path__, f"{binding_scheduler.__name__}.")
    )


def test_imports_register_nothing_read_no_environment() -> None:
    modules = [binding_scheduler.__name__, *(m for m in package_modules() if m != KOPF_RUN_MODULE)]
    assert "binding_scheduler.operator" in modules and "binding_scheduler.operator.handlers" in modules
    kopf_own = kopf_own_handlers()
    results = probe_all(modules, INVALID_ENVIRONMENT)
    assert "failed" not in results, results
    added = {m: beyond(r["handlers"], kopf_own) for m, r in results.items() if r.get("handlers")}  # kopf imported
    registered = {module: handlers for module, handlers in added.items() if handlers}
    read = {module: result["read"] for module, result in results.items() if result.get("read")}
    assert {"registered": registered, "read": read} == {"registered": {}, "read": {}}


def test_kopf_run_module_registers_scheduler_handlers() -> None:
    kopf_own = kopf_own_handlers()
    result = probe(KOPF_RUN_MODULE)
    assert "failed" not in result, result
    assert beyond(result["handlers"], kopf_own) == sorted([
        ["ActivityHandler", "startup"],
        ["ActivityHandler", "authentication"],
        ["ActivityHandler", "cleanup"],
        ["WatchingHandler", "resourcebindings"],
        ["WatchingHandler", "clusterresourcebindings"],
        ["WatchingHandler", "clusters"],
    ])  # no index: cluster state comes from the routed watch stream alone
    assert "BINDING_SCHEDULER_CONFIG" in result["read"]  # configured from the environment, as documented


def test_kopf_run_watches_config_from_env() -> None:
    result = probe(KOPF_RUN_MODULE, {"BINDING_SCHEDULER_CONFIG": "my-scheduler"})
    assert "failed" not in result, result
    watched = sorted(target for kind, target in result["handlers"] if kind == "WatchingHandler")
    assert watched == ["clusterresourcebindings", "clusters", "resourcebindings", "schedulerconfigurations"]
