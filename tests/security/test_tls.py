"""TLS on a real service: the table service started with a certificate from a CA made for this test,
mTLS required, talking to a NATS that requires TLS and client certificates (servicekit.tls,
servicekit.certs). A plaintext client is refused, a TLS client trusting the CA and showing its
certificate is served, a TLS client without a certificate is refused; the same on NATS."""

from __future__ import annotations

import secrets
import ssl
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import grpc
import nats
import nats.errors
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from client.platform import Platform
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit import auth, certs, credentials, natsauth
from servicekit import tls as tlskit
from servicekit.embedded import nats_server
from servicekit.natsauth import BusUsers
from servicekit.settings import TLSSettings

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Pki:
    """A throwaway CA and what it signed: the service's certificate and a client's."""

    folder: Path
    service: TLSSettings
    client: TLSSettings


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    service = certs.issue(folder, "table")  # localhost and 127.0.0.1: where the test reaches it
    client = certs.issue(folder, "client")
    return Pki(
        folder,
        TLSSettings(str(service.cert), str(service.key), str(service.ca), require_client_cert=True),
        TLSSettings(str(client.cert), str(client.key), str(client.ca)),
    )


@pytest.fixture(scope="module")
def tls_bus(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BusUsers]:
    """A NATS of its own (its streams and consumers are not the session's) requiring TLS and a client certificate."""
    data = tmp_path_factory.mktemp("tls-nats")
    nats_cert = certs.issue(pki.folder, "nats")
    tls = {
        "cert_file": str(nats_cert.cert),
        "key_file": str(nats_cert.key),
        "ca_file": str(nats_cert.ca),
        "verify": True,
    }
    with nats_server(data, tls=tls) as users:
        yield users


@pytest.fixture(scope="module")
async def tls_platform(
    pki: Pki, tls_bus: BusUsers, server_urls: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Platform]:
    """The table service with mTLS on gRPC and on NATS, in a database of its own on the session's Postgres."""
    db_url = server_urls[1]
    database = f"tls_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(db_url)
    await conn.execute(f"CREATE DATABASE {database}")
    await conn.close()
    own_db = urlsplit(db_url)._replace(path=f"/{database}").geturl()
    platform = Platform(
        tls_bus.url, own_db, tmp_path_factory.mktemp("tls-svc"), services=("table",), bus=tls_bus, tls=pki.service
    )
    await platform.start()  # its health checked over mTLS with the service's own certificate
    try:
        yield platform
    finally:
        await platform.stop()


async def check(channel: grpc.aio.Channel) -> health_pb2.HealthCheckResponse:
    async with channel:
        reply: health_pb2.HealthCheckResponse = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=5
        )
        return reply


async def test_a_plaintext_client_is_refused_and_a_tls_client_with_the_ca_and_a_certificate_is_served(
    pki: Pki, tls_platform: Platform
) -> None:
    target = tls_platform.table_target
    with pytest.raises(grpc.aio.AioRpcError) as plaintext:
        await check(grpc.aio.insecure_channel(target))
    assert plaintext.value.code() == grpc.StatusCode.UNAVAILABLE
    assert (await check(tlskit.channel(target, pki.client))).status == health_pb2.HealthCheckResponse.SERVING
    # a real call over mTLS: the table is created and served
    operator = auth.operator_token(tls_platform.token_secret, "tls-test")
    async with credentials.channel(target, operator, pki.client) as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        created = await stub.CreateTable(table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob"], seed=3))
        view = await stub.GetTable(table_pb2.GetTableRequest(table_id=created.table_id))
        assert view.table_id == created.table_id


async def test_mtls_refuses_a_client_without_a_certificate_or_with_another_ca(
    pki: Pki, tls_platform: Platform, tmp_path: Path
) -> None:
    target = tls_platform.table_target
    no_certificate = TLSSettings(ca=pki.client.ca)  # trusts the server, shows nothing
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await check(tlskit.channel(target, no_certificate))
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    stranger = certs.issue(tmp_path, "stranger")  # a certificate from a CA the service does not trust
    foreign = TLSSettings(str(stranger.cert), str(stranger.key), pki.client.ca)
    with pytest.raises(grpc.aio.AioRpcError) as refused_again:
        await check(tlskit.channel(target, foreign))
    assert refused_again.value.code() == grpc.StatusCode.UNAVAILABLE
    # and a client that does not trust the service's CA refuses the service
    with pytest.raises(grpc.aio.AioRpcError) as distrust:
        await check(tlskit.channel(target, TLSSettings(str(stranger.cert), str(stranger.key), str(stranger.ca))))
    assert distrust.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_nats_requires_tls_and_a_client_certificate(pki: Pki, tls_bus: BusUsers, tls_platform: Platform) -> None:
    password = tls_bus.passwords[natsauth.ADMIN]
    plain = {"user": natsauth.ADMIN, "password": password, "allow_reconnect": False, "max_reconnect_attempts": 0}
    with pytest.raises((nats.errors.Error, ssl.SSLError, OSError)):  # no CA: the server's certificate is not trusted
        await nats.connect(tls_bus.url, connect_timeout=3, **plain)  # type: ignore[arg-type]
    no_certificate = ssl.create_default_context(cafile=pki.client.ca)
    with pytest.raises((nats.errors.Error, ssl.SSLError, OSError)):  # verify: a client certificate is required
        await nats.connect(tls_bus.url, connect_timeout=3, tls=no_certificate, **plain)  # type: ignore[arg-type]
    context = tlskit.nats_context(pki.client)
    assert context is not None
    nc = await nats.connect(tls_bus.url, tls=context, **plain)  # type: ignore[arg-type]
    try:
        streams = {s.config.name for s in await nc.jetstream().streams_info()}
        assert "MONOPOLY_TABLE_EVENTS" in streams  # the table service, over TLS, created its streams
    finally:
        await nc.close()
