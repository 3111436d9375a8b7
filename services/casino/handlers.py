"""The casino service's event subscriber: the tables' signals, for the bets the tables open.

One durable consumer ("casino-table-signals") of the table signals of topics
"casino" and "lifecycle" (`servicekit.signals`). A `CasinoOpened` with a
deadline (the table delegates its casino) opens a bet whose id is the event's
natural key `<table_id>:<seq>`; `GameEnded`, and the bettor's
`PlayerBankrupt`, close it unsettled, and void a bet settled here whose result
the table had not applied (its `BetSettled`, which marks a bet as applied, had
not come); `GamePaused` / `GameResumed` freeze and move its timer (E5). Each handled event is recorded in the same
transaction as its effect, so a redelivered batch changes nothing.
"""

from __future__ import annotations

import logging

from google.protobuf.message import DecodeError

from engine.casino import BetSettled, CasinoOpened
from engine.events import GameResumed, PlayerBankrupt
from monopoly.v1 import common_pb2
from servicekit import bus, signals
from servicekit.consumers import Consumers, durable_consumer
from servicekit.errors import BadRequest
from servicekit.wire import event_from_proto

from .bets import CONSUMER, Casino, wall_ms

log = logging.getLogger("casino")

DURABLE = CONSUMER
#: The table signals this service acts on (`servicekit.signals`).
TOPICS = ("casino", "lifecycle")
#: The table events the casino acts on; every other event is skipped without decoding.
RELEVANT = frozenset({"CasinoOpened", "BetSettled", "GameEnded", "PlayerBankrupt", "GamePaused", "GameResumed"})


def wall_deadline(env: common_pb2.Envelope, deadline_game_ms: int) -> int:
    """The wall time (unix ms) of a game-time deadline, from the envelope's clock."""
    at = env.occurred_at
    scale = at.clock_scale if at.clock_scale > 0 else 1
    return int(at.wall_unix_ms + (deadline_game_ms - at.game_ms) / scale)


async def handle_envelope(casino: Casino, env: common_pb2.Envelope) -> None:
    kind = env.type
    if kind not in RELEVANT:
        return
    table_id = env.table_id
    # Every effect but the open (its natural key is the bet id) records its event as handled in its
    # own transaction, so a redelivery changes nothing.
    if kind == "GameEnded":
        await casino.close_table(table_id, env.seq)
        return
    if kind == "GamePaused":  # no fields to decode
        await casino.pause(table_id, env.seq, True)
        return
    try:
        event = event_from_proto(env.payload)
    except (BadRequest, KeyError, ValueError):  # unreadable: redelivering it would never help
        log.warning("table %s seq %d: unreadable %s skipped", table_id, env.seq, kind)
        return
    if isinstance(event, CasinoOpened):
        if event.deadline >= 0:  # the table delegates its casino (cash and deadline are set)
            opened_at = env.occurred_at.wall_unix_ms
            window = max(0, wall_deadline(env, event.deadline) - opened_at)  # the time the table gave, in wall ms
            # E2: the window runs from the table's event, or from now if this service hears of it later (it
            # was restarting, or NATS away): nobody could bet meanwhile, as the auction service's bidders
            deadline = max(opened_at, wall_ms()) + window
            await casino.open(table_id, env.seq, event.seat, event.cash, deadline, window)
    elif isinstance(event, BetSettled):  # the table applied a result: that bet stands
        await casino.applied(table_id, event.seat, env.seq)
    elif isinstance(event, PlayerBankrupt):
        await casino.close_table(table_id, env.seq, event.seat)
    elif isinstance(event, GameResumed):
        scale = env.occurred_at.clock_scale or 1
        await casino.pause(table_id, env.seq, False, event.paused_ms // scale)


def build_consumers(casino: Casino) -> Consumers:
    consumers = Consumers()

    @durable_consumer(consumers, signals.subjects(*TOPICS), bus.TABLE_SIGNALS, DURABLE, exclusive=True)
    async def on_table_events(body: bytes) -> None:
        try:
            batch = common_pb2.EventBatch.FromString(body)
        except DecodeError:  # never readable, however often it comes: drop it (acked)
            log.warning("a table signal is not an EventBatch (%d bytes): skipped", len(body))
            return
        for env in batch.events:
            await handle_envelope(casino, env)

    return consumers
