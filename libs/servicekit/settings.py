"""Settings from the environment, with defaults that work on a laptop."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .auth import DEV_TOKEN_SECRET


@dataclass(frozen=True, slots=True)
class Settings:
    nats_url: str
    database_url: str
    table_grpc_port: int
    table_metrics_port: int
    host: str
    #: Tables run their game clock this many times faster than real time unless created otherwise (E6).
    default_clock_scale: int
    #: Events between two snapshots of a table in Postgres.
    snapshot_every: int
    auction_grpc_port: int = 50052
    auction_metrics_port: int = 9102
    trade_grpc_port: int = 50053
    trade_metrics_port: int = 9103
    casino_grpc_port: int = 50054
    casino_metrics_port: int = 9104
    rating_grpc_port: int = 50055
    rating_metrics_port: int = 9105
    matchmaking_grpc_port: int = 50056
    matchmaking_metrics_port: int = 9106
    #: Where the table service answers (the trade service executes accepted trades there).
    table_target: str = "127.0.0.1:50051"
    #: HMAC key of seat and service tokens, shared by every service.
    token_secret: str = DEV_TOKEN_SECRET

    @staticmethod
    def from_env(env: dict[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        table_port = int(e.get("TABLE_GRPC_PORT", "50051"))
        return Settings(
            nats_url=e.get("NATS_URL", ""),
            database_url=e.get("DATABASE_URL", ""),
            table_grpc_port=table_port,
            table_metrics_port=int(e.get("TABLE_METRICS_PORT", "9101")),
            host=e.get("SERVICE_HOST", "127.0.0.1"),
            default_clock_scale=int(e.get("CLOCK_SCALE", "1")),
            snapshot_every=int(e.get("SNAPSHOT_EVERY", "500")),
            auction_grpc_port=int(e.get("AUCTION_GRPC_PORT", "50052")),
            auction_metrics_port=int(e.get("AUCTION_METRICS_PORT", "9102")),
            trade_grpc_port=int(e.get("TRADE_GRPC_PORT", "50053")),
            trade_metrics_port=int(e.get("TRADE_METRICS_PORT", "9103")),
            casino_grpc_port=int(e.get("CASINO_GRPC_PORT", "50054")),
            casino_metrics_port=int(e.get("CASINO_METRICS_PORT", "9104")),
            rating_grpc_port=int(e.get("RATING_GRPC_PORT", "50055")),
            rating_metrics_port=int(e.get("RATING_METRICS_PORT", "9105")),
            matchmaking_grpc_port=int(e.get("MATCHMAKING_GRPC_PORT", "50056")),
            matchmaking_metrics_port=int(e.get("MATCHMAKING_METRICS_PORT", "9106")),
            table_target=e.get("TABLE_TARGET", f"127.0.0.1:{table_port}"),
            token_secret=e.get("TOKEN_SECRET", DEV_TOKEN_SECRET),
        )
