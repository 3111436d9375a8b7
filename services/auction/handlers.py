"""The auction service's event subscriber: the tables' auction and lifecycle signals.

One durable consumer reads the table signals (`servicekit.signals`) of topics
"auction" and "lifecycle", in commit order. `AuctionStarted` of a table with external auctions (it carries
the bidders' limits and bid time) opens the auction: the row is keyed by
(table_id, auction_id) and inserted with its "opened" event in one
transaction, ON CONFLICT DO NOTHING, so a redelivered batch opens nothing
twice. `PlayerBankrupt` takes the player out of the table's open auction
(unless the same command ended the game: then `GameEnded` cancels it);
`GamePaused` / `GameResumed` stop and restart the bidder's clock (E5);
`AuctionLimitsChanged` replaces the bidders' limits (A3) unless the row holds
limits from a later table seq;
the table's own `AuctionSettled` (it closed the auction itself) and
`GameEnded` close it without a result of ours. Each of these is harmless
when it comes again or late: it only ever moves an open auction towards
closed, and a closed one stays as it is; a pause or resume older than the
last one applied (`pause_seq`) changes nothing.
"""

from __future__ import annotations

import logging

from engine import AuctionLimitsChanged, AuctionSettled, AuctionStarted, PlayerBankrupt
from monopoly.v1 import common_pb2
from servicekit import bus, signals
from servicekit.consumers import Consumers, durable_consumer
from servicekit.wire import event_from_proto

from .auctions import Auctions

log = logging.getLogger(__name__)

DURABLE = "auction-table-signals"
#: The table signals this service acts on (`servicekit.signals`).
TOPICS = ("auction", "lifecycle")
RELEVANT = frozenset(
    {
        "AuctionStarted",
        "AuctionLimitsChanged",
        "AuctionSettled",
        "PlayerBankrupt",
        "GamePaused",
        "GameResumed",
        "GameEnded",
    }
)


async def handle_batch(auctions: Auctions, body: bytes) -> None:
    """Apply one table batch's auction-relevant events, in order.

    A bankruptcy that decides the game (D5) leaves the table's auction as it is, and the table's
    `GameEnded` follows in the same command, so in the same batch (both are "lifecycle" signals): such
    a `PlayerBankrupt` withdraws nobody here. Withdrawn, the bidder left alone would win here an
    auction the table never settles, and `GameEnded` would find it settled instead of cancelling it."""
    batch = common_pb2.EventBatch.FromString(body)
    game_ends = any(env.type == "GameEnded" for env in batch.events)
    for env in batch.events:
        if env.type not in RELEVANT or (game_ends and env.type == "PlayerBankrupt"):
            continue
        table_id = env.table_id
        if env.type in ("GamePaused", "GameResumed"):
            await auctions.pause(table_id, env.seq, env.occurred_at.wall_unix_ms, resume=env.type == "GameResumed")
            continue
        event = event_from_proto(env.payload)
        if isinstance(event, AuctionStarted):
            if event.bid_ms <= 0 or not event.limits:
                continue  # the table runs this auction itself
            at = env.occurred_at
            await auctions.start(table_id, env.seq, event, at.wall_unix_ms, at.clock_scale)
        elif isinstance(event, AuctionLimitsChanged):
            await auctions.change_limits(table_id, env.seq, event)
        elif isinstance(event, AuctionSettled):
            await auctions.closed_by_table(table_id, event.auction_id, event.winner, event.price)
        elif isinstance(event, PlayerBankrupt):
            await auctions.withdraw(table_id, event.seat)
        else:  # GameEnded
            await auctions.game_ended(table_id)


def build_consumers(auctions: Auctions) -> Consumers:
    consumers = Consumers()

    @durable_consumer(consumers, signals.subjects(*TOPICS), bus.TABLE_SIGNALS, DURABLE, exclusive=True)
    async def on_table_events(body: bytes) -> None:
        await handle_batch(auctions, body)

    return consumers


__all__ = ["DURABLE", "build_consumers", "handle_batch"]
