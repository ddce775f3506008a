"""devcluster's protobuf decoder: the bytes kubectl 1.35 sends, and its message tables against the
generated.proto files of k8s.io/api and k8s.io/apimachinery (when the Go module cache holds them)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from binding_scheduler.devcluster.kubectl import protobuf

# `kubectl create namespace x` (v1.35.4, -v=8)
KUBECTL_CREATE_NS = bytes.fromhex(
    "6b3873000a0f0a0276311209 4e616d657370616365 12190a110a017812001a00220 02a00320038004200 12001a020a001a002200"
    .replace(" ", ""))
# `kubectl auth whoami`
KUBECTL_WHOAMI = bytes.fromhex(
    "6b3873000a2d0a1861757468656e7469636174696f6e2e6b38732e696f2f763112115365 6c665375626a656374526576696577"
    "121a0a100a0012001a0022002a0032003800420012060a040a0012001a002200".replace(" ", ""))


def test_kubectls_create_namespace_body_decodes_to_namespace() -> None:
    assert protobuf.decode(KUBECTL_CREATE_NS) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spec": {}, "status": {}}


def test_kubectls_whoami_body_decodes_to_empty_review() -> None:
    assert protobuf.decode(KUBECTL_WHOAMI) == {
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {},
        "status": {"userInfo": {}}}


@pytest.mark.parametrize("body", [b"k8s", b"k8s\x00\x0a\x05\x0a\x02v1", b"k8s\x00\x0a\x0b\x0a\x02v1\x12\x05Thing"])
def test_what_is_not_known_kind_is_refused(body: bytes) -> None:
    with pytest.raises(protobuf.ProtobufError):
        protobuf.decode(body)


def _module_cache() -> Path | None:
    root = os.environ.get("GOMODCACHE")
    if not root:
        try:
            root = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    path = Path(root) / "k8s.io"
    return path if (path / "api@v0.35.4").is_dir() and (path / "apimachinery@v0.35.4").is_dir() else None


PROTO_FILES = ("api@v0.35.4/core/v1", "api@v0.35.4/authorization/v1", "api@v0.35.4/authentication/v1",
               "api@v0.35.4/coordination/v1", "apimachinery@v0.35.4/pkg/apis/meta/v1",
               "apimachinery@v0.35.4/pkg/runtime", "apimachinery@v0.35.4/pkg/util/intstr")
SCALARS = {"string": "string", "int32": "int", "int64": "int", "bool": "bool", "bytes": "bytes"}


def test_every_message_matches_generated_proto() -> None:
    cache = _module_cache()
    if cache is None:
        pytest.skip("the Go module cache has no k8s.io/api@v0.35.4 (the control plane build fetches it)")
    declared: dict[str, dict[int, tuple[str, str]]] = {}
    for folder in PROTO_FILES:
        text = (cache / folder / "generated.proto").read_text()
        for name, body in re.findall(r"\nmessage (\w+) \{(.*?)\n\}", text, re.S):
            fields = re.findall(r"^\s*(optional |repeated )?(map<string, )?([\w.]+)>? (\w+) = (\d+);", body, re.M)
            declared[name] = {}
            for label, is_map, type_name, field, number in fields:
                kind = SCALARS.get(type_name, type_name.rpartition(".")[2])
                if is_map:
                    kind = "{" + kind + "}"
                elif label.strip() == "repeated":
                    kind = f"[{kind}]"
                declared[name][int(number)] = (field, kind)
    for message, fields in protobuf.MESSAGES.items():
        assert message in declared, message
        for number, (field, kind) in fields.items():
            assert declared[message].get(number) == (field, kind), (message, number)
        assert set(declared[message]) == set(fields), message  # every field is decoded
