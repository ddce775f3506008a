"""Where the API server is and how to authenticate: kubeconfig files or the in-cluster service account.

`load_connection()` looks, in order, at the explicit file, `$KUBECONFIG` (a `:`-separated list, merged as
kubectl does: the first file defining a name wins), `~/.kube/config`, and finally the in-cluster service
account. Supported: `certificate-authority(-data)`, `client-certificate(-data)`, `client-key(-data)`, `token`,
`tokenFile`, `username`/`password`, `insecure-skip-tls-verify`. Credential plugins (`exec`, `auth-provider`)
are not: such a user gets a `ConfigError` saying so.

`master` (Karmada's `--master`) replaces the server, keeping the kubeconfig's credentials, as client-go's
BuildConfigFromFlags does; like it, with a master URL the in-cluster service account is not used (its token is
not sent to another server): without a kubeconfig, the connection has the URL and no credentials.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(Exception):
    """The connection could not be configured; the message names what is missing or wrong."""


@dataclass(frozen=True)
class Connection:
    """Everything needed to reach one API server. `*_data` fields hold PEM bytes (already base64-decoded)."""

    server: str
    ca_data: bytes | None = None
    ca_file: str | None = None
    cert_data: bytes | None = None
    cert_file: str | None = None
    key_data: bytes | None = None
    key_file: str | None = None
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    insecure: bool = False
    namespace: str = "default"
    source: str = ""  # where it came from: a kubeconfig path and context, or "in-cluster"

    def __repr__(self) -> str:  # never print secrets
        return f"Connection(server={self.server!r}, source={self.source!r}, insecure={self.insecure})"


def load_connection(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
    master: str | None = None,
) -> Connection:
    """The connection from kubeconfig or in-cluster credentials (see the module docstring for the order), its
    server replaced by `master` when given."""
    env = os.environ if environ is None else environ
    server = _master_url(master) if master else None
    if kubeconfig:
        return _with_server(_from_kubeconfig([Path(kubeconfig).expanduser()], context, required=True), server)
    listed = [Path(p).expanduser() for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        return _with_server(_from_kubeconfig(listed, context, required=False), server)
    default = (home if home is not None else Path.home()) / ".kube" / "config"
    if default.is_file():
        return _with_server(_from_kubeconfig([default], context, required=True), server)
    if server is not None:
        if context:
            raise ConfigError(f"context {context!r} was asked for but no kubeconfig was found (--master {master})")
        return Connection(server=server, source=f"--master {master} (no kubeconfig: no credentials)")
    return _in_cluster(env, service_account_dir, context)


def _master_url(master: str) -> str:
    """client-go's reading of a --master value: a URL, or a host[:port] that means https."""
    url = master.strip().rstrip("/")
    if "://" not in url:
        url = f"https://{url}"
    scheme, _, rest = url.partition("://")
    if scheme not in ("http", "https") or not rest or any(c.isspace() for c in rest):
        raise ConfigError(f"--master {master!r} is not an API server URL (https://host:port)")
    return url


def _with_server(connection: Connection, server: str | None) -> Connection:
    if server is None:
        return connection
    return dataclasses.replace(connection, server=server, source=f"{connection.source}, server from --master")


def _in_cluster(env: Mapping[str, str], sa_dir: Path, context: str | None) -> Connection:
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    token_file = sa_dir / "token"
    missing = [name for name, value in (("KUBERNETES_SERVICE_HOST", host), ("KUBERNETES_SERVICE_PORT", port))
               if not value]
    if not token_file.is_file():
        missing.append(str(token_file))
    if missing:
        raise ConfigError(
            "no Kubernetes connection configured: no --kubeconfig, $KUBECONFIG is empty, ~/.kube/config does not "
            f"exist, and in-cluster configuration is incomplete (missing {', '.join(missing)})"
        )
    if context:
        raise ConfigError(f"context {context!r} was asked for but no kubeconfig was found (running in-cluster)")
    if ":" in host:
        host = f"[{host}]"
    ca_file = sa_dir / "ca.crt"
    namespace_file = sa_dir / "namespace"
    namespace = namespace_file.read_text(encoding="utf-8").strip() if namespace_file.is_file() else "default"
    return Connection(
        server=f"https://{host}:{port}",
        ca_file=str(ca_file) if ca_file.is_file() else None,
        token_file=str(token_file),
        namespace=namespace or "default",
        source="in-cluster",
    )


def _read_config(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # The parser's message quotes the offending line, which may hold a token: say only where it is.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise ConfigError(f"kubeconfig {path} is not valid YAML{where}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"kubeconfig {path} must be a YAML mapping, not {type(data).__name__}")
    return data


class _Merged:
    """Named entries of several kubeconfig files; the first definition of a name wins (as in kubectl)."""

    def __init__(self) -> None:
        self.current_context: str | None = None
        self.entries: dict[str, dict[str, tuple[dict[str, Any], Path]]] = {
            "clusters": {}, "users": {}, "contexts": {}}
        self.files: list[Path] = []

    def add(self, path: Path, data: Mapping[str, Any]) -> None:
        self.files.append(path)
        if self.current_context is None and data.get("current-context"):
            self.current_context = str(data["current-context"])
        for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            items = data.get(section) or []
            if not isinstance(items, list):
                raise ConfigError(f"kubeconfig {path}: {section} must be a list")
            for item in items:
                if not isinstance(item, Mapping) or not item.get("name"):
                    raise ConfigError(f"kubeconfig {path}: every entry of {section} needs a name")
                body = item.get(inner) or {}
                if not isinstance(body, Mapping):
                    raise ConfigError(f"kubeconfig {path}: {section}[{item['name']}].{inner} must be a mapping")
                self.entries[section].setdefault(str(item["name"]), (dict(body), path))

    def where(self) -> str:
        return ", ".join(str(p) for p in self.files)

    def get(self, section: str, name: str, wanted_by: str) -> tuple[dict[str, Any], Path]:
        found = self.entries[section].get(name)
        if found is None:
            known = ", ".join(sorted(self.entries[section])) or "none"
            raise ConfigError(f"{wanted_by} refers to {section[:-1]} {name!r}, which is not defined in "
                              f"{self.where()} (defined: {known})")
        return found


def _from_kubeconfig(paths: list[Path], context: str | None, *, required: bool) -> Connection:
    merged = _Merged()
    for path in paths:
        if not path.is_file():
            if required:
                raise ConfigError(f"kubeconfig {path} does not exist")
            continue
        merged.add(path, _read_config(path))
    if not merged.files:
        raise ConfigError(f"none of the $KUBECONFIG files exist: {', '.join(str(p) for p in paths)}")
    name = context or merged.current_context
    if not name:
        raise ConfigError(f"no context given and no current-context set in {merged.where()}")
    ctx, _ = merged.get("contexts", name, "--context" if context else "current-context")
    cluster_name, user_name = ctx.get("cluster"), ctx.get("user")
    if not cluster_name:
        raise ConfigError(f"context {name!r} in {merged.where()} names no cluster")
    cluster, cluster_file = merged.get("clusters", str(cluster_name), f"context {name!r}")
    user: dict[str, Any] = {}
    user_file = cluster_file
    if user_name:
        user, user_file = merged.get("users", str(user_name), f"context {name!r}")
    server = str(cluster.get("server") or "")
    if not server:
        raise ConfigError(f"cluster {cluster_name!r} in {cluster_file} has no server")
    for plugin in ("exec", "auth-provider"):
        if user.get(plugin):
            raise ConfigError(
                f"user {user_name!r} in {user_file} uses an {plugin} credential plugin, which binding-scheduler "
                "does not support: use a client certificate, a token or a tokenFile"
            )
    return Connection(
        server=server.rstrip("/"),
        ca_data=_data(cluster, "certificate-authority-data", cluster_file),
        ca_file=_file(cluster, "certificate-authority", cluster_file),
        cert_data=_data(user, "client-certificate-data", user_file),
        cert_file=_file(user, "client-certificate", user_file),
        key_data=_data(user, "client-key-data", user_file),
        key_file=_file(user, "client-key", user_file),
        token=str(user["token"]) if user.get("token") else None,
        token_file=_file(user, "tokenFile", user_file),
        username=str(user["username"]) if user.get("username") else None,
        password=str(user["password"]) if user.get("password") else None,
        insecure=_flag(cluster, "insecure-skip-tls-verify", cluster_file),
        namespace=str(ctx.get("namespace") or "default"),
        source=f"{merged.where()} (context {name})",
    )


def _flag(section: Mapping[str, Any], key: str, origin: Path) -> bool:
    """A kubeconfig boolean, strictly: YAML true/false only. kubectl refuses `"false"` (a string) too, and
    truthiness would turn it into true: TLS verification off."""
    value = section.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"kubeconfig {origin}: {key} must be true or false, not {value!r}")
    return value


def _data(section: Mapping[str, Any], key: str, origin: Path) -> bytes | None:
    value = section.get(key)
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(f"{key} in {origin} is not valid base64: {exc}") from exc


def _file(section: Mapping[str, Any], key: str, origin: Path) -> str | None:
    """A file path from the kubeconfig; relative paths are relative to the kubeconfig's folder."""
    value = section.get(key)
    if not value:
        return None
    path = Path(str(value)).expanduser()
    if not path.is_absolute():
        path = origin.parent / path
    return str(path)
