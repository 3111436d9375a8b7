"""The rating service's event subscribers: the table signals, for the games the tables play, and
matchmaking's match stream, for who sits at the tables it forms.

One durable consumer ("rating-table-signals") of the table signals of topics
"lifecycle", "turn" and "casino" (`servicekit.signals`), a fetch at a time
(its rounds written in one transaction). Each message updates
the table's small record with idempotent upserts (`TableCreated`; the last round begun; jackpot hits), and
a `GameEnded` judges the game once: its verdict row is inserted in the same
transaction as every rating, XP, achievement and quest change, so a
redelivered batch changes nothing. A failure (Postgres away, a `GameEnded`
before its `TableCreated`) raises: the message is NACKed and comes again.
A message that is not an `EventBatch` at all is logged and dropped: no
redelivery would ever read it.

One durable consumer ("rating-match-events") of `monopoly.match.*.formed`
(`MatchEvent`): each formed table's seats by player id with their bot flags,
recorded once (`matches`, keyed by table id). A `GameEnded` of such a table
is judged by player ids and those flags; see `games.Games.match` for the
order of arrival.
"""

from __future__ import annotations

import logging

from google.protobuf.message import DecodeError

from monopoly.v1 import common_pb2, matchmaking_pb2
from servicekit import bus, signals
from servicekit.consumers import LAZY_GATHER_S, Consumers, batch_consumer, durable_consumer

from .games import Games

log = logging.getLogger("rating")

DURABLE = "rating-table-signals"
#: The table signals this service acts on (`servicekit.signals`).
TOPICS = ("lifecycle", "turn", "casino")
MATCH_DURABLE = "rating-match-events"


def build_consumers(games: Games) -> Consumers:
    consumers = Consumers()

    def decoded(body: bytes) -> list[common_pb2.Envelope]:
        try:
            return list(common_pb2.EventBatch.FromString(body).events)
        except DecodeError:
            log.warning("dropped a table signal that is not an EventBatch (%d bytes)", len(body))
            return []

    async def on_table_events(body: bytes) -> None:
        await games.on_batch(decoded(body))

    # Exclusive: a game's rounds are recorded before its GameEnded is judged on them (one reader at a time).
    # A fetch at once: its rounds in one write (`Games.on_batches`); a message at a time if one fails.
    @batch_consumer(
        consumers,
        signals.subjects(*TOPICS),
        bus.TABLE_SIGNALS,
        DURABLE,
        on_table_events,
        gather_s=LAZY_GATHER_S,
        exclusive=True,
    )
    async def on_table_signals(bodies: list[bytes]) -> None:
        await games.on_batches([decoded(body) for body in bodies])

    @durable_consumer(consumers, "monopoly.match.*.formed", bus.MATCH_EVENTS, MATCH_DURABLE)
    async def on_match_events(body: bytes) -> None:
        try:
            event = matchmaking_pb2.MatchEvent.FromString(body)
        except DecodeError:
            log.warning("dropped a message on the match stream that is not a MatchEvent (%d bytes)", len(body))
            return
        await games.on_match(event)

    return consumers
