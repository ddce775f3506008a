"""How an operator instance is launched: from `binding-scheduler run` flags or, under `kopf run`, the
environment (BINDING_SCHEDULER_KUBECONFIG, _MASTER, _CONTEXT, _NAMESPACE, _CONFIG, _CONFIG_FILE, _IDENTITY)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..model.overrides import NO_OVERRIDES, SpecOverrides

DEFAULT_NAMESPACE = "karmada-system"
"""Where `--config NAME` is read without `--namespace`: the namespace `config from-flags` writes and the Lease's
default, whatever namespace the kubeconfig's context names."""


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    kubeconfig: str | None = None
    master: str | None = None
    """The API server's URL, replacing the kubeconfig's server (Karmada's --master)."""
    context: str | None = None
    namespace: str | None = None
    config_name: str | None = None
    config_file: str | None = None
    identity: str | None = None
    overrides: SpecOverrides = NO_OVERRIDES
    """Karmada's flags given to `run`: they win over the configuration, every version of it."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> LaunchOptions:
        def get(name: str) -> str | None:
            return env.get(f"BINDING_SCHEDULER_{name}") or None

        return cls(
            kubeconfig=get("KUBECONFIG"),
            master=get("MASTER"),
            context=get("CONTEXT"),
            namespace=get("NAMESPACE"),
            config_name=get("CONFIG"),
            config_file=get("CONFIG_FILE"),
            identity=get("IDENTITY"),
        )
