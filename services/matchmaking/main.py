"""The matchmaking service: its parts for `servicekit.runner` (settings in `settings.py`): the
matcher's loop, the table-event consumer, channels to the table and rating services, gRPC.

Run: `python -m services.matchmaking.main` with NATS_URL and DATABASE_URL set; its own settings are
listed in `settings.py`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from monopoly.v1 import rating_pb2, rating_pb2_grpc
from servicekit.routing import RoutedTableStub
from servicekit.runner import Runtime, ServiceSpec, run_service

from .api import SERVICE_NAME, MatchmakingService, register
from .handlers import build_consumers
from .matcher import Matchmaker, RatingLookup
from .settings import MatchmakingSettings

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


@dataclass
class Matching:
    """The matchmaker and its loop (`Matchmaker.run`), started after recovery and stopped last."""

    mm: Matchmaker
    loop: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.loop = asyncio.create_task(self.mm.run(), name="matcher")
        log.info("matchmaking service: %s", self.mm.rules)

    async def stop(self) -> None:
        self.mm.stop()
        if self.loop is not None:
            await self.loop


def spec(settings: MatchmakingSettings) -> ServiceSpec[Matching]:
    def build(rt: Runtime) -> Matching:
        rating = None
        if settings.rating_target:
            rating = rating_pb2_grpc.RatingServiceStub(rt.channel(settings.rating_target))
        mm = Matchmaker(
            rt.pool,
            RoutedTableStub(rt.channel(settings.table_target), rt.channel),  # to the instance that runs a table
            settings.base.token_secret,
            settings.rules,
            settings.default_clock_scale,
            settings.external_subprotocols,
            rating_lookup=rating_of(rating) if rating is not None else None,
        )
        mm.relay_wake = rt.wake_relay
        return Matching(mm)

    return ServiceSpec(
        settings=settings.base,
        migrations=MIGRATIONS,
        schema="matchmaking",
        build=build,
        start=Matching.start,
        consumers=lambda m: build_consumers(m.mm),
        grpc=lambda m: register(MatchmakingService(m.mm)),
        grpc_names=[SERVICE_NAME],
        stop=Matching.stop,
    )


def main() -> None:
    run_service(spec(MatchmakingSettings.from_env()))


if __name__ == "__main__":
    main()
