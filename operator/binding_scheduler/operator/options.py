"""How an operator instance is launched: from `binding-scheduler run` flags or, under `kopf run`, the
environment (BINDING_SCHEDULER_KUBECONFIG, _CONTEXT, _NAMESPACE, _CONFIG, _CONFIG_FILE)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    config_name: str | None = None
    config_file: str | None = None
    identity: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> LaunchOptions:
        def get(name: str) -> str | None:
            return env.get(f"BINDING_SCHEDULER_{name}") or None

        return cls(
            kubeconfig=get("KUBECONFIG"),
            context=get("CONTEXT"),
            namespace=get("NAMESPACE"),
            config_name=get("CONFIG"),
            config_file=get("CONFIG_FILE"),
            identity=get("IDENTITY"),
        )
