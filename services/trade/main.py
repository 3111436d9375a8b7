"""The trade service: wiring of settings, Postgres, JetStream, the outbox relay, the table-event
consumer, a gRPC channel to the table service, gRPC and metrics.

Run: `python -m services.trade.main` with NATS_URL, DATABASE_URL and TABLE_TARGET set.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import grpc

from monopoly.v1 import table_pb2_grpc
from servicekit import bus, db, grpcserver, lifecycle, metrics
from servicekit.outbox import Relay
from servicekit.settings import Settings

from .api import SERVICE_NAME, TradeService, register
from .handlers import build_consumers
from .trades import Trades

log = logging.getLogger("trade")
MIGRATIONS = Path(__file__).parent / "migrations"


async def serve(settings: Settings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("trade service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    pool = await db.create_pool(settings.database_url, max_size=8, schema="trade")
    await db.migrate(pool, "trade", MIGRATIONS)
    nc, js = await bus.connect(settings.nats_url)
    relay = Relay(pool, js, "trade")
    channel = grpc.aio.insecure_channel(settings.table_target)
    trades = Trades(pool, table_pb2_grpc.TableServiceStub(channel), settings.token_secret, relay.wake)
    relay_task = asyncio.create_task(relay.run(), name="outbox-relay")
    await trades.load_open()
    consumers = build_consumers(trades)
    await consumers.start(js)
    server, port, _ = await grpcserver.start_server(
        settings.host,
        settings.trade_grpc_port,
        register(TradeService(trades)),
        [SERVICE_NAME],
        token_secret=settings.token_secret,
    )
    metrics.serve_metrics(settings.trade_metrics_port, settings.host)
    log.info("trade service on %s:%s, table service at %s", settings.host, port, settings.table_target)
    print(f"trade service ready on {settings.host}:{port}", flush=True)
    if ready is not None:
        ready.set()
    await lifecycle.until_stopped(stop)
    await server.stop(grace=2)
    await consumers.stop()
    relay.stop()
    await relay_task
    await channel.close()
    await nc.drain()
    await pool.close()


def main() -> None:
    lifecycle.run(serve)


if __name__ == "__main__":
    main()
