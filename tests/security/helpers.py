"""A table service in the test's own process, on the session's database, with quotas of the test's choosing."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import asyncpg

from client import connect
from client.platform import Platform
from monopoly.v1 import table_pb2_grpc
from servicekit import grpcserver
from servicekit.quotas import QuotaSettings
from services.table.api import TableService, register
from services.table.tables import Tables


@contextlib.asynccontextmanager
async def table_service(
    platform: Platform, pool: asyncpg.Pool, quotas: QuotaSettings
) -> AsyncIterator[table_pb2_grpc.TableServiceStub]:
    """A stub of a table service started here with `quotas` (the platform's key), stopped after."""
    tables = Tables(pool, token_secret=platform.token_secret)
    server, port, _ = await grpcserver.start_server(
        "127.0.0.1", 0, register(TableService(tables)), ["monopoly.v1.TableService"], quota_settings=quotas
    )
    channel, stub = connect(f"127.0.0.1:{port}")
    try:
        yield stub
    finally:
        await channel.close()
        await server.stop(None)
        await tables.stop()
        grpcserver.QUOTAS = None
