"""Container images of one static binary each, built here as binding-scheduler's is (scripts/image.py's layer
and OCI archive writers; no container engine, no registry, no root needed):

    python3 -m scripts.binary_image karmada-scheduler   # docker.io/karmada/karmada-scheduler:<Karmada's version>
    python3 -m scripts.binary_image pause               # registry.k8s.io/pause:3.10.1
    python3 dev.py image --karmada-scheduler | --pause  # the same, through scripts/image.py's command

The contract is scripts/image.py's: the only line on stdout is `image: <reference> at <path> (oci-archive)`;
progress goes to stderr; a failure is one line on stderr and exit status 1, or 3 when this machine cannot build
the binary at all (no Go).

- karmada-scheduler: Karmada's own, as tools/karmada/build.sh builds it at the version tools/karmada/go.mod pins,
  at /bin/karmada-scheduler where Karmada's Deployment (artifacts/deploy/karmada-scheduler.yaml) runs it; with
  /etc/passwd and /etc/group (root, nobody), the host's CA certificates and a /tmp. Karmada's own image is
  Alpine with ca-certificates and tzdata, and runs as root: so does this one. Tagged as Karmada's, so that
  Karmada's manifest runs it with only its image's tag changed.
- pause: our own pod sandbox process (tools/node/pause, built by tools/node/build.sh) at /pause, as uid and gid
  65535, under the sandbox image's name kubeadm v1.35 configures (k8s.io/kubernetes cmd/kubeadm/app/constants'
  PauseVersion). containerd 1.6's CRI defaults to pause:3.6: a node names PAUSE as its `sandbox_image`.

Each archive is one layer, its entries owned by root, mtimes fixed (SOURCE_DATE_EPOCH or 0): the same inputs
give the same bytes, and a build whose inputs (the binary, the files, the recipe: this file and image.py) did
not change returns the archive already there. Archives live beside binding-scheduler's, in
`${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/image/<name>-<tag>.oci.tar`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from scripts.image import (
    ROOT,
    SYSTEM_PATH,
    BuildError,
    CannotBuild,
    cache_dir,
    epoch,
    locked,
    note,
    project,
    report_build,
    tag_of,
    tree,
    which,
    write_image_archive,
    write_layer,
)

KARMADA_GO_MOD = ROOT / "tools" / "karmada" / "go.mod"
KARMADA_BUILD = ROOT / "tools" / "karmada" / "build.sh"
NODE_BUILD = ROOT / "tools" / "node" / "build.sh"
KARMADA_SCHEDULER = "/bin/karmada-scheduler"
"""Where Karmada's image holds it, and its Deployment's `command:` runs it."""
PAUSE = "registry.k8s.io/pause:3.10.1"
"""The sandbox image kubeadm v1.35 configures (tests/deploy/test_binary_images.py reads it from Kubernetes' source)."""
PAUSE_USER = "65535:65535"
"""As Kubernetes' own pause image."""
PASSWD = ("root:x:0:0:root:/root:/sbin/nologin\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")
GROUP = "root:x:0:\nnobody:x:65534:\n"
HOST_CA_CERTIFICATES = Path("/etc/ssl/certs/ca-certificates.crt")
ELF_MACHINES = {62: "amd64", 183: "arm64"}
"""ELF's e_machine -> OCI's architecture."""
PT_INTERP = 3
"""The program header of a dynamically linked executable's loader."""


@dataclass(frozen=True)
class BinaryImage:
    """One image: a static binary, a few more files and folders, a config."""

    reference: str
    """Its full name, registry/repository:tag: `ctr images import` names the image so."""
    binary: Path
    """The static binary on this machine..."""
    path: str
    """...and where the image holds it."""
    version: str
    """The manifest's org.opencontainers.image.version."""
    config: dict[str, Any]
    """The image config's `config` (Entrypoint, User, Env, Labels, ...)."""
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    """Other files: path -> (contents, mode)."""
    folders: dict[str, int] = field(default_factory=dict)
    """Empty folders: path -> mode."""
    made_by: str = ""
    """The config's history entry."""

    @property
    def archive(self) -> Path:
        name = self.reference.rpartition(":")[0].rpartition("/")[2]
        return cache_dir() / f"{name}-{tag_of(self.reference)}.oci.tar"

    def key(self) -> str:
        """Everything the archive is made from: the recipe, this description, the binary and files' bytes."""
        digest = hashlib.sha256()
        for recipe in (Path(__file__), ROOT / "scripts" / "image.py"):
            digest.update(recipe.read_bytes())
        files = {path: [hashlib.sha256(data).hexdigest(), mode] for path, (data, mode) in self.files.items()}
        described = {"reference": self.reference, "path": self.path, "version": self.version,
                     "config": self.config, "files": files, "folders": self.folders, "made_by": self.made_by,
                     "epoch": epoch()}
        digest.update(json.dumps(described, sort_keys=True).encode())
        with self.binary.open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
        return digest.hexdigest()


def build_binary_image(image: BinaryImage) -> Path:
    """Build the image's archive (or find it built from the same inputs) and return its path."""
    arch = static_binary_arch(image.binary)
    archive = image.archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    with locked(archive.with_name(archive.name + ".lock")):
        stamp = archive.with_name(archive.name + ".inputs")
        key = image.key()
        if archive.exists() and stamp.exists() and stamp.read_text() == key:
            note(f"{image.reference} unchanged since it was built ({archive.stat().st_size / 1e6:.1f} MB)")
            return archive
        started = time.monotonic()
        stamp.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory(prefix="build-", dir=archive.parent) as folder:
            work = Path(folder)
            rootfs = work / "rootfs"
            stage(image, rootfs)
            layer = write_layer(rootfs, tree(rootfs), work / "layer.tar.gz", owner=(0, 0))
            created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch()))
            config = {
                "created": created,
                "architecture": arch,
                "os": "linux",
                "config": image.config,
                "rootfs": {"type": "layers", "diff_ids": [layer.diff_id]},
                "history": [{"created": created, "created_by": f"python3 -m scripts.binary_image: {image.made_by}"}],
            }
            write_image_archive(config, [layer], work, work / "archive.tar", reference=image.reference,
                                version=image.version)
            (work / "archive.tar").replace(archive)
        stamp.write_text(key)
        note(f"{image.reference} built in {time.monotonic() - started:.1f} s: "
             f"{archive.stat().st_size / 1e6:.1f} MB archive, {layer.unpacked / 1e6:.1f} MB unpacked")
        return archive


def stage(image: BinaryImage, rootfs: Path) -> None:
    """The image's root in a folder: each folder 0755 unless the image says otherwise, the binary 0755."""
    entries: dict[str, tuple[bytes | Path, int]] = {**image.files, image.path: (image.binary, 0o755)}
    folders = {str(parent) for path in [*image.folders, *entries] for parent in PurePosixPath(path).parents}
    rootfs.mkdir()
    for folder in sorted((folders | set(image.folders)) - {"/"}):  # each after its parent
        target = rootfs / folder.lstrip("/")
        target.mkdir()
        target.chmod(image.folders.get(folder, 0o755))
    for path, (contents, mode) in entries.items():
        target = rootfs / path.lstrip("/")
        if isinstance(contents, Path):
            shutil.copyfile(contents, target)
        else:
            target.write_bytes(contents)
        target.chmod(mode)


def static_binary_arch(binary: Path) -> str:
    """The OCI architecture of a statically linked 64-bit ELF executable; BuildError for anything else."""
    try:
        with binary.open("rb") as handle:
            header = handle.read(64)
            if len(header) < 64 or header[:4] != b"\x7fELF" or header[4:6] != b"\x02\x01":
                raise BuildError(f"{binary} is not a 64-bit little-endian ELF executable")
            (machine,) = struct.unpack_from("<H", header, 18)
            (table,) = struct.unpack_from("<Q", header, 32)
            size, count = struct.unpack_from("<HH", header, 54)
            handle.seek(table)
            headers = handle.read(size * count)
    except OSError as error:
        raise BuildError(f"cannot read {binary}: {error.strerror}") from None
    if any(struct.unpack_from("<I", headers, index * size)[0] == PT_INTERP for index in range(count)):
        raise BuildError(f"{binary} is dynamically linked: the image holds no loader (build it with CGO_ENABLED=0)")
    if machine not in ELF_MACHINES:
        raise BuildError(f"{binary} is for ELF machine {machine}, which no image here is for")
    return ELF_MACHINES[machine]


def built_by(script: Path) -> Path:
    """Run a tools/*/build.sh (it rebuilds nothing unchanged) and return the directory it prints."""
    if which("go") is None:
        raise CannotBuild(f"{script.relative_to(ROOT)} needs Go, and go is not on PATH")
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    lines = result.stdout.split()
    if result.returncode != 0 or not lines:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise BuildError(f"{script.relative_to(ROOT)} failed (exit {result.returncode}): {last}")
    return Path(lines[-1])


def check_version(binary: Path, args: Sequence[str], expected: str) -> None:
    """The binary says the version its image is tagged with."""
    result = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=30, check=False)
    if result.returncode != 0 or expected not in result.stdout:
        raise BuildError(f"`{binary.name} {' '.join(args)}` does not say {expected}: {result.stdout.strip()!r}")


# --- the two images --------------------------------------------------------------------------------------


def karmada_version() -> str:
    """The Karmada release tools/karmada/go.mod pins (what tools/karmada/build.sh builds)."""
    match = re.search(r"^\s*github\.com/karmada-io/karmada\s+(v\S+)", KARMADA_GO_MOD.read_text(), re.MULTILINE)
    if match is None:
        raise BuildError(f"{KARMADA_GO_MOD.relative_to(ROOT)} requires no github.com/karmada-io/karmada")
    return match[1]


def karmada_scheduler_reference() -> str:
    return f"docker.io/karmada/karmada-scheduler:{karmada_version()}"


def karmada_scheduler_image(binary: Path | None = None) -> Path:
    """Karmada's karmada-scheduler (tools/karmada/build.sh's, unless `binary` is given) as Karmada's image."""
    release = karmada_version()
    binary = binary or built_by(KARMADA_BUILD) / "karmada-scheduler"
    check_version(binary, ["version"], f'GitVersion:"{release}"')
    if not HOST_CA_CERTIFICATES.is_file():
        raise BuildError(f"the image takes the host's CA certificates, and there is no {HOST_CA_CERTIFICATES}")
    labels = {"org.opencontainers.image.title": "karmada-scheduler", "org.opencontainers.image.version": release,
              "org.opencontainers.image.source": "https://github.com/karmada-io/karmada",
              "org.opencontainers.image.licenses": "Apache-2.0"}
    return build_binary_image(BinaryImage(
        reference=karmada_scheduler_reference(), binary=binary, path=KARMADA_SCHEDULER, version=release,
        config={"Entrypoint": [KARMADA_SCHEDULER], "Env": [f"PATH={SYSTEM_PATH}"], "WorkingDir": "/",
                "Labels": labels},
        files={"/etc/passwd": (PASSWD.encode(), 0o644), "/etc/group": (GROUP.encode(), 0o644),
               str(HOST_CA_CERTIFICATES): (HOST_CA_CERTIFICATES.read_bytes(), 0o644)},
        folders={"/tmp": 0o1777},
        made_by=f"karmada-scheduler {release} (tools/karmada/build.sh) at {KARMADA_SCHEDULER}; /etc/passwd, "
                f"/etc/group (root, nobody); the host's CA certificates; /tmp",
    ))


def pause_image(binary: Path | None = None) -> Path:
    """Our pause (tools/node/build.sh's, unless `binary` is given) as the sandbox image PAUSE."""
    tag = tag_of(PAUSE)
    binary = binary or pause_binary()
    check_version(binary, ["-v"], f"pause {tag} ")
    labels = {"org.opencontainers.image.title": "pause", "org.opencontainers.image.version": tag,
              "org.opencontainers.image.description": "binding-scheduler's pod sandbox process (tools/node/pause)",
              "org.opencontainers.image.licenses": str(project()["license"])}
    return build_binary_image(BinaryImage(
        reference=PAUSE, binary=binary, path="/pause", version=tag,
        config={"User": PAUSE_USER, "Entrypoint": ["/pause"], "WorkingDir": "/", "Labels": labels},
        made_by=f"pause {tag} (tools/node/build.sh) at /pause, run as {PAUSE_USER}",
    ))


def pause_binary() -> Path:
    return built_by(NODE_BUILD) / "pause"


IMAGES = {"karmada-scheduler": (karmada_scheduler_reference, karmada_scheduler_image),
          "pause": (lambda: PAUSE, pause_image)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m scripts.binary_image", description=__doc__.split("\n\n")[0])
    parser.add_argument("image", choices=sorted(IMAGES))
    args = parser.parse_args(argv)
    reference, build = IMAGES[args.image]
    return report_build(lambda: f"image: {reference()} at {build()} (oci-archive)")


if __name__ == "__main__":
    sys.exit(main())
