"""The examples have one source: the package's `binding_scheduler/examples/`. The repository's `examples/`
holds one relative link per file to it (a real folder, so `kubectl apply -f examples` reads it as well as
`examples/` does: kubectl does not descend into a folder given as a link without the trailing slash)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_EXAMPLES = ROOT / "operator" / "binding_scheduler" / "examples"


def test_examples_link_to_package_copies() -> None:
    """The example documents (YAML); the folder also holds a script of the repository's own,
    load-with-kubectl.sh, which the package does not ship."""
    folder = ROOT / "examples"
    assert folder.is_dir() and not folder.is_symlink()
    documents = [p for p in folder.iterdir() if p.suffix == ".yaml"]
    assert sorted(p.name for p in documents) == sorted(p.name for p in PACKAGE_EXAMPLES.iterdir())
    assert sorted(p.name for p in folder.iterdir() if p.suffix != ".yaml") == ["load-with-kubectl.sh"]
    for link in documents:
        assert link.is_symlink(), f"{link} is a copy: the package's examples/ is the one source"
        target = os.readlink(link)
        assert not os.path.isabs(target), target
        assert link.resolve() == (PACKAGE_EXAMPLES / link.name).resolve(), target
