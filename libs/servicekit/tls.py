"""TLS for gRPC servers and channels and for the NATS connection, from `settings.TLSSettings`.

One switch per side: a server with a certificate serves TLS only (and, with TLS_CA and
TLS_CLIENT_AUTH=require, only to clients whose certificate the CA signed: mTLS); a process with a CA
opens TLS channels and presents its own certificate when it has one. Certificates name the hosts
they are reached at (`servicekit.certs` for tests and compose, cert-manager on Kubernetes).
"""

from __future__ import annotations

import ssl
from pathlib import Path

import grpc

from .settings import TLSSettings


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


def server_credentials(tls: TLSSettings) -> grpc.ServerCredentials | None:
    """A gRPC server's TLS credentials (None: it serves plaintext)."""
    if not tls.server:
        return None
    return grpc.ssl_server_credentials(
        [(_read(tls.key), _read(tls.cert))],
        root_certificates=_read(tls.ca) if tls.require_client_cert else None,
        require_client_auth=tls.require_client_cert,
    )


def channel_credentials(tls: TLSSettings) -> grpc.ChannelCredentials | None:
    """A channel's TLS credentials, its own certificate presented when it has one (None: plaintext)."""
    if not tls.client:
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=_read(tls.ca),
        private_key=_read(tls.key) if tls.server else None,
        certificate_chain=_read(tls.cert) if tls.server else None,
    )


#: How soon a channel tries a peer again after failing to connect: from 0.2 s, doubling to at most 2 s
#: (gRPC's own: from 1 s to 120 s). A service instance killed and started again a few seconds later
#: (a table instance's peers forward to it) was otherwise unreachable for seconds after it was back.
RECONNECT_BACKOFF = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
)


def channel(target: str, tls: TLSSettings | None = None) -> grpc.aio.Channel:
    """A channel to `target`, TLS as `tls` says (None: this process's TLS_* settings); a token on every
    call: `servicekit.credentials`."""
    credentials = channel_credentials(tls if tls is not None else TLSSettings.from_env())
    # Several addresses (`ipv4:a:1,b:2`: a service's replicas): calls go round robin to those that answer,
    # and the certificate is checked against the addresses' host (the target names no host of its own).
    options: list[tuple[str, str | int]] = list(RECONNECT_BACKOFF)
    if "," in target:
        options.append(("grpc.lb_policy_name", "round_robin"))
        if credentials is not None:
            first = target.split(":", 1)[1].split(",", 1)[0] if target.startswith("ipv4:") else target.split(",", 1)[0]
            options.append(("grpc.ssl_target_name_override", first.rsplit(":", 1)[0]))
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, credentials, options=options)


def nats_context(tls: TLSSettings) -> ssl.SSLContext | None:
    """The NATS client's TLS context: the server verified against TLS_CA, this process's certificate
    presented (a server with `verify` asks for it); None: plaintext unless the server requires TLS."""
    if not tls.client:
        return None
    context = ssl.create_default_context(cafile=tls.ca)
    if tls.server:
        context.load_cert_chain(tls.cert, tls.key)
    return context
