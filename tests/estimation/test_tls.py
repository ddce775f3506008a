"""TLS and mTLS to the estimators; plaintext only when no CA is given and verification is not skipped."""

from __future__ import annotations

import asyncio
import re
import shutil
import ssl
from pathlib import Path
from typing import Any

import grpc
import pytest

from binding_scheduler.estimation import EstimatorSettings
from binding_scheduler.estimation.credentials import load_tls
from binding_scheduler.estimation.stub import EstimatorStub, StubTls
from binding_scheduler.model import Cluster
from tests.estimation.helpers import MakeEstimator, StartStub, make_certificates

MAX_AVAILABLE = "/github.com.karmada_io.karmada.pkg.estimator.service.Estimator/MaxAvailableReplicas"

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_certificates(tmp_path_factory.mktemp("certs"))


def server_tls(certs: dict[str, Path], *, mutual: bool = False) -> StubTls:
    return StubTls(
        private_key=certs["server.key"].read_bytes(),
        certificate_chain=certs["server.crt"].read_bytes(),
        client_ca=certs["ca.crt"].read_bytes() if mutual else None,
    )


async def ask(make_estimator: MakeEstimator, stub_address: str, **settings: object) -> dict[str, object]:
    estimator = make_estimator(endpoints={"m1": stub_address}, dial_timeout=2, **settings)
    answer = await estimator.max_available_replicas([Cluster(name="m1")], None)
    return {**answer.replicas, **answer.failures}


async def test_tls_with_ca(stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]) -> None:
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs))
    assert await ask(make_estimator, stub.address, ca_file=str(certs["ca.crt"])) == {"m1": 3}


async def test_mutual_tls_with_client_certificate(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]
) -> None:
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs, mutual=True))
    answer = await ask(
        make_estimator,
        stub.address,
        ca_file=str(certs["ca.crt"]),
        cert_file=str(certs["client.crt"]),
        key_file=str(certs["client.key"]),
    )
    assert answer == {"m1": 3}


CONNECT_FAILED = re.compile(r"^cluster m1: cannot connect to the estimator: localhost:\d+: connection failed "
                            r"\(TRANSIENT_FAILURE\)$")


async def rpc_failure(address: str, **settings: Any) -> str:
    """The details of one RPC sent over a channel made from the same TLS material our estimator client loads for
    `settings` (our client only reports "connection failed"; gRPC's RPC error says why)."""
    tls = load_tls(EstimatorSettings(**settings))
    assert tls is not None
    channel = grpc.aio.secure_channel(address, tls.credentials())
    try:
        await channel.unary_unary(MAX_AVAILABLE)(b"", timeout=10)
    except grpc.aio.AioRpcError as error:
        assert error.code() is grpc.StatusCode.UNAVAILABLE
        return str(error.details())
    finally:
        await channel.close()
    raise AssertionError("the RPC succeeded")


async def tls_session(stub: EstimatorStub, certs: dict[str, Path], *, client_certificate: bool) -> str:
    """Open TLS to the stub (our CA, with or without our client certificate), send HTTP/2's preface and read:
    "served" when the server answers with its SETTINGS frame, "closed" when it ends the connection instead."""
    context = ssl.create_default_context(cafile=str(certs["ca.crt"]))
    context.set_alpn_protocols(["h2"])
    if client_certificate:
        context.load_cert_chain(str(certs["client.crt"]), str(certs["client.key"]))
    reader, writer = await asyncio.open_connection(stub.host, stub.port, ssl=context, server_hostname="localhost")
    try:
        writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000"))
        await writer.drain()
        header = await asyncio.wait_for(reader.read(9), timeout=10)
    except (ssl.SSLError, ConnectionError):
        return "closed"
    finally:
        writer.transport.abort()  # no TLS close_notify exchange: the gRPC server would not answer it
    if not header:
        return "closed"
    assert header[3] == 0x04, f"not an HTTP/2 SETTINGS frame: {header!r}"
    return "served"


async def test_mtls_without_client_certificate_is_refused(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]
) -> None:
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs, mutual=True))
    answer = await ask(make_estimator, stub.address, ca_file=str(certs["ca.crt"]))
    assert answer.keys() == {"m1"}
    assert CONNECT_FAILED.match(str(answer["m1"])), answer
    assert stub.calls == []
    # Why: the certificate alone decides. The same TLS connection (our CA, HTTP/2) is ended by the server without
    # a client certificate (TLS 1.3 verifies it after the handshake) and served with one.
    assert await tls_session(stub, certs, client_certificate=False) == "closed"
    assert await tls_session(stub, certs, client_certificate=True) == "served"


async def test_plaintext_client_cannot_reach_tls_server(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]
) -> None:
    """A client certificate without a CA is plaintext (Karmada's rule): the TLS server drops the connection."""
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs))
    client = {"cert_file": str(certs["client.crt"]), "key_file": str(certs["client.key"])}
    assert load_tls(EstimatorSettings(**client)) is None
    answer = await ask(make_estimator, stub.address, **client)
    assert CONNECT_FAILED.match(str(answer["m1"])), answer
    assert stub.calls == []


async def test_unknown_ca_is_rejected_by_certificate_verification(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path], tmp_path: Path
) -> None:
    other = make_certificates(tmp_path)
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs))
    answer = await ask(make_estimator, stub.address, ca_file=str(other["ca.crt"]))
    assert CONNECT_FAILED.match(str(answer["m1"])), answer
    assert stub.calls == []
    details = await rpc_failure(stub.address, ca_file=str(other["ca.crt"]))
    assert "Tls handshake failed" in details
    assert "CERTIFICATE_VERIFY_FAILED: unable to get local issuer certificate" in details


async def test_skip_verify_accepts_server_it_cannot_verify(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]
) -> None:
    stub = await stubs("m1", replicas=3, host="127.0.0.1", tls=server_tls(certs))
    assert await ask(make_estimator, stub.address, insecure_skip_verify=True) == {"m1": 3}
