"""`insecure_skip_verify` for gRPC, which has no such switch in Python: trust what the server presents.

Before dialing, open one TLS connection without verification, take the server's certificate, and then let
gRPC verify the server against that very certificate, under a name the certificate holds. The connection is
encrypted but, as with Go's InsecureSkipVerify, the server is not authenticated. The probe is asynchronous
and runs inside the dial (so under the caller's deadline and cancellation).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import ssl

_SUBJECT_ALT_NAME = bytes.fromhex("551d11")  # 2.5.29.17
_COMMON_NAME = bytes.fromhex("550403")  # 2.5.4.3


def split_target(target: str) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"target {target!r} is not host:port")
    return host.strip("[]"), int(port)


def _items(data: bytes) -> list[tuple[int, bytes]]:
    """The DER (tag, content) items laid end to end in `data`."""
    out, at = [], 0
    while at < len(data):
        tag, size = data[at], data[at + 1]
        at += 2
        if size & 0x80:
            count = size & 0x7F
            size = int.from_bytes(data[at : at + count], "big")
            at += count
        out.append((tag, data[at : at + size]))
        at += size
    return out


def certificate_names(der: bytes) -> list[str]:
    """DNS names and IP addresses of the subjectAltName extension, then the subject's common names."""
    tbs = _items(_items(der)[0][1])[0][1]
    fields = _items(tbs)
    if fields[0][0] == 0xA0:  # explicit version
        fields = fields[1:]
    subject = fields[4][1]
    names: list[str] = []
    for tag, content in fields[6:]:
        if tag != 0xA3:  # [3] extensions
            continue
        for _, extension in _items(_items(content)[0][1]):
            parts = _items(extension)
            if parts[0][1] != _SUBJECT_ALT_NAME:
                continue
            for name_tag, value in _items(_items(parts[-1][1])[0][1]):
                if name_tag == 0x82:
                    names.append(value.decode("ascii", "replace"))
                elif name_tag == 0x87 and len(value) in (4, 16):
                    names.append(str(ipaddress.ip_address(value)))
    for _, rdn in _items(subject):
        for _, attribute in _items(rdn):
            (_, oid), (_, text) = _items(attribute)[:2]
            if oid == _COMMON_NAME:
                names.append(text.decode("utf-8", "replace"))
    return names


async def peer_trust(target: str) -> tuple[bytes, str]:
    """The PEM certificate the server at `target` presents, and a name to check it against."""
    host, port = split_target(target)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    _, writer = await asyncio.open_connection(host, port, ssl=context, server_hostname=host or None)
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):
            await writer.wait_closed()
    if not der:
        raise ValueError(f"{target} presented no certificate")
    names = certificate_names(der)
    if not names:
        raise ValueError(f"the certificate of {target} names no host")
    return ssl.DER_cert_to_PEM_cert(der).encode("ascii"), names[0]
