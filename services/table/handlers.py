"""The table service's event subscribers: results of the sub-protocols run by services.

The auction and casino services publish their results; the table reads only
those (subjects of kind `settled`, and `declined` for bets, not every bid and
bet opened) and applies each once as a system command (`SettleAuction`, `SettleBet`) whose command id
names the result, so a redelivered message is answered from the table's
record of that id (written in the same transaction as the events) and
changes nothing. A result the table refuses (the game moved on, it ended) is
logged and acked: redelivering it would never help. Anything else (Postgres
away) raises, and the message is NACKed and comes again.
"""

from __future__ import annotations

import logging

from prometheus_client import Counter

from engine import BANK, Command, RuleViolation, SettleAuction, SettleBet
from monopoly.v1 import auction_pb2, casino_pb2
from servicekit import bus
from servicekit.consumers import Consumers, durable_consumer
from servicekit.errors import NotFound

from .tables import Tables

log = logging.getLogger(__name__)

RESULTS = Counter("table_results_total", "Sub-protocol results consumed, by kind and outcome", ["kind", "outcome"])


def build_consumers(tables: Tables) -> Consumers:
    consumers = Consumers()

    @durable_consumer(consumers, bus.auction_subject(kind="settled"), bus.AUCTION_EVENTS, "table-auction-settled")
    async def on_auction_event(body: bytes) -> None:
        event = auction_pb2.AuctionEvent.FromString(body)
        if event.type != "settled":
            return
        command = SettleAuction(BANK, event.auction_id, event.winner, event.price)
        await _apply(tables, event.table_id, command, f"auction:{event.table_id}:{event.auction_id}")

    @durable_consumer(
        consumers,
        [bus.casino_subject(kind="settled"), bus.casino_subject(kind="declined")],
        bus.CASINO_EVENTS,
        "table-casino-settled",
    )
    async def on_casino_event(body: bytes) -> None:
        bet = casino_pb2.CasinoEvent.FromString(body).bet
        if bet.status == "settled":
            command = SettleBet(bet.seat, bet.bet_id, tuple(bet.numbers), bet.die, bet.jackpot_hit)
        elif bet.status == "declined":
            command = SettleBet(bet.seat, bet.bet_id, (), 0, False)
        else:
            return
        await _apply(tables, bet.table_id, command, f"casino:{bet.bet_id}")

    return consumers


async def _apply(tables: Tables, table_id: str, command: Command, command_id: str) -> None:
    kind = type(command).__name__
    try:
        actor = await tables.get(table_id)
    except NotFound:
        log.warning("%s for unknown table %s dropped", kind, table_id)
        RESULTS.labels(kind, "unknown_table").inc()
        return
    try:
        await actor.submit(command, command_id, None)
    except RuleViolation as exc:
        log.info("table %s: %s %s not applied (%s): %s", table_id, kind, command_id, exc.rule, exc)
        RESULTS.labels(kind, "refused").inc()
        return
    RESULTS.labels(kind, "applied").inc()
