"""The matchmaking service: wiring of settings, Postgres, JetStream, the outbox relay, the matcher,
the table-event consumer, gRPC and metrics.

Run: `python -m services.matchmaking.main` with NATS_URL and DATABASE_URL set. Besides the common
settings it reads MATCHMAKING_SMALL_TABLE_WAIT_S (30), MATCHMAKING_BAND_BASE (5),
MATCHMAKING_BAND_PER_S (0.5), MATCHMAKING_TICK_MS (200) (`queues.Rules`) and
EXTERNAL_SUBPROTOCOLS (a comma list of the sub-protocols the platform runs in services; default none).
Tables are created with the clock scale CLOCK_SCALE.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import grpc

from engine.config import SUB_PROTOCOLS
from monopoly.v1 import rating_pb2, rating_pb2_grpc, table_pb2_grpc
from servicekit import bus, db, grpcserver, lifecycle, metrics
from servicekit.outbox import Relay
from servicekit.settings import Settings

from .api import SERVICE_NAME, MatchmakingService, register
from .handlers import build_consumers
from .matcher import Matchmaker, RatingLookup
from .queues import Rules

log = logging.getLogger("matchmaking")
MIGRATIONS = Path(__file__).parent / "migrations"


def rating_of(rating: rating_pb2_grpc.RatingServiceStub) -> RatingLookup:
    """A player's rating in a pool from the rating service (openskill's start, mu 25 and sigma 25/3,
    for a player it has not rated yet, so new and rated players share one scale)."""

    async def lookup(player_id: str, pool: str) -> tuple[float, float]:
        profile = await rating.GetProfile(rating_pb2.GetProfileRequest(player=player_id), timeout=2)
        for r in profile.ratings:
            if r.pool == pool:
                return r.mu, r.sigma
        return 25.0, 25.0 / 3

    return lookup


def external_subprotocols(env: dict[str, str] | None = None) -> tuple[str, ...]:
    raw = (os.environ if env is None else env).get("EXTERNAL_SUBPROTOCOLS", "")
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    unknown = sorted(set(names) - set(SUB_PROTOCOLS))
    if unknown:
        raise SystemExit(f"EXTERNAL_SUBPROTOCOLS: unknown {', '.join(unknown)}; one of {', '.join(SUB_PROTOCOLS)}")
    return names


async def serve(settings: Settings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    if not settings.database_url or not settings.nats_url:
        raise SystemExit("matchmaking service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    rules = Rules.from_env()
    pool = await db.create_pool(settings.database_url, max_size=8, schema="matchmaking")
    await db.migrate(pool, "matchmaking", MIGRATIONS)
    nc, js = await bus.connect(settings.nats_url)
    relay = Relay(pool, js, "matchmaking")
    channel = grpc.aio.insecure_channel(settings.table_target)
    rating_target = os.environ.get("RATING_TARGET", "")
    rating_channel = grpc.aio.insecure_channel(rating_target) if rating_target else None
    mm = Matchmaker(
        pool,
        table_pb2_grpc.TableServiceStub(channel),
        settings.token_secret,
        rules,
        settings.default_clock_scale,
        external_subprotocols(),
        rating_lookup=rating_of(rating_pb2_grpc.RatingServiceStub(rating_channel)) if rating_channel else None,
    )
    mm.relay_wake = relay.wake
    relay_task = asyncio.create_task(relay.run(), name="outbox-relay")
    matcher_task = asyncio.create_task(mm.run(), name="matcher")
    consumers = build_consumers(mm)
    await consumers.start(js)
    server, port, _ = await grpcserver.start_server(
        settings.host,
        settings.matchmaking_grpc_port,
        register(MatchmakingService(mm)),
        [SERVICE_NAME],
        token_secret=settings.token_secret,
    )
    metrics.serve_metrics(settings.matchmaking_metrics_port, settings.host)
    log.info("matchmaking service on %s:%s (%s)", settings.host, port, rules)
    print(f"matchmaking service ready on {settings.host}:{port}", flush=True)
    if ready is not None:
        ready.set()
    await lifecycle.until_stopped(stop)
    await server.stop(grace=2)
    await consumers.stop()
    mm.stop()
    await matcher_task
    relay.stop()
    await relay_task
    await channel.close()
    if rating_channel is not None:
        await rating_channel.close()
    await nc.drain()
    await pool.close()


def main() -> None:
    lifecycle.run(serve)


if __name__ == "__main__":
    main()
