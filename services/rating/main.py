"""The rating service: wiring of settings, Postgres, the table-event consumer, gRPC and metrics.

Run: `python -m services.rating.main` with NATS_URL and DATABASE_URL set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path

from faststream.nats import NatsBroker

from servicekit import bus, db, grpcserver, metrics
from servicekit.settings import Settings

from .api import SERVICE_NAME, RatingService, register
from .games import Games
from .handlers import make_router

log = logging.getLogger("rating")
MIGRATIONS = Path(__file__).parent / "migrations"


async def serve(settings: Settings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("rating service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    pool = await db.create_pool(settings.database_url, max_size=8, schema="rating")
    await db.migrate(pool, "rating", MIGRATIONS)
    nc, _ = await bus.connect(settings.nats_url)  # declares the streams the consumer reads
    games = Games(pool)
    broker = NatsBroker(settings.nats_url, log_level=logging.DEBUG)  # a log line per message is too many
    broker.include_router(make_router(games))
    await broker.start()
    server, port, _ = await grpcserver.start_server(
        settings.host, settings.rating_grpc_port, register(RatingService(games)), [SERVICE_NAME]
    )
    metrics.serve_metrics(settings.rating_metrics_port, settings.host)
    log.info("rating service on %s:%s", settings.host, port)
    print(f"rating service ready on {settings.host}:{port}", flush=True)
    if ready is not None:
        ready.set()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(grace=2)
    await broker.stop()
    await nc.drain()
    await pool.close()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    asyncio.run(serve(Settings.from_env()))


if __name__ == "__main__":
    main()
