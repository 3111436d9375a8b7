"""The rating service's gRPC API (proto/monopoly/v1/rating.proto): reads only."""

from __future__ import annotations

import asyncpg
import grpc

from monopoly.v1 import rating_pb2, rating_pb2_grpc
from servicekit.errors import BadRequest, NotFound
from servicekit.grpcserver import Registration

from . import store
from .games import Games
from .ratings import POOLS, QUESTS

SERVICE_NAME = rating_pb2.DESCRIPTOR.services_by_name["RatingService"].full_name


def _player(value: str) -> str:
    if not value or len(value) > 128:
        raise BadRequest("player is required")
    return value


def _ms(ts: object) -> int:
    return int(ts.timestamp() * 1000) if ts is not None else 0  # type: ignore[attr-defined]


def _entry(r: asyncpg.Record) -> rating_pb2.HistoryEntry:
    return rating_pb2.HistoryEntry(
        table_id=r["table_id"],
        player=r["player"],
        mode=r["mode"],
        seat=r["seat"],
        place=r["place"],
        players=r["players"],
        rated=r["rated"],
        pool=r["pool"] or "",
        mu_before=r["mu_before"] or 0.0,
        mu_after=r["mu_after"] or 0.0,
        sigma_before=r["sigma_before"] or 0.0,
        sigma_after=r["sigma_after"] or 0.0,
        ordinal_delta=r["ordinal_delta"],
        xp=r["xp"],
        reason=r["reason"],
        rounds=r["rounds"],
        real_ms=r["real_ms"],
        ended_unix_ms=r["ended_wall_ms"],
        achievements=list(r["achievements"]),
    )


class RatingService(rating_pb2_grpc.RatingServiceServicer):
    def __init__(self, games: Games) -> None:
        self.pool = games.pool

    async def GetProfile(
        self, request: rating_pb2.GetProfileRequest, context: grpc.aio.ServicerContext
    ) -> rating_pb2.Profile:
        player = _player(request.player)
        async with self.pool.acquire() as conn:
            totals = await store.profile(conn, player)
            ratings = await store.ratings_of(conn, player)
            achievements = await store.achievements_of(conn, player)
            quests = {r["quest"]: r for r in await store.quests_of(conn, player)}
        return rating_pb2.Profile(
            player=player,
            ratings=[
                rating_pb2.PoolRating(
                    pool=r["pool"], mu=r["mu"], sigma=r["sigma"], ordinal=r["ordinal"], games=r["games"]
                )
                for r in ratings
            ],
            xp=totals["xp"] if totals else 0,
            games=totals["games"] if totals else 0,
            rated_games=totals["rated_games"] if totals else 0,
            achievements=[
                rating_pb2.Achievement(
                    achievement=a["achievement"], table_id=a["table_id"], granted_unix_ms=_ms(a["granted_at"])
                )
                for a in achievements
            ],
            quests=[
                rating_pb2.Quest(
                    quest=name,
                    progress=quests[name]["progress"] if name in quests else 0,
                    target=target,
                    completed=name in quests and quests[name]["completed_at"] is not None,
                )
                for name, (_, target) in QUESTS.items()
            ],
        )

    async def Leaderboard(
        self, request: rating_pb2.LeaderboardRequest, context: grpc.aio.ServicerContext
    ) -> rating_pb2.LeaderboardPage:
        pool = request.pool or "ffa"
        if pool not in POOLS:
            raise BadRequest(f"pool must be one of {', '.join(POOLS)}")
        size = request.page_size or 20
        if not 1 <= size <= 100 or request.page < 0:
            raise BadRequest("page_size is 1-100 and page at least 0")
        offset = request.page * size
        total, rows = await store.leaderboard(self.pool, pool, offset, size)
        return rating_pb2.LeaderboardPage(
            pool=pool,
            page=request.page,
            page_size=size,
            total=total,
            entries=[
                rating_pb2.LeaderboardEntry(
                    rank=offset + i + 1,
                    player=r["player"],
                    ordinal=r["ordinal"],
                    mu=r["mu"],
                    sigma=r["sigma"],
                    games=r["games"],
                    display_name=r["display_name"],
                )
                for i, r in enumerate(rows)
            ],
        )

    async def History(
        self, request: rating_pb2.HistoryRequest, context: grpc.aio.ServicerContext
    ) -> rating_pb2.HistoryPage:
        player = _player(request.player)
        limit = request.limit or 50
        if not 1 <= limit <= 200:
            raise BadRequest("limit is 1-200")
        rows = await store.history(self.pool, player, limit)
        return rating_pb2.HistoryPage(player=player, entries=[_entry(r) for r in rows])

    async def GetGame(
        self, request: rating_pb2.GetGameRequest, context: grpc.aio.ServicerContext
    ) -> rating_pb2.GameResult:
        if not request.table_id or len(request.table_id) > 64:
            raise BadRequest("table_id is required")
        verdict, rows = await store.game(self.pool, request.table_id)
        if verdict is None:
            raise NotFound(f"no finished game {request.table_id} (not ended, or not consumed yet)")
        return rating_pb2.GameResult(
            table_id=verdict["table_id"],
            mode=verdict["mode"],
            rated=verdict["rated"],
            pool=verdict["pool"] or "",
            reason=verdict["reason"],
            rounds=verdict["rounds"],
            real_ms=verdict["real_ms"],
            ended_unix_ms=verdict["ended_wall_ms"],
            players=[_entry(r) for r in rows],
        )


def register(service: RatingService) -> list[Registration]:
    return [lambda server: rating_pb2_grpc.add_RatingServiceServicer_to_server(service, server)]


__all__ = ["SERVICE_NAME", "RatingService", "register"]
