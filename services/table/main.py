"""The table service: wiring of settings, Postgres, JetStream, the outbox relay, gRPC and metrics.

Run: `python -m services.table.main` with NATS_URL and DATABASE_URL set
(`make run` starts everything, the embedded servers included).
"""

from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path

from servicekit import bus, db, grpcserver, lifecycle, metrics
from servicekit.outbox import Relay
from servicekit.settings import Settings

from .api import SERVICE_NAME, TableService, register
from .handlers import build_consumers
from .tables import Tables

log = logging.getLogger("table")
MIGRATIONS = Path(__file__).parent / "migrations"


async def serve(settings: Settings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("table service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    pool = await db.create_pool(settings.database_url, max_size=16)
    await db.migrate(pool, "table", MIGRATIONS)
    nc, js = await bus.connect(settings.nats_url)
    relay = Relay(pool, js, "table")
    tables = Tables(pool, settings.snapshot_every, settings.default_clock_scale, settings.token_secret)
    tables.relay_wake = relay.wake
    relay_task = asyncio.create_task(relay.run(), name="outbox-relay")
    recovered = await tables.recover()
    consumers = build_consumers(tables)
    await consumers.start(js)
    server, port, _ = await grpcserver.start_server(
        settings.host,
        settings.table_grpc_port,
        register(TableService(tables)),
        [SERVICE_NAME],
        token_secret=settings.token_secret,
    )
    metrics.serve_metrics(settings.table_metrics_port, settings.host)
    log.info("table service on %s:%s, %d unfinished tables resumed", settings.host, port, recovered)
    print(f"table service ready on {settings.host}:{port} ({recovered} tables resumed)", flush=True)
    if ready is not None:
        ready.set()
    await lifecycle.until_stopped(stop)
    await server.stop(grace=2)
    await consumers.stop()
    await tables.stop()
    relay.stop()
    await relay_task
    await nc.drain()
    await pool.close()


def main() -> None:
    # Long-lived table states make the default young-generation collections frequent and slow;
    # larger thresholds cut those pauses (the p99 of SubmitCommand) at no cost in memory that matters.
    gc.set_threshold(50_000, 20, 20)
    lifecycle.run(serve)


if __name__ == "__main__":
    main()
