"""A kubeconfig file pointing at the emulator (plain HTTP, no authentication)."""

from __future__ import annotations

from pathlib import Path

import yaml

CONTEXT = "devcluster"


def kubeconfig(url: str, namespace: str = "default") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": CONTEXT, "cluster": {"server": url}}],
        "users": [{"name": CONTEXT, "user": {"token": "devcluster"}}],
        "contexts": [{"name": CONTEXT,
                      "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}],
        "current-context": CONTEXT,
    }


def write_kubeconfig(path: Path, url: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(kubeconfig(url), sort_keys=False), encoding="utf-8")
    return path
