"""Helpers shared by the estimator tests."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from binding_scheduler.estimation import AccurateEstimator
from binding_scheduler.estimation.stub import EstimatorStub

StartStub = Callable[..., Awaitable[EstimatorStub]]
MakeEstimator = Callable[..., AccurateEstimator]


def estimator_tasks() -> list[asyncio.Task[Any]]:
    """Tasks of the estimation client still alive (the fan-out's per-cluster tasks)."""
    return [
        task
        for task in asyncio.all_tasks()
        if not task.done() and "AccurateEstimator" in getattr(task.get_coro(), "__qualname__", "")
    ]


def varint(value: int) -> bytes:
    """Protobuf base-128 varint; negative numbers as their 64-bit two's complement."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def ld(field: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): strings, bytes, embedded messages, map entries."""
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def text(field: int, value: str) -> bytes:
    return ld(field, value.encode())


def number(field: int, value: int) -> bytes:
    """A varint field (wire type 0)."""
    return varint(field << 3 | 0) + varint(value)


def entry(key: str, value: bytes) -> bytes:
    """A map entry message: key = 1, value = 2."""
    return ld(1, key.encode()) + ld(2, value)


def make_certificates(directory: Path) -> dict[str, Path]:
    """A CA, a server certificate for localhost/127.0.0.1 and a client certificate, made with openssl."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)

    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=test-ca")
    for name, extension in (
        ("server", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ("client", "extendedKeyUsage=clientAuth"),
    ):
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        (directory / f"{name}.ext").write_text(extension + "\n")
        openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext",
        )
    return {p.stem + p.suffix: p for p in directory.iterdir()}
