"""Loading a Connection: kubeconfig files (explicit, $KUBECONFIG, ~/.kube/config) and in-cluster credentials."""

from __future__ import annotations

import base64
import ssl
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.kube import ConfigError, Connection, load_connection
from binding_scheduler.kube.tls import ssl_context

CA_PEM = b"-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"
CERT_PEM = b"-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n"
KEY_PEM = b"-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(
    path: Path, *, cluster: dict[str, Any] | None = None, user: dict[str, Any] | None = None,
    current: str | None = "main", contexts: dict[str, str] | None = None, namespace: str | None = None,
) -> Path:
    context: dict[str, Any] = {"cluster": "c", "user": "u"}
    if namespace:
        context["namespace"] = namespace
    data: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster or {"server": "https://api.example:6443"}}],
        "users": [{"name": "u", "user": user or {}}],
        "contexts": [{"name": "main", "context": context}]
        + [{"name": name, "context": {"cluster": cl, "user": "u"}} for name, cl in (contexts or {}).items()],
    }
    if current:
        data["current-context"] = current
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_explicit_kubeconfig_gives_server_token_and_namespace(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", user={"token": "abc"}, namespace="karmada-system")
    connection = load_connection(str(path))
    assert (connection.server, connection.token, connection.namespace, connection.insecure) == (
        "https://api.example:6443", "abc", "karmada-system", False)


def test_inline_certificate_data_is_base64_decoded(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config",
        cluster={"server": "https://api.example", "certificate-authority-data": b64(CA_PEM)},
        user={"client-certificate-data": b64(CERT_PEM), "client-key-data": b64(KEY_PEM)},
    )
    connection = load_connection(str(path))
    assert (connection.ca_data, connection.cert_data, connection.key_data) == (CA_PEM, CERT_PEM, KEY_PEM)


def test_relative_files_resolve_from_kubeconfig(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config",
        cluster={"server": "https://api.example", "certificate-authority": "pki/ca.crt"},
        user={"client-certificate": "pki/me.crt", "client-key": "/abs/me.key", "tokenFile": "token"},
    )
    connection = load_connection(str(path))
    assert (connection.ca_file, connection.cert_file, connection.key_file, connection.token_file) == (
        str(tmp_path / "pki/ca.crt"), str(tmp_path / "pki/me.crt"), "/abs/me.key", str(tmp_path / "token"))


def test_insecure_skip_tls_verify_is_read(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", cluster={"server": "https://x", "insecure-skip-tls-verify": True})
    assert load_connection(str(path)).insecure is True


def test_named_context_overrides_current_one(tmp_path: Path) -> None:
    path = tmp_path / "config"
    kubeconfig(path, contexts={"other": "c2"})
    data = yaml.safe_load(path.read_text())
    data["clusters"].append({"name": "c2", "cluster": {"server": "https://second:443/"}})
    path.write_text(yaml.safe_dump(data))
    assert load_connection(str(path), context="other").server == "https://second:443"


def test_unknown_context_is_named_in_error(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config")
    with pytest.raises(ConfigError, match=r"contex.*'nope'.*defined: main"):
        load_connection(str(path), context="nope")


def test_no_current_context_is_error(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", current=None)
    with pytest.raises(ConfigError, match="no current-context"):
        load_connection(str(path))


def test_missing_explicit_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"kubeconfig .*missing\.yaml does not exist"):
        load_connection(str(tmp_path / "missing.yaml"))


def test_exec_credential_plugins_are_refused_with_clear_error(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", user={"exec": {"command": "aws", "apiVersion": "x"}})
    with pytest.raises(ConfigError, match="exec credential plugin, which binding-scheduler does not support"):
        load_connection(str(path))


def test_auth_provider_plugins_are_refused_with_clear_error(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", user={"auth-provider": {"name": "oidc"}})
    with pytest.raises(ConfigError, match="auth-provider credential plugin"):
        load_connection(str(path))


def test_invalid_base64_data_is_error(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", cluster={"server": "https://x", "certificate-authority-data": "@@"})
    with pytest.raises(ConfigError, match=r"certificate-authority-data .* is not valid base64"):
        load_connection(str(path))


def test_kubeconfig_env_lists_files_and_first_definition_wins(tmp_path: Path) -> None:
    first = kubeconfig(tmp_path / "one", cluster={"server": "https://first"}, user={"token": "t1"})
    second = kubeconfig(tmp_path / "two", cluster={"server": "https://second"}, user={"token": "t2"},
                        current="elsewhere")
    connection = load_connection(environ={"KUBECONFIG": f"{tmp_path / 'absent'}:{first}:{second}"},
                                 home=tmp_path)
    assert (connection.server, connection.token) == ("https://first", "t1")


def test_home_kube_config_is_used_when_nothing_else_is_set(tmp_path: Path) -> None:
    (tmp_path / ".kube").mkdir()
    kubeconfig(tmp_path / ".kube" / "config", cluster={"server": "https://home"})
    assert load_connection(environ={}, home=tmp_path).server == "https://home"


def test_in_cluster_credentials_come_from_service_account(tmp_path: Path) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token")
    (sa / "ca.crt").write_bytes(CA_PEM)
    (sa / "namespace").write_text("karmada-system\n")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    connection = load_connection(environ=env, home=tmp_path / "nohome", service_account_dir=sa)
    assert (connection.server, connection.token_file, connection.ca_file, connection.namespace) == (
        "https://10.0.0.1:443", str(sa / "token"), str(sa / "ca.crt"), "karmada-system")


def test_in_cluster_ipv6_hosts_are_bracketed(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t")
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    connection = load_connection(environ=env, home=tmp_path, service_account_dir=tmp_path)
    assert connection.server == "https://[fd00::1]:443"


def test_nothing_configured_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT, .*token"):
        load_connection(environ={}, home=tmp_path, service_account_dir=tmp_path / "sa")


def test_connection_repr_hides_secrets(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", user={"token": "very-secret"})
    assert "very-secret" not in repr(load_connection(str(path)))


def test_plain_http_needs_no_tls_context() -> None:
    assert ssl_context(Connection("http://127.0.0.1:8080")) is None


def test_insecure_skip_tls_verify_turns_verification_off() -> None:
    context = ssl_context(Connection("https://api.example", insecure=True))
    assert context is not None
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_NONE, False)


def test_unusable_certificate_authority_is_config_error() -> None:
    with pytest.raises(ConfigError, match="TLS settings"):
        ssl_context(Connection("https://api.example", ca_data=CA_PEM))


def test_client_certificate_without_key_is_config_error() -> None:
    with pytest.raises(ConfigError, match="needs both the certificate and its key"):
        ssl_context(Connection("https://api.example", insecure=True, cert_data=CERT_PEM))


@pytest.mark.parametrize("value", ["false", "true", "no", 0, 1])
def test_insecure_skip_tls_verify_that_is_not_boolean_is_refused(tmp_path: Path, value: Any) -> None:
    """A quoted "false" is a non-empty string: read by truthiness it would turn TLS verification off."""
    path = kubeconfig(tmp_path / "config", cluster={"server": "https://x", "insecure-skip-tls-verify": value})
    with pytest.raises(ConfigError, match=rf"insecure-skip-tls-verify must be true or false, not {value!r}"):
        load_connection(str(path))


def test_broken_kubeconfig_is_located_without_quoting_text(tmp_path: Path) -> None:
    secret = "eyJhbGciOiJSUzI1NiIsImtpZCI6InNlY3JldCJ9.sekrit-token-fragment"
    path = tmp_path / "config"
    path.write_text(f"users:\n- name: u\n  user:\n    token: {secret}\n   : broken: [\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_connection(str(path))
    message = str(caught.value)
    assert message.startswith(f"kubeconfig {path} is not valid YAML at line ")
    assert "sekrit" not in message and "eyJ" not in message
    assert caught.value.__suppress_context__  # a logged traceback does not show the parser's message either


# --- --master (Karmada's flag; client-go's BuildConfigFromFlags) -------------------------------------------------


def test_master_replaces_only_server(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", cluster={"server": "https://api.example:6443",
                                                    "certificate-authority-data": b64(CA_PEM)},
                      user={"token": "abc"})
    connection = load_connection(str(path), master="https://karmada-apiserver:5443")
    assert (connection.server, connection.token, connection.ca_data) == (
        "https://karmada-apiserver:5443", "abc", CA_PEM)


def test_master_without_scheme_is_https(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config")
    assert load_connection(str(path), master="10.0.0.9:5443").server == "https://10.0.0.9:5443"


def test_master_without_kubeconfig_has_no_credentials(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("sa-token")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    connection = load_connection(environ=env, home=tmp_path, service_account_dir=tmp_path,
                                 master="http://127.0.0.1:8001")
    assert (connection.server, connection.token, connection.token_file) == ("http://127.0.0.1:8001", None, None)


def test_master_that_is_not_url_is_error(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config")
    with pytest.raises(ConfigError, match=r"^--master 'ftp://x' is not an API server URL \(https://host:port\)$"):
        load_connection(str(path), master="ftp://x")


def test_inline_certificate_needs_no_temp_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only root with no writable /tmp (a container's securityContext) and a kubeconfig that carries its
    client certificate inline, as Karmada's karmada-scheduler-config Secret does."""
    from tests.estimation.helpers import make_certificates

    files = make_certificates(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    connection = Connection("https://api.example", ca_data=files["ca.crt"].read_bytes(),
                            cert_data=files["client.crt"].read_bytes(), key_data=files["client.key"].read_bytes())
    assert ssl_context(connection) is not None
    assert not (tmp_path / "no-such-folder").exists()


def test_mismatched_inline_cert_key_is_config_error(tmp_path: Path) -> None:
    from tests.estimation.helpers import make_certificates

    files = make_certificates(tmp_path)
    connection = Connection("https://api.example", ca_data=files["ca.crt"].read_bytes(),
                            cert_data=files["client.crt"].read_bytes(), key_data=files["server.key"].read_bytes())
    with pytest.raises(ConfigError, match="TLS settings"):
        ssl_context(connection)
