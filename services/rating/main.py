"""The rating service: its parts for `servicekit.runner` (settings in `settings.py`): the
table-event and match-event consumers and gRPC; it publishes nothing, so it has no outbox.

Run: `python -m services.rating.main` with NATS_URL and DATABASE_URL set. Besides the common
settings it reads RATING_MIN_REAL_MINUTES (float, default 10: R1's minimum real time of a rated
game; `ratings.Thresholds`). Platforms whose games are short on purpose (tests, demos of bots)
lower it; R1's 10 rounds stay.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from servicekit import bus
from servicekit.runner import ServiceSpec, run_service

from .api import SERVICE_NAME, RatingService, register
from .games import Games
from .handlers import build_consumers
from .settings import RatingSettings

log = logging.getLogger("rating")
MIGRATIONS = Path(__file__).parent / "migrations"


def formed_reader(js: JetStreamContext) -> Callable[[str], Awaitable[bytes | None]]:
    """Reads a table's `match.formed` message straight from matchmaking's stream (None: none)."""

    async def fetch(table_id: str) -> bytes | None:
        try:
            msg = await js.get_last_msg(bus.MATCH_EVENTS.name, bus.match_subject(table_id))
        except NotFoundError:
            return None
        data: bytes = msg.data
        return data

    return fetch


def spec(settings: RatingSettings) -> ServiceSpec[Games]:
    async def start(games: Games) -> None:
        log.info("rating service: %s", settings.thresholds)

    return ServiceSpec(
        settings=settings.base,
        migrations=MIGRATIONS,
        schema="rating",
        outbox=False,
        build=lambda rt: Games(rt.pool, settings.thresholds, formed_reader(rt.js)),
        start=start,
        consumers=build_consumers,
        grpc=lambda games: register(RatingService(games)),
        grpc_names=[SERVICE_NAME],
    )


def main() -> None:
    run_service(spec(RatingSettings.from_env()))


if __name__ == "__main__":
    main()
