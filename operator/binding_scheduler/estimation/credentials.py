"""Channel credentials from the TLS settings (Karmada's
`pkg/util/grpcconnection/config.go: ClientConfig.DialWithTimeOut`).

Plaintext when no CA file is given and verification is not skipped; the client certificate is then ignored.
Otherwise TLS: roots from the CA file (system roots when it is empty), a client certificate when both the
certificate and key files are set (mTLS). The files are read once, when the estimator is built (at startup
or on a configuration reload), never during a scheduling pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc

from .settings import EstimatorSettings


@dataclass(frozen=True, slots=True)
class TlsMaterial:
    root_certificates: bytes | None
    private_key: bytes | None
    certificate_chain: bytes | None
    skip_verify: bool

    def credentials(self, root_override: bytes | None = None) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=root_override if root_override is not None else self.root_certificates,
            private_key=self.private_key,
            certificate_chain=self.certificate_chain,
        )


class TlsFileError(OSError):
    """A TLS file of the estimator settings cannot be read; `field` is its configuration field."""

    def __init__(self, field: str, path: str, reason: str) -> None:
        super().__init__(f"{field}: {path}: {reason}")
        self.field = field
        self.path = path
        self.reason = reason


TLS_FIELDS = {"ca_file": "spec.estimator.tls.caFile", "cert_file": "spec.estimator.tls.certFile",
              "key_file": "spec.estimator.tls.keyFile"}


def load_tls(settings: EstimatorSettings) -> TlsMaterial | None:
    """The TLS material to use, or None for plaintext. Raises TlsFileError when a file cannot be read."""
    if not settings.uses_tls:
        return None
    with_cert = bool(settings.cert_file and settings.key_file)
    return TlsMaterial(
        root_certificates=_read(settings, "ca_file") if settings.ca_file else None,
        private_key=_read(settings, "key_file") if with_cert else None,
        certificate_chain=_read(settings, "cert_file") if with_cert else None,
        skip_verify=settings.insecure_skip_verify,
    )


def _read(settings: EstimatorSettings, attribute: str) -> bytes:
    path = str(getattr(settings, attribute))
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise TlsFileError(TLS_FIELDS[attribute], path, error.strerror or str(error)) from None
