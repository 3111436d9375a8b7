"""The rating service: wiring of settings, Postgres, the table-event and match-event consumers,
gRPC and metrics.

Run: `python -m services.rating.main` with NATS_URL and DATABASE_URL set. Besides the common
settings it reads RATING_MIN_REAL_MINUTES (float, default 10: R1's minimum real time of a rated
game; `ratings.Thresholds`). Platforms whose games are short on purpose (tests, demos of bots)
lower it; R1's 10 rounds stay.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from servicekit import bus, db, grpcserver, lifecycle, metrics
from servicekit.settings import Settings

from .api import SERVICE_NAME, RatingService, register
from .games import Games
from .handlers import build_consumers
from .ratings import Thresholds

log = logging.getLogger("rating")
MIGRATIONS = Path(__file__).parent / "migrations"


def formed_reader(js: JetStreamContext) -> Callable[[str], Awaitable[bytes | None]]:
    """Reads a table's `match.formed` message straight from matchmaking's stream (None: none)."""

    async def fetch(table_id: str) -> bytes | None:
        try:
            msg = await js.get_last_msg(bus.MATCH_EVENTS.name, bus.match_subject(table_id))
        except NotFoundError:
            return None
        return msg.data

    return fetch


async def serve(settings: Settings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("rating service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    thresholds = Thresholds.from_env()
    pool = await db.create_pool(settings.database_url, max_size=8, schema="rating")
    await db.migrate(pool, "rating", MIGRATIONS)
    nc, js = await bus.connect(settings.nats_url)  # declares the streams the consumers read
    games = Games(pool, thresholds, formed_reader(js))
    consumers = build_consumers(games)
    await consumers.start(js)
    server, port, _ = await grpcserver.start_server(
        settings.host,
        settings.rating_grpc_port,
        register(RatingService(games)),
        [SERVICE_NAME],
        token_secret=settings.token_secret,
    )
    metrics.serve_metrics(settings.rating_metrics_port, settings.host)
    log.info("rating service on %s:%s (%s)", settings.host, port, thresholds)
    print(f"rating service ready on {settings.host}:{port}", flush=True)
    if ready is not None:
        ready.set()
    await lifecycle.until_stopped(stop)
    await server.stop(grace=2)
    await consumers.stop()
    await nc.drain()
    await pool.close()


def main() -> None:
    lifecycle.run(serve)


if __name__ == "__main__":
    main()
