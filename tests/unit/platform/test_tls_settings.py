"""TLS settings (servicekit.settings.TLSSettings) and the private CA (servicekit.certs): what turns TLS
and mTLS on, and what is refused as a mistake."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from cryptography import x509

from servicekit import certs, tls
from servicekit.settings import Settings, TLSSettings


def test_nothing_set_is_plaintext() -> None:
    s = TLSSettings.from_env({})
    assert not s.server and not s.client and not s.require_client_cert
    assert tls.server_credentials(s) is None and tls.channel_credentials(s) is None and tls.nats_context(s) is None


def test_a_certificate_and_a_ca_mean_mtls_unless_told_otherwise() -> None:
    env = {"TLS_CERT": "c.pem", "TLS_KEY": "k.pem", "TLS_CA": "ca.pem"}
    s = TLSSettings.from_env(env)
    assert s.server and s.client and s.require_client_cert
    assert not TLSSettings.from_env({**env, "TLS_CLIENT_AUTH": "none"}).require_client_cert
    assert TLSSettings.from_env({"TLS_CA": "ca.pem"}).client  # a client that verifies, shows nothing
    assert Settings.from_env("table", 1, 2, {**env, "TOKEN_SECRET": "3f9a1c7e5b2d40868e1f6a2c9d3b7e05"}).tls == s
    assert TLSSettings.from_env(s.env()) == s  # what a child process is given


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TLS_CERT": "c.pem"}, "go together"),
        ({"TLS_KEY": "k.pem"}, "go together"),
        ({"TLS_CERT": "c.pem", "TLS_KEY": "k.pem", "TLS_CLIENT_AUTH": "require"}, "needs TLS_CA"),
        ({"TLS_CLIENT_AUTH": "maybe"}, "require or none"),
    ],
)
def test_half_a_setting_is_refused_with_a_clear_message(env: dict[str, str], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        TLSSettings.from_env(env)


def test_the_ca_signs_certificates_for_the_hosts_and_both_usages(tmp_path: Path) -> None:
    issued = certs.issue(tmp_path, "table", ("table", "localhost", "127.0.0.1"))
    cert = x509.load_pem_x509_certificate(issued.cert.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["table", "localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert {u.dotted_string for u in usages} == {"1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"}  # server, client
    assert (issued.key.stat().st_mode & 0o777) == 0o600
    again = certs.issue(tmp_path, "gateway")
    assert again.ca == issued.ca  # one CA per folder, made once
    context = tls.nats_context(TLSSettings(str(issued.cert), str(issued.key), str(issued.ca)))
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED
