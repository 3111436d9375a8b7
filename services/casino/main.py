"""The casino service: wiring of settings, Postgres, JetStream, the outbox relay, the table-event
consumer, gRPC and metrics.

Run: `python -m services.casino.main` with NATS_URL and DATABASE_URL set.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from servicekit import bus, db, grpcserver, lifecycle, metrics
from servicekit.outbox import Relay
from servicekit.settings import Settings

from .api import SERVICE_NAME, CasinoService, register
from .bets import Casino
from .handlers import build_consumers

log = logging.getLogger("casino")
MIGRATIONS = Path(__file__).parent / "migrations"


async def serve(settings: Settings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("casino service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    pool = await db.create_pool(settings.database_url, max_size=8, schema="casino")
    await db.migrate(pool, "casino", MIGRATIONS)
    nc, js = await bus.connect(settings.nats_url)
    relay = Relay(pool, js, "casino")
    casino = Casino(pool)
    casino.relay_wake = relay.wake
    relay_task = asyncio.create_task(relay.run(), name="outbox-relay")
    recovered = await casino.recover()
    consumers = build_consumers(casino)
    await consumers.start(js)
    server, port, _ = await grpcserver.start_server(
        settings.host,
        settings.casino_grpc_port,
        register(CasinoService(casino)),
        [SERVICE_NAME],
        token_secret=settings.token_secret,
    )
    metrics.serve_metrics(settings.casino_metrics_port, settings.host)
    log.info("casino service on %s:%s, %d open bets resumed", settings.host, port, recovered)
    print(f"casino service ready on {settings.host}:{port} ({recovered} open bets resumed)", flush=True)
    if ready is not None:
        ready.set()
    await lifecycle.until_stopped(stop)
    await server.stop(grace=2)
    await consumers.stop()
    casino.stop()
    relay.stop()
    await relay_task
    await nc.drain()
    await pool.close()


def main() -> None:
    lifecycle.run(serve)


if __name__ == "__main__":
    main()
