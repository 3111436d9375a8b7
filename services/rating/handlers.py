"""The rating service's event subscriber: the table stream, for the games the tables play.

One durable consumer ("rating-table-events") of every table's events. Each
batch (one committed command) updates the table's small record with
idempotent upserts (`TableCreated`; the last round begun; jackpot hits), and
a `GameEnded` judges the game once: its verdict row is inserted in the same
transaction as every rating, XP, achievement and quest change, so a
redelivered batch changes nothing. A failure (Postgres away, a `GameEnded`
before its `TableCreated`) raises: the message is NACKed and comes again.
A message that is not an `EventBatch` at all is logged and dropped: no
redelivery would ever read it.
"""

from __future__ import annotations

import logging

from faststream.nats import NatsRouter
from google.protobuf.message import DecodeError

from monopoly.v1 import common_pb2
from servicekit import bus
from servicekit.consumers import durable_consumer

from .games import Games

log = logging.getLogger("rating")

DURABLE = "rating-table-events"


def make_router(games: Games) -> NatsRouter:
    router = NatsRouter()

    @durable_consumer(router, "monopoly.table.*.events", bus.TABLE_EVENTS, DURABLE)
    async def on_table_events(body: bytes) -> None:
        try:
            batch = common_pb2.EventBatch.FromString(body)
        except DecodeError:
            log.warning("dropped a message on the table stream that is not an EventBatch (%d bytes)", len(body))
            return
        await games.on_batch(batch.events)

    return router
