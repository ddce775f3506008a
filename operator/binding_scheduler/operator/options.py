"""How an operator instance is launched: from `binding-scheduler run` flags or, under `kopf run`, the
environment (BINDING_SCHEDULER_KUBECONFIG, _MASTER, _CONTEXT, _NAMESPACE, _CONFIG, _CONFIG_FILE, _IDENTITY,
_EVENT_PATH)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..model.overrides import NO_OVERRIDES, SpecOverrides

EVENT_PATHS = ("auto", "kopf")
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
    event_path: str = "auto"
    """`auto`: watch_guard's fast path where the installed Kopf is one it was verified against, else Kopf's own
    handlers; `kopf`: Kopf's own handlers always (`handlers` module)."""

    def __post_init__(self) -> None:
        if self.event_path not in EVENT_PATHS:
            raise ValueError(f"event path {self.event_path!r} is not one of {', '.join(EVENT_PATHS)}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> LaunchOptions:
        def get(name: str) -> str | None:
            return env.get(f"BINDING_SCHEDULER_{name}") or None

        event_path = get("EVENT_PATH") or "auto"
        if event_path not in EVENT_PATHS:
            raise ValueError(f"BINDING_SCHEDULER_EVENT_PATH: {event_path!r} is not one of {', '.join(EVENT_PATHS)}")
        return cls(
            kubeconfig=get("KUBECONFIG"),
            master=get("MASTER"),
            context=get("CONTEXT"),
            namespace=get("NAMESPACE"),
            config_name=get("CONFIG"),
            config_file=get("CONFIG_FILE"),
            identity=get("IDENTITY"),
            event_path=event_path,
        )
