"""The auction service: wiring of settings, Postgres, JetStream, the outbox relay, gRPC and metrics.

Run: `python -m services.auction.main` with NATS_URL and DATABASE_URL set. Its state lives in the
Postgres schema `auction`; it consumes the tables' events and publishes on `monopoly.auction.<table>.<kind>`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from servicekit import bus, db, grpcserver, lifecycle, metrics
from servicekit.outbox import Relay
from servicekit.settings import Settings

from .api import SERVICE_NAME, AuctionService, register
from .auctions import Auctions
from .handlers import build_consumers

log = logging.getLogger("auction")
MIGRATIONS = Path(__file__).parent / "migrations"


async def serve(settings: Settings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("auction service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    pool = await db.create_pool(settings.database_url, max_size=8, schema="auction")
    await db.migrate(pool, "auction", MIGRATIONS)
    nc, js = await bus.connect(settings.nats_url)
    relay = Relay(pool, js, "auction")
    auctions = Auctions(pool)
    auctions.relay_wake = relay.wake
    relay_task = asyncio.create_task(relay.run(), name="outbox-relay")
    recovered = await auctions.recover()  # before the consumer: the table's events find their auctions
    consumers = build_consumers(auctions)
    await consumers.start(js)
    server, port, _ = await grpcserver.start_server(
        settings.host,
        settings.auction_grpc_port,
        register(AuctionService(auctions)),
        [SERVICE_NAME],
        token_secret=settings.token_secret,
    )
    metrics.serve_metrics(settings.auction_metrics_port, settings.host)
    log.info("auction service on %s:%s, %d open auctions resumed", settings.host, port, recovered)
    print(f"auction service ready on {settings.host}:{port} ({recovered} auctions resumed)", flush=True)
    if ready is not None:
        ready.set()
    await lifecycle.until_stopped(stop)
    await server.stop(grace=2)
    await consumers.stop()
    await auctions.stop()
    relay.stop()
    await relay_task
    await nc.drain()
    await pool.close()


def main() -> None:
    lifecycle.run(serve)


if __name__ == "__main__":
    main()
