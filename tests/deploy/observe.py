"""What the deploy tests read off an image archive (its OCI index, manifests and config) or off a running
container (the status of an HTTP endpoint it serves)."""

from __future__ import annotations

import json
import tarfile
import urllib.request
from typing import Any


def blob_name(descriptor: dict[str, Any]) -> str:
    return f"blobs/sha256/{str(descriptor['digest']).removeprefix('sha256:')}"


def read_json(tar: tarfile.TarFile, name: str) -> dict[str, Any]:
    member = tar.extractfile(name)
    assert member is not None, name
    return dict(json.load(member))


def get(port: int, path: str) -> int:
    """The HTTP status of GET 127.0.0.1:port/path, 0 when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
            return int(answer.status)
    except OSError:
        return 0
