"""TLS and mTLS to the estimators; plaintext only when no CA is given and verification is not skipped."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from binding_scheduler.estimation.stub import StubTls
from binding_scheduler.model import Cluster
from tests.estimation.helpers import MakeEstimator, StartStub, make_certificates

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


async def test_tls_with_the_ca(stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]) -> None:
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs))
    assert await ask(make_estimator, stub.address, ca_file=str(certs["ca.crt"])) == {"m1": 3}


async def test_mutual_tls_with_a_client_certificate(
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


async def test_mutual_tls_without_a_client_certificate_fails(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]
) -> None:
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs, mutual=True))
    answer = await ask(make_estimator, stub.address, ca_file=str(certs["ca.crt"]))
    assert answer.keys() == {"m1"} and isinstance(answer["m1"], str)


async def test_plaintext_client_cannot_reach_a_tls_server(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]
) -> None:
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs))
    client = {"cert_file": str(certs["client.crt"]), "key_file": str(certs["client.key"])}
    answer = await ask(make_estimator, stub.address, **client)
    assert isinstance(answer["m1"], str)


async def test_an_unknown_ca_is_rejected(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path], tmp_path: Path
) -> None:
    other = make_certificates(tmp_path)
    stub = await stubs("m1", replicas=3, host="localhost", tls=server_tls(certs))
    answer = await ask(make_estimator, stub.address, ca_file=str(other["ca.crt"]))
    assert isinstance(answer["m1"], str)


async def test_skip_verify_accepts_a_server_it_cannot_verify(
    stubs: StartStub, make_estimator: MakeEstimator, certs: dict[str, Path]
) -> None:
    stub = await stubs("m1", replicas=3, host="127.0.0.1", tls=server_tls(certs))
    assert await ask(make_estimator, stub.address, insecure_skip_verify=True) == {"m1": 3}
