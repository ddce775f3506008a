"""The TLS context of a `Connection`: trusted CAs, the client certificate, or no verification."""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator

from .connection import ConfigError, Connection


def ssl_context(connection: Connection) -> ssl.SSLContext | None:
    """None for plain HTTP; otherwise a client context trusting the configured CA (or the system's)."""
    if not connection.server.startswith("https://"):
        return None
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    try:
        if connection.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif connection.ca_data is not None:
            context.load_verify_locations(cadata=connection.ca_data.decode("ascii"))
        elif connection.ca_file is not None:
            context.load_verify_locations(cafile=connection.ca_file)
        _load_client_certificate(context, connection)
    except (OSError, ssl.SSLError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"TLS settings of {connection.source or connection.server}: {exc}") from exc
    return context


def _load_client_certificate(context: ssl.SSLContext, connection: Connection) -> None:
    has_cert = connection.cert_data is not None or connection.cert_file is not None
    has_key = connection.key_data is not None or connection.key_file is not None
    if not has_cert and not has_key:
        return
    if has_cert != has_key:
        raise ConfigError(f"{connection.source or connection.server}: a client certificate needs both the "
                          "certificate and its key")
    if connection.cert_data is None and connection.key_data is None:
        assert connection.cert_file is not None
        context.load_cert_chain(connection.cert_file, connection.key_file)
        return
    with _pem_paths(connection) as (cert_path, key_path):
        context.load_cert_chain(cert_path, key_path)


@contextlib.contextmanager
def _pem_paths(connection: Connection) -> Iterator[tuple[str, str]]:
    """Paths `ssl` can load the client certificate and key from: the files given, and the inline data in
    anonymous memory files (`memfd`, Linux) read through `/proc/self/fd`, so a read-only root with no writable
    /tmp works (a container's securityContext); elsewhere in private, short-lived files."""
    with contextlib.ExitStack() as stack:
        if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
            def place(name: str, data: bytes) -> str:
                fd = os.memfd_create(f"binding-scheduler-{name}", os.MFD_CLOEXEC)
                stack.callback(os.close, fd)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                return f"/proc/self/fd/{fd}"
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="binding-scheduler-tls-"))

            def place(name: str, data: bytes) -> str:
                target = os.path.join(folder, name)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                return target

        cert = place("client.crt", connection.cert_data) if connection.cert_data is not None else connection.cert_file
        key = place("client.key", connection.key_data) if connection.key_data is not None else connection.key_file
        assert cert is not None and key is not None
        yield cert, key
