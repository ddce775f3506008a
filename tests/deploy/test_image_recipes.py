"""The two recipes of the image say the same thing: the Containerfile's final stage (for Docker and buildah) and
scripts/image.py (`python3 dev.py image`, no engine): entrypoint, command, user, ports, environment, version,
karmada-scheduler's paths, tini. A change to one without the other fails here. Pure reading: runs anywhere."""

from __future__ import annotations

import json
import re
import shlex
import tomllib

import pytest

from scripts import image as recipe
from testsupport.realcluster.controlplane import ROOT

CONTAINERFILE = ROOT / "Containerfile"


def final_stage() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the last stage, continuation lines joined, comments left out."""
    lines = [line for line in CONTAINERFILE.read_text().splitlines() if not line.lstrip().startswith("#")]
    logical = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    instructions = [(word.upper(), rest.strip()) for word, _, rest in
                    (line.strip().partition(" ") for line in logical.splitlines() if line.strip())]
    start = max(index for index, (word, _) in enumerate(instructions) if word == "FROM")
    return instructions[start:]


def arguments(instruction: str) -> list[str]:
    found = [rest for word, rest in final_stage() if word == instruction]
    assert found, f"the Containerfile's final stage has no {instruction}"
    return found


def one(instruction: str) -> str:
    found = arguments(instruction)
    assert len(found) == 1, f"the Containerfile's final stage has {len(found)} {instruction} instructions"
    return found[0]


def runs() -> str:
    return " && ".join(arguments("RUN"))


VALUED = ("--uid", "--gid", "--shell")
"""The options of groupadd and useradd that take a value."""


def options(command: str) -> tuple[dict[str, str], list[str]]:
    """The valued options and the plain words of one shell command taken out of the RUN instructions."""
    match = re.search(rf"\b{command} ([^&;]*)", runs())
    assert match is not None, f"no {command} in the Containerfile's final stage"
    words = shlex.split(match[1])
    flags: dict[str, str] = {}
    plain: list[str] = []
    while words:
        word = words.pop(0)
        if word in VALUED:
            flags[word] = words.pop(0)
        elif not word.startswith("-"):
            plain.append(word)
    return flags, plain


def test_version_is_packages() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert one("ARG") == f"VERSION={version}"
    assert recipe.version() == version


def test_entrypoint_command_user_and_ports() -> None:
    assert json.loads(one("ENTRYPOINT")) == list(recipe.ENTRYPOINT)
    assert json.loads(one("CMD")) == list(recipe.CMD)
    assert one("USER") == recipe.USER
    assert [int(port) for port in one("EXPOSE").split()] == list(recipe.PORTS)


def test_environment() -> None:
    given = dict(word.split("=", 1) for word in shlex.split(one("ENV")))
    assert given == recipe.ENV


def test_karmada_schedulers_paths() -> None:
    copy = next(words for words in map(shlex.split, arguments("COPY")) if "deploy/karmada-scheduler" in words)
    assert copy == ["--chmod=0755", recipe.WRAPPER.relative_to(ROOT).as_posix(), recipe.KARMADA_SCHEDULER]
    assert re.search(rf"\bln -s {recipe.KARMADA_SCHEDULER} {recipe.KARMADA_SCHEDULER_LINK}\b", runs())


def test_user_and_group() -> None:
    group, group_name = options("groupadd")
    user, user_name = options("useradd")
    assert group == {"--gid": str(recipe.GID)} and group_name == [recipe.USER_NAME]
    assert user == {"--uid": str(recipe.UID), "--gid": str(recipe.GID), "--shell": "/usr/sbin/nologin"}
    assert user_name == [recipe.USER_NAME]


def test_tini_from_debian_unpinned_and_no_pip_left() -> None:
    """Debian drops a version from its suite once it is replaced (a security update, a point release): a pinned
    `tini=0.19.0-1+b3` stops building then. The Debian packages the image adds besides its Python are these."""
    _, packages = options("apt-get install")
    assert packages == [name for name in recipe.PACKAGES if name != "python3"]
    assert not [name for name in packages if "=" in name]
    assert recipe.ENTRYPOINT[0] == recipe.TINI == "/usr/bin/tini"
    assert "pip uninstall --yes pip" in runs()
    assert {"pip", "gcc", "cc"} <= set(recipe.FORBIDDEN)


@pytest.mark.parametrize("instruction", ["ENTRYPOINT", "CMD"])
def test_exec_form(instruction: str) -> None:
    """The JSON form: no shell between tini and the signal."""
    assert one(instruction).startswith("[")
