"""binding-scheduler's container image, built on this machine without a container engine or a registry.

    python3 dev.py image              # build it (or find it built from the same inputs); prints the contract line
    python3 dev.py image --refresh    # debootstrap the base again first (Debian's newest security updates)
    python3 dev.py image --karmada-scheduler | --pause   # an image of one static binary (scripts/binary_image.py)

The contract: the only line on stdout is `image: binding-scheduler:<version> at <path> (oci-archive)`; progress
goes to stderr; a failure is one line on stderr and exit status 1, or exit status 3 when this machine cannot
build images at all (not root, or neither debootstrap nor apt-get to install it).

How. The root filesystem is Debian's own: `debootstrap --variant=minbase --include=python3,tini` of the host's
suite, upgraded from the suite's -updates and -security, trimmed, the user added (the *base*, cached: debootstrap
takes a minute or more). The project's dependencies go into the base's `/usr/local/lib/python3.X/dist-packages`
with .venv's pip (wheels for the root's Python, glibc and architecture, at the versions .venv holds: the image
runs what the tests ran): that root is the first layer (the *runtime*, cached with its compressed layer, rebuilt
when the pins change). Each build hard-links the runtime's root, installs the project's wheel, the launchers and
`/bin/karmada-scheduler`, and makes the second layer of what it added. Every .pyc is hash-based and never
checked against its source: valid on a read-only root whatever the files' mtimes. The OCI image layout
(oci-layout, index.json, blobs) is tarred into one file, `binding-scheduler-<version>.oci.tar`. Everything lives
in `${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/image/`, outside the clone. Layers are deterministic
for a given base and tree (sorted entries, mtimes fixed at SOURCE_DATE_EPOCH or 0, gzip without a timestamp); a
build whose inputs did not change returns the archive already there.

The image says what the Containerfile says (which stays, for Docker and buildah users): the constants below are
the recipe, and tests/deploy/test_image_recipes.py fails when the Containerfile's final stage says otherwise.
"""

from __future__ import annotations

import argparse
import fcntl
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[1]

NAME = "binding-scheduler"
UID = GID = 10001
USER = f"{UID}:{GID}"
USER_NAME = "scheduler"
TINI = "/usr/bin/tini"
ENTRYPOINT = (TINI, "--", NAME)
CMD = ("run",)
PORTS = (8080, 10351)
"""Metrics and health (docs/metrics.md)."""
KARMADA_SCHEDULER = "/usr/local/bin/karmada-scheduler"
KARMADA_SCHEDULER_LINK = "/bin/karmada-scheduler"
"""karmada-scheduler's path in Karmada's image: Deployments written for it keep their `command:`."""
WRAPPER = ROOT / "deploy" / "karmada-scheduler"
ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
"""The Containerfile's ENV; the image config adds PATH and LANG, which its base image sets."""
PACKAGES = ("python3", "tini")
"""Debian packages debootstrap adds to minbase."""
BASE_RECIPE = 2
RUNTIME_RECIPE = 1
"""Bump when the base's or the runtime's recipe changes: each is part of its cache key."""
FORBIDDEN = ("pip", "pip3", "gcc", "cc", "c++", "g++", "cpp", "make")
"""Commands the image must not have (a compiler, an installer), nor a `pip` package."""
EXIT_CANNOT = 3
"""The exit status when this machine cannot build images at all (dev.py test then leaves the tier to skip)."""

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
WHEEL_MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}
"""Debian's architecture -> the machine in manylinux wheel tags (OCI uses Debian's names)."""
OLDEST_MANYLINUX = 17
LICENSE_FILES = ("LICEN[CS]E*", "COPYING*", "NOTICE*", "AUTHORS*")
"""setuptools' default license-files: such files at the root go into the wheel."""
SKIPPED_CONTENTS = ("dev", "proc", "sys")
"""Directories kept empty in the layers: the runtime mounts them."""
TRIMMED = ("var/lib/apt/lists", "var/cache/apt", "usr/share/man", "usr/share/info", "usr/share/locale",
           "usr/share/lintian", "usr/share/linda", "tmp", "var/tmp")
"""Emptied in the base: nothing in the image reads them at run time. Logs lose their files, not their folders."""


class BuildError(Exception):
    """A step failed: the message is the one line the command prints."""


class CannotBuild(BuildError):
    """This machine cannot build images at all (not root, no way to get debootstrap)."""


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "binding-scheduler"
    return Path(os.environ.get("BINDING_SCHEDULER_CACHE") or default) / "image"


def project() -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return data


def version() -> str:
    return str(project()["version"])


def archive_path() -> Path:
    return cache_dir() / f"{NAME}-{version()}.oci.tar"


def contract_line(archive: Path) -> str:
    return f"image: {NAME}:{version()} at {archive} (oci-archive)"


def epoch() -> int:
    """The layers' mtimes and the config's `created`: SOURCE_DATE_EPOCH, else 0 (as ko and Bazel do)."""
    return int(os.environ.get("SOURCE_DATE_EPOCH") or 0)


def note(message: str) -> None:
    print(f"image: {message}", file=sys.stderr, flush=True)


# --- the host's tools ------------------------------------------------------------------------------------


def which(command: str) -> str | None:
    """Also in the sbin directories, which a non-login root shell may lack on PATH."""
    return shutil.which(command, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")


def ensure_commands(commands: Mapping[str, str]) -> None:
    """Install the Debian packages of the missing commands (command -> package) with apt-get, as root."""
    missing = sorted({package for command, package in commands.items() if which(command) is None})
    if not missing:
        return
    if os.geteuid() != 0:
        raise CannotBuild(f"needs {', '.join(missing)} and root to use them: run as root (apt-get installs them)")
    if which("apt-get") is None:
        raise CannotBuild(f"needs {', '.join(missing)}: install them (there is no apt-get here to do it)")
    note(f"installing {' '.join(missing)} with apt-get")
    install = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(install, capture_output=True, env=environment, check=False).returncode == 0:
        return
    run(["apt-get", "update"], what="apt-get update", env=environment)
    run(install, what=f"apt-get install {' '.join(missing)}", env=environment)


def run(cmd: Sequence[str], *, what: str, env: Mapping[str, str] | None = None, log: Path | None = None) -> str:
    """Run a command; on failure raise one line naming it, its status and its last line of output."""
    result = subprocess.run(list(cmd), capture_output=True, text=True, env=env, check=False)
    if log is not None:
        log.write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        last = lines[-1].strip() if lines else "no output"
        where = f"; full log: {log}" if log is not None else ""
        raise BuildError(f"{what} failed (exit {result.returncode}): {last}{where}")
    return result.stdout


def chroot(rootfs: Path, *cmd: str, what: str) -> str:
    """A command inside the root filesystem, with an environment of its own (not .venv's)."""
    environment = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"}
    return run(["chroot", str(rootfs), *cmd], what=what, env=environment)


def pip(*args: str, what: str) -> str:
    """.venv's pip: the image gets no pip of its own."""
    return run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "-q"], what=what)


# --- Debian: the suite, the mirrors ----------------------------------------------------------------------


@dataclass(frozen=True)
class Debian:
    suite: str
    mirror: str
    security: str
    arch: str

    def key(self) -> str:
        recipe = {"suite": self.suite, "mirror": self.mirror, "security": self.security, "arch": self.arch,
                  "packages": PACKAGES, "recipe": BASE_RECIPE, "epoch": epoch()}
        return digest_of(json.dumps(recipe, sort_keys=True).encode())


def digest_of(*parts: bytes) -> str:
    """A short cache key."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()[:12]


def host_debian() -> Debian:
    """The host's suite, mirror and security mirror (Debian's defaults where the host is not Debian)."""
    release = os_release()
    is_debian = release.get("ID") == "debian"
    suite = (release.get("VERSION_CODENAME", "") if is_debian else "") or "bookworm"
    sources = apt_sources() if is_debian else []
    mirror = next((uri for uri, suites in sources if suite in suites), "http://deb.debian.org/debian")
    security = next((uri for uri, suites in sources if f"{suite}-security" in suites),
                    "http://deb.debian.org/debian-security")
    arch = "amd64"
    if which("dpkg") is not None:
        arch = run(["dpkg", "--print-architecture"], what="dpkg --print-architecture").strip()
    return Debian(suite, mirror.rstrip("/"), security.rstrip("/"), arch)


def os_release() -> dict[str, str]:
    path = Path("/etc/os-release")
    lines = path.read_text().splitlines() if path.exists() else []
    return {key: value.strip('"') for key, _, value in (line.partition("=") for line in lines) if value}


def apt_sources() -> list[tuple[str, list[str]]]:
    """(URI, suites) of every `deb` source in /etc/apt/sources.list.d/*.sources (deb822) and sources.list."""
    found: list[tuple[str, list[str]]] = []
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields = {key.strip(): value.strip() for key, _, value in
                      (line.partition(":") for line in stanza.splitlines() if line and line[0] not in "# \t")}
            if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no":
                found += [(uri, fields.get("Suites", "").split()) for uri in fields.get("URIs", "").split()]
    legacy = Path("/etc/apt/sources.list")
    for line in legacy.read_text().splitlines() if legacy.exists() else []:
        words = re.sub(r"\[[^]]*\]", "", line).split()
        if len(words) >= 3 and words[0] == "deb":
            found.append((words[1], [words[2]]))
    return found


# --- the base: Debian, trimmed, with the user ------------------------------------------------------------


@dataclass(frozen=True)
class Base:
    home: Path
    python: str
    """The root filesystem's Python, major.minor."""
    glibc: tuple[int, int]
    arch: str
    suite: str
    packages: dict[str, str]
    """The Debian versions of PACKAGES in the base."""

    @property
    def rootfs(self) -> Path:
        return self.home / "rootfs"

    @property
    def site_packages(self) -> str:
        """Debian's python3 has /usr/local/lib/python3.X/dist-packages on sys.path, for what is not Debian's."""
        return f"/usr/local/lib/python{self.python}/dist-packages"

    def key(self) -> bytes:
        return (self.home / "base.json").read_bytes()


def ensure_base(debian: Debian, *, refresh: bool) -> Base:
    """The cached base, debootstrapped (a minute or more) when missing or asked to refresh."""
    home = cache_dir() / f"{debian.suite}-{debian.key()}"
    if refresh or not (home / "base.json").exists():
        ensure_commands({"debootstrap": "debootstrap", "chroot": "coreutils"})
        make_base(debian, home)
    data = json.loads((home / "base.json").read_text())
    major, minor = data["glibc"]
    return Base(home, data["python"], (major, minor), data["arch"], data["suite"], data["packages"])


def make_base(debian: Debian, home: Path) -> None:
    started = time.monotonic()
    note(f"debootstrapping Debian {debian.suite} (minbase, {', '.join(PACKAGES)}) from {debian.mirror} into "
         f"{home} (a minute or more; cached for later builds)")
    with building(home) as folder:
        rootfs = folder / "rootfs"
        run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", f"--arch={debian.arch}",
             debian.suite, str(rootfs), debian.mirror],
            what=f"debootstrap {debian.suite}", log=folder / "debootstrap.log")
        upgrade(rootfs, debian)
        add_user(rootfs)
        trim(rootfs)
        compile_python(rootfs, ["/usr/lib"])
        (folder / "base.json").write_text(json.dumps(describe(rootfs, debian), indent=2) + "\n")
    note(f"base ready in {time.monotonic() - started:.0f} s")


@contextmanager
def building(home: Path, *, prune: bool = False) -> Iterator[Path]:
    """A folder beside `home` that replaces it when the block succeeds and is removed when it fails; with
    `prune`, the other versions beside it (the same name up to its last '-') are removed then too."""
    folder = home.with_name(home.name + ".building")
    remove_tree(folder)
    folder.mkdir(parents=True)
    try:
        yield folder
    except BaseException:
        remove_tree(folder)
        raise
    remove_tree(home)
    folder.rename(home)
    stem = home.name.rpartition("-")[0]
    for other in home.parent.glob(f"{stem}-*") if prune else []:
        if other != home and other.is_dir() and not other.name.endswith(".building"):
            remove_tree(other)


def upgrade(rootfs: Path, debian: Debian) -> None:
    """debootstrap installs the suite as released: add its -updates and -security and upgrade from them."""
    keyring = "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    (rootfs / "etc" / "apt" / "sources.list.d" / "debian.sources").write_text(
        f"Types: deb\nURIs: {debian.mirror}\nSuites: {debian.suite} {debian.suite}-updates\nComponents: main\n"
        f"{keyring}\nTypes: deb\nURIs: {debian.security}\nSuites: {debian.suite}-security\nComponents: main\n"
        f"{keyring}"
    )
    (rootfs / "etc" / "apt" / "sources.list").unlink(missing_ok=True)
    chroot(rootfs, "apt-get", "update", what=f"apt-get update in the {debian.suite} root")
    chroot(rootfs, "apt-get", "upgrade", "-y", "--no-install-recommends",
           what=f"apt-get upgrade in the {debian.suite} root")
    chroot(rootfs, "apt-get", "clean", what="apt-get clean")


def add_user(rootfs: Path) -> None:
    """As the Containerfile does, with shadow's own tools (passwd, group, shadow and gshadow agree)."""
    chroot(rootfs, "groupadd", "--gid", str(GID), USER_NAME, what="groupadd")
    chroot(rootfs, "useradd", "--uid", str(UID), "--gid", str(GID), "--no-create-home", "--no-log-init",
           "--shell", "/usr/sbin/nologin", USER_NAME, what="useradd")


def trim(rootfs: Path) -> None:
    """Package lists, caches, logs, manuals and translations go; so do the docs but the copyright files. The
    host's resolv.conf and hostname (debootstrap copied them) are emptied: the runtime provides its own."""
    for relative in TRIMMED:
        folder = rootfs / relative
        for child in folder.iterdir() if folder.is_dir() and not folder.is_symlink() else []:
            remove_path(child)
    for path in sorted((rootfs / "usr" / "share" / "doc").rglob("*"), reverse=True):
        if (path.is_symlink() or path.is_file()) and path.name != "copyright":
            path.unlink()
        elif path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
    leftovers = [*rootfs.glob("var/lib/dpkg/*-old"), *rootfs.glob("var/cache/debconf/*-old")]
    for path in [*leftovers, *(path for path in (rootfs / "var" / "log").rglob("*") if not path.is_dir())]:
        path.unlink()
    for name in ("resolv.conf", "hostname"):
        (rootfs / "etc" / name).unlink(missing_ok=True)
        (rootfs / "etc" / name).write_text("")


def compile_python(rootfs: Path, folders: Sequence[str]) -> None:
    """Hash-based .pyc that Python never checks against the sources: the root is read-only at run time, and
    the layers' fixed mtimes would make timestamp-based .pyc (Debian's postinst writes those) stale, so each
    start would compile every module again, in memory."""
    chroot(rootfs, "python3", "-m", "compileall", "-q", "-f", "-j0", "--invalidation-mode", "unchecked-hash",
           *folders, what="compileall")


def describe(rootfs: Path, debian: Debian) -> dict[str, Any]:
    probe = "import platform, sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}', platform.libc_ver()[1])"
    python, glibc = chroot(rootfs, "python3", "-c", probe, what="python3 in the root").split()
    query = chroot(rootfs, "dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *PACKAGES, what="dpkg-query")
    packages = dict(line.split(" ", 1) for line in query.splitlines())
    major, minor = (int(part) for part in glibc.split(".")[:2])
    return {"suite": debian.suite, "arch": debian.arch, "python": python, "glibc": [major, minor],
            "packages": packages}


# --- layers ----------------------------------------------------------------------------------------------


class Sink(Protocol):
    def write(self, data: bytes, /) -> int: ...


class Digesting(io.RawIOBase):
    """A write-only stream that hashes and counts what passes through to `out`."""

    def __init__(self, out: Sink) -> None:
        super().__init__()
        self.out = out
        self.sha256 = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.sha256.update(chunk)
        self.size += len(chunk)
        self.out.write(chunk)
        return len(chunk)

    def digest(self) -> str:
        return f"sha256:{self.sha256.hexdigest()}"


@dataclass(frozen=True)
class Layer:
    blob: Path
    diff_id: str
    """The digest of the uncompressed tar (the config's rootfs.diff_ids)."""
    digest: str
    size: int
    unpacked: int

    def descriptor(self) -> dict[str, Any]:
        return {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": self.digest,
                "size": self.size}


def tree(root: Path, *, top: bool = True) -> Iterator[Path]:
    """Every path below `root`, sorted, each directory before what it holds; no symlink is followed; the
    contents of the root's /dev, /proc and /sys are left out."""
    for entry in sorted(os.scandir(root), key=lambda entry: entry.name):
        path = Path(entry.path)
        yield path
        if entry.is_dir(follow_symlinks=False) and not (top and entry.name in SKIPPED_CONTENTS):
            yield from tree(path, top=False)


def write_layer(root: Path, paths: Iterable[Path], blob: Path, *, owner: tuple[int, int] | None = None) -> Layer:
    """These paths of `root` as one gzip'd tar (modes as they are, mtimes fixed; owners as they are, or every
    entry's uid and gid `owner`)."""
    with blob.open("wb") as out:
        compressed = Digesting(out)
        with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=0, compresslevel=6) as zipped:
            plain = Digesting(zipped)
            with tarfile.open(fileobj=plain, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for path in paths:
                    add_to_layer(tar, root, path, owner)
    return Layer(blob, plain.digest(), compressed.digest(), compressed.size, plain.size)


def add_to_layer(tar: tarfile.TarFile, root: Path, path: Path, owner: tuple[int, int] | None = None) -> None:
    info = tar.gettarinfo(str(path), arcname=path.relative_to(root).as_posix())
    if info is None or info.ischr() or info.isblk() or info.isfifo():
        return
    info.mtime = epoch()
    info.uname = info.gname = ""
    if owner is not None:
        info.uid, info.gid = owner
    if info.isreg():
        with path.open("rb") as handle:
            tar.addfile(info, handle)
    else:
        tar.addfile(info)


def added_paths(root: Path, below: Path) -> list[Path]:
    """The paths of `root` that `below` (the root it was hard-linked from) lacks or holds as another file, with
    the directories leading to them: what a layer on top of `below` must hold."""
    found: set[Path] = set()
    for path in tree(root):
        relative = path.relative_to(root)
        if added(path, below / relative):
            found.add(relative)
            found.update(relative.parents)
    found.discard(Path("."))
    return [root / relative for relative in sorted(found, key=lambda relative: relative.parts)]


def added(path: Path, under: Path) -> bool:
    """New, or a file other than the one hard-linked from below (a directory there is the same directory)."""
    if not os.path.lexists(under):
        return True
    if path.is_dir() and not path.is_symlink():
        return False
    return not os.path.samestat(os.lstat(path), os.lstat(under))


def load_layer(home: Path) -> Layer:
    data = json.loads((home / "layer.json").read_text())
    return Layer(home / "layer.tar.gz", data["diff_id"], data["digest"], data["size"], data["unpacked"])


# --- the runtime: the base and the project's dependencies ------------------------------------------------


def ensure_runtime(base: Base) -> Path:
    """The cached runtime (its root and its layer), built when the base or the pins changed."""
    requirements = "\n".join(str(requirement) for requirement in project()["dependencies"])
    key = digest_of(base.key(), requirements.encode(), venv_constraints().encode(),
                    json.dumps(wheel_platforms(base)).encode(), f"{RUNTIME_RECIPE} {epoch()}".encode())
    home = base.home / f"runtime-{key}"
    if not (home / "layer.json").exists():
        make_runtime(base, home, requirements)
    return home


def make_runtime(base: Base, home: Path, requirements: str) -> None:
    started = time.monotonic()
    note(f"installing the dependencies into a copy of the base: {home}")
    with building(home, prune=True) as folder:
        rootfs = folder / "rootfs"
        run(["cp", "-a", str(base.rootfs), str(rootfs)], what="copying the base")
        (folder / "requirements.txt").write_text(requirements + "\n")
        pip_install(rootfs, base, folder, "-r", str(folder / "requirements.txt"))
        compile_python(rootfs, [base.site_packages])
        check_no_tools(rootfs, base)
        layer = write_layer(rootfs, tree(rootfs), folder / "layer.tar.gz")
        (folder / "layer.json").write_text(json.dumps(
            {"diff_id": layer.diff_id, "digest": layer.digest, "size": layer.size, "unpacked": layer.unpacked}))
    note(f"runtime layer ready in {time.monotonic() - started:.0f} s ({layer.size / 1e6:.1f} MB)")


def pip_install(rootfs: Path, base: Base, work: Path, *what: str, deps: bool = True) -> None:
    """Into the root's dist-packages: wheels only, for its Python, glibc and architecture, at .venv's versions."""
    constraints = work / "constraints.txt"
    constraints.write_text(venv_constraints())
    target = rootfs / base.site_packages.lstrip("/")
    pip("install", "--no-compile", "--target", str(target), "--only-binary=:all:", "--implementation", "cp",
        "--python-version", base.python, "--abi", f"cp{base.python.replace('.', '')}",
        *(arg for platform in wheel_platforms(base) for arg in ("--platform", platform)),
        *([] if deps else ["--no-deps"]), "--constraint", str(constraints), *what,
        what=f"pip install {' '.join(what)} (for Python {base.python}, glibc {base.glibc[0]}.{base.glibc[1]})")
    shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts for .venv's python: the launchers replace them


def wheel_platforms(base: Base) -> list[str]:
    """Every manylinux tag the root's glibc runs (pip takes them as given, oldest spellings included)."""
    machine = WHEEL_MACHINES.get(base.arch)
    if machine is None:
        raise BuildError(f"no wheel platform known for Debian's architecture {base.arch}")
    major, minor = base.glibc
    tags = [f"manylinux_{major}_{glibc}_{machine}" for glibc in range(minor, OLDEST_MANYLINUX - 1, -1)]
    return [*tags, f"manylinux2014_{machine}", f"manylinux2010_{machine}", f"manylinux1_{machine}"]


def venv_constraints() -> str:
    """Every distribution .venv holds, pinned (the project itself left out)."""
    pins = {dist.metadata["Name"]: dist.version for dist in metadata.distributions() if dist.metadata["Name"]}
    return "".join(f"{name}=={pin}\n" for name, pin in sorted(pins.items()) if name != NAME)


def check_no_tools(rootfs: Path, base: Base) -> None:
    """No compiler, no installer."""
    found = [f"/{folder}/{name}" for folder in ("usr/bin", "usr/local/bin", "usr/sbin")
             for name in FORBIDDEN if os.path.lexists(rootfs / folder / name)]
    for folder in (base.site_packages, f"/usr/lib/python{base.python}", "/usr/lib/python3/dist-packages"):
        if os.path.lexists(rootfs / folder.lstrip("/") / "pip"):
            found.append(f"{folder}/pip")
    if found:
        raise BuildError(f"the image must hold no compiler or installer, but has {', '.join(found)}")


# --- the project -----------------------------------------------------------------------------------------


def project_sources() -> list[Path]:
    """What goes into the wheel: pyproject.toml, the readme, license files, operator/ (caches left out)."""
    top = [ROOT / "pyproject.toml", ROOT / str(project()["readme"])]
    top += sorted(path for pattern in LICENSE_FILES for path in ROOT.glob(pattern) if path.is_file())
    ignored = {"__pycache__", ".mypy_cache", ".pytest_cache"}
    tree_files = sorted(
        path for path in (ROOT / "operator").rglob("*")
        if path.is_file() and path.suffix != ".pyc" and not ignored.intersection(path.parts)
        and not any(part.endswith(".egg-info") for part in path.relative_to(ROOT).parts)
    )
    return [*top, *tree_files]


def build_wheel(work: Path) -> Path:
    """The project's wheel, from a copy of its sources: setuptools keeps a build/ folder where it builds, and
    a module deleted from the tree would live on in the clone's."""
    source = work / "source"
    for path in project_sources():
        target = source / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    isolation = ["--no-build-isolation"] if setuptools_suffices() else []
    pip("wheel", "--no-deps", *isolation, "-w", str(work / "wheels"), str(source), what="pip wheel (the project)")
    return next((work / "wheels").glob("*.whl"))


def setuptools_suffices() -> bool:
    """Whether .venv's setuptools meets pyproject's build requirement (`setuptools>=N`): then the wheel is
    built without an isolated environment, seconds faster."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    match = re.fullmatch(r"setuptools\s*>=\s*(\d+)", " ".join(requires).strip())
    try:
        installed = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        return False
    return match is not None and int(installed.split(".")[0]) >= int(match[1])


def install_project(rootfs: Path, base: Base, work: Path) -> None:
    """The wheel (its dependencies are the runtime's), its launchers, and karmada-scheduler's path."""
    pip_install(rootfs, base, work, str(build_wheel(work)), deps=False)
    forget_origin(rootfs / base.site_packages.lstrip("/"))
    for script, entry in project()["scripts"].items():
        write_launcher(rootfs / "usr" / "local" / "bin" / script, entry)
    target = rootfs / KARMADA_SCHEDULER.lstrip("/")
    shutil.copyfile(WRAPPER, target)
    target.chmod(0o755)
    resolve_inside(rootfs, KARMADA_SCHEDULER_LINK).symlink_to(KARMADA_SCHEDULER)
    packages = rootfs / base.site_packages.lstrip("/")
    compile_python(rootfs, [f"{base.site_packages}/{path.name}" for path in packages.glob(
        f"{project_name_in_paths()}*")])


def forget_origin(packages: Path) -> None:
    """pip records where the wheel came from (PEP 610's direct_url.json): a temporary folder of this machine,
    which would make every build differ. The record goes, and its line in RECORD."""
    for info in packages.glob(f"{project_name_in_paths()}-*.dist-info"):
        (info / "direct_url.json").unlink(missing_ok=True)
        record = info / "RECORD"
        lines = record.read_text().splitlines(keepends=True)
        record.write_text("".join(line for line in lines if not line.startswith(f"{info.name}/direct_url.json,")))


def project_name_in_paths() -> str:
    return NAME.replace("-", "_")


def write_launcher(path: Path, entry: str) -> None:
    """A console script for the root's python3 (pip wrote one for .venv's)."""
    module, _, function = entry.partition(":")
    path.write_text(f"#!/usr/bin/python3\nimport sys\n\nfrom {module} import {function}\n\n"
                    f"if __name__ == \"__main__\":\n    sys.exit({function}())\n")
    path.chmod(0o755)


def resolve_inside(rootfs: Path, path: str) -> Path:
    """`path` with its directory resolved within the root (symlinks read as the root's: /bin is usr/bin in a
    merged-/usr Debian)."""
    folder = rootfs
    for part in Path(path).parent.parts[1:]:
        folder = folder / part
        while folder.is_symlink():
            target = os.readlink(folder)
            folder = rootfs / target.lstrip("/") if target.startswith("/") else folder.parent / target
    return folder / Path(path).name


def check_contents(rootfs: Path, base: Base) -> None:
    """No compiler, no installer; tini, python3 and the launchers where the config says."""
    check_no_tools(rootfs, base)
    for needed in (TINI, "/usr/bin/python3", f"/usr/local/bin/{NAME}", KARMADA_SCHEDULER):
        if not os.access(rootfs / needed.lstrip("/"), os.X_OK):
            raise BuildError(f"the image lacks the executable {needed}")
    link = resolve_inside(rootfs, KARMADA_SCHEDULER_LINK)
    if not link.is_symlink() or os.readlink(link) != KARMADA_SCHEDULER:
        raise BuildError(f"the image's {KARMADA_SCHEDULER_LINK} does not lead to {KARMADA_SCHEDULER}")


# --- the OCI image ---------------------------------------------------------------------------------------


def image_config(base: Base, layers: Sequence[Layer]) -> dict[str, Any]:
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch()))
    env = [f"PATH={SYSTEM_PATH}", "LANG=C.UTF-8", *(f"{key}={value}" for key, value in ENV.items())]
    labels = {
        "org.opencontainers.image.title": NAME,
        "org.opencontainers.image.version": version(),
        "org.opencontainers.image.description": str(project()["description"]),
        "org.opencontainers.image.licenses": str(project()["license"]),
    }
    debian = ", ".join(f"{name} {pin}" for name, pin in base.packages.items())
    steps = [f"debootstrap --variant=minbase --include={','.join(PACKAGES)} {base.suite} ({debian}), upgraded; "
             f"user {USER_NAME} {USER}; the dependencies of {NAME}",
             f"{NAME} {version()}, its launchers and {KARMADA_SCHEDULER_LINK}"]
    return {
        "created": created,
        "architecture": base.arch,
        "os": "linux",
        "config": {
            "User": USER,
            "ExposedPorts": {f"{port}/tcp": {} for port in PORTS},
            "Env": env,
            "Entrypoint": list(ENTRYPOINT),
            "Cmd": list(CMD),
            "WorkingDir": "/",
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [layer.diff_id for layer in layers]},
        "history": [{"created": created, "created_by": f"python3 dev.py image: {step}"} for step in steps],
    }


def write_oci_archive(base: Base, layers: Sequence[Layer], work: Path, archive: Path) -> None:
    """binding-scheduler's image: its config and layers as an OCI archive (write_image_archive)."""
    write_image_archive(image_config(base, layers), layers, work, archive,
                        reference=f"docker.io/library/{NAME}:{version()}", version=version())


def write_image_archive(config: dict[str, Any], layers: Sequence[Layer], work: Path, archive: Path, *,
                        reference: str, version: str) -> None:
    """The OCI image layout (oci-layout, index.json, blobs) of one image, for the config's platform, tarred into
    `archive`. The index names its manifest `reference` (a full one: registry/repository:tag), which
    `ctr images import` takes as the image's name, and its tag as the OCI ref name."""
    layout = work / "layout"
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    for layer in layers:
        os.link(layer.blob, blobs / layer.digest.removeprefix("sha256:"))
    stored = store_json(blobs, config)
    manifest = store_json(blobs, {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **stored},
        "layers": [layer.descriptor() for layer in layers],
        "annotations": {"org.opencontainers.image.version": version},
    })
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json", **manifest,
            "platform": {"architecture": config["architecture"], "os": config["os"]},
            "annotations": {
                "io.containerd.image.name": reference,
                "org.opencontainers.image.ref.name": tag_of(reference),
            },
        }],
    }
    (layout / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    (layout / "index.json").write_text(json.dumps(index, indent=2))
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        for path in [layout / "oci-layout", layout / "index.json", *tree(layout / "blobs")]:
            info = tar.gettarinfo(str(path), arcname=path.relative_to(layout).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = epoch(), 0, 0, "", ""
            info.mode = 0o755 if info.isdir() else 0o644
            if info.isreg():
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
            else:
                tar.addfile(info)


def tag_of(reference: str) -> str:
    """`registry/repository:tag`'s tag (a registry's port is no tag)."""
    _, colon, tag = reference.rpartition(":")
    if not colon or "/" in tag or not tag:
        raise BuildError(f"the image reference {reference!r} has no tag")
    return tag


def store_json(blobs: Path, document: dict[str, Any]) -> dict[str, Any]:
    """Write a JSON blob; its descriptor's digest and size."""
    data = json.dumps(document, indent=2).encode()
    digest = hashlib.sha256(data).hexdigest()
    (blobs / digest).write_bytes(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


# --- the build -------------------------------------------------------------------------------------------


def inputs_key(runtime: Path) -> str:
    """What the archive is made from: the runtime, the recipe (this file), the project's files, the wrapper."""
    digest = hashlib.sha256((runtime / "layer.json").read_bytes())
    for path in [Path(__file__), WRAPPER, *project_sources()]:
        digest.update(f"\0{path.relative_to(ROOT)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build(*, refresh: bool = False) -> Path:
    """Build the archive (or find it built from the same inputs) and return its path."""
    require_root()
    debian = host_debian()
    cache_dir().mkdir(parents=True, exist_ok=True)
    with locked(cache_dir() / ".lock"):
        base = ensure_base(debian, refresh=refresh)
        runtime = ensure_runtime(base)
        archive = archive_path()
        stamp = archive.with_name(archive.name + ".inputs")
        key = inputs_key(runtime)
        if archive.exists() and stamp.exists() and stamp.read_text() == key:
            note(f"unchanged since it was built ({archive.stat().st_size / 1e6:.1f} MB)")
            return archive
        started = time.monotonic()
        stamp.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory(prefix="build-", dir=cache_dir()) as folder:
            work = Path(folder)
            rootfs = work / "rootfs"
            run(["cp", "-al", str(runtime / "rootfs"), str(rootfs)], what="linking the runtime's root")
            install_project(rootfs, base, work)
            check_contents(rootfs, base)
            layers = [load_layer(runtime),
                      write_layer(rootfs, added_paths(rootfs, runtime / "rootfs"), work / "project.tar.gz")]
            write_oci_archive(base, layers, work, work / "archive.tar")
            (work / "archive.tar").replace(archive)
        stamp.write_text(key)
        unpacked = sum(layer.unpacked for layer in layers)
        note(f"built in {time.monotonic() - started:.0f} s: {archive.stat().st_size / 1e6:.1f} MB archive, "
             f"{unpacked / 1e6:.0f} MB unpacked, project layer {layers[1].size / 1e6:.1f} MB")
        return archive


def require_root() -> None:
    if os.geteuid() != 0:
        raise CannotBuild("building the image needs root (debootstrap, chroot, files owned by others)")


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """One build at a time per cache (dev.py's prebuild and a test may overlap)."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- removing trees safely -------------------------------------------------------------------------------


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below `path` (a failed debootstrap may leave /proc or /sys mounted in its root)."""
    prefix = str(path.resolve())
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = re.sub(r"\\([0-7]{3})", lambda match: chr(int(match[1], 8)), line.split()[4])
        if point == prefix or point.startswith(prefix + "/"):
            points.append(point)
    return points


def remove_tree(path: Path) -> None:
    """rm -rf, but never through a mount: unmount what is mounted below first, refuse if that fails."""
    if not path.exists() and not path.is_symlink():
        return
    for point in sorted(mounts_under(path), key=len, reverse=True):
        subprocess.run(["umount", point], capture_output=True, check=False)
    left = mounts_under(path)
    if left:
        raise BuildError(f"cannot remove {path}: still mounted there: {', '.join(left)}")
    shutil.rmtree(path)


def remove_path(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        remove_tree(path)
    else:
        path.unlink()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 dev.py image", description=__doc__.split("\n\n")[0])
    parser.add_argument("--refresh", action="store_true", help="debootstrap the base again (security updates)")
    other = parser.add_mutually_exclusive_group()
    for name in ("karmada-scheduler", "pause"):
        other.add_argument(f"--{name}", action="store_const", const=name, dest="other",
                           help=f"build the {name} image instead (scripts/binary_image.py)")
    args = parser.parse_args(argv)
    if args.other is not None:
        from scripts import binary_image  # it imports this module's writers

        return binary_image.main([args.other])
    return report_build(lambda: contract_line(build(refresh=args.refresh)))


def report_build(build_line: Callable[[], str]) -> int:
    """The exit status of a build whose success is one printed line (`image: ... (oci-archive)`): its
    error on standard error otherwise, EXIT_CANNOT where this machine cannot build images."""
    try:
        line = build_line()
    except CannotBuild as error:
        print(f"image: {error}", file=sys.stderr)
        return EXIT_CANNOT
    except BuildError as error:
        print(f"image: {error}", file=sys.stderr)
        return 1
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
