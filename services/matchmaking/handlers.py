"""The matchmaking service's event subscriber: the tables' signals, for the end of its matches.

One durable consumer ("matchmaking-table-signals") of the tables' lifecycle
signals (`servicekit.signals`). A `GameEnded` marks the match finished (the table's players are free again) and
writes a `match.finished` outbox row, in one transaction; the update only
touches a live match, so a redelivered or late message changes nothing, and
a table this service did not form is ignored.
"""

from __future__ import annotations

import logging

from google.protobuf.message import DecodeError

from engine.events import GameEnded
from monopoly.v1 import common_pb2
from servicekit import bus, signals
from servicekit.consumers import LAZY_GATHER_S, Consumers, durable_consumer
from servicekit.wire import event_from_proto

from .matcher import Matchmaker

log = logging.getLogger("matchmaking")

DURABLE = "matchmaking-table-signals"
#: The table signals this service acts on (`servicekit.signals`).
TOPICS = ("lifecycle",)


async def handle_batch(mm: Matchmaker, batch: common_pb2.EventBatch) -> None:
    for env in batch.events:
        if env.type != "GameEnded":
            continue
        event = event_from_proto(env.payload)
        if isinstance(event, GameEnded):
            await mm.finish(env.table_id, event.winner, list(event.places))


def build_consumers(mm: Matchmaker) -> Consumers:
    consumers = Consumers()

    @durable_consumer(consumers, signals.subjects(*TOPICS), bus.TABLE_SIGNALS, DURABLE, gather_s=LAZY_GATHER_S)
    async def on_table_events(body: bytes) -> None:
        try:
            batch = common_pb2.EventBatch.FromString(body)
        except DecodeError:  # never readable, however often it comes again: dropped
            log.warning("a table signal is not an EventBatch; dropped")
            return
        await handle_batch(mm, batch)

    return consumers
