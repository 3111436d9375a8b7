"""The table service's event subscribers: results of the sub-protocols run by services.

The auction and casino services publish their results; the table reads only
those (subjects of kind `settled`, and `declined` for bets, not every bid and
bet opened) and applies each once as a system command (`SettleAuction`, `SettleBet`) whose command id
names the result, so a redelivered message is answered from the table's
record of that id (written in the same transaction as the events) and
changes nothing. A result for a table another instance runs is sent there (`_forward`: the consumers
are shared by the instances, so any of them may get it). A result the table refuses (the game moved on, it ended) is
logged and acked: redelivering it would never help. So is a second, different result for a
sub-protocol whose result the table already applied under the same id (ALREADY_EXISTS: the first
stands; only a publisher other than the service, such as an operator, can make one). Anything else
(Postgres away) raises, and the message is NACKed and comes again.
"""

from __future__ import annotations

import logging

import grpc
from prometheus_client import Counter

from engine import BANK, Command, RuleViolation, SettleAuction, SettleBet
from monopoly.v1 import auction_pb2, casino_pb2, table_pb2
from servicekit import auth, bus
from servicekit.consumers import Consumers, durable_consumer
from servicekit.errors import Conflict, Elsewhere, NotFound, Unavailable
from servicekit.wire import command_to_proto

from .tables import FORWARDER, Tables

log = logging.getLogger(__name__)

#: Results a table waits for (its phase has no timer of its own meanwhile): fetched by an instance that
#: died, they come back to the others this soon, not after the default 30 s.
RESULT_ACK_WAIT_S = 3.0

RESULTS = Counter("table_results_total", "Sub-protocol results consumed, by kind and outcome", ["kind", "outcome"])


def build_consumers(tables: Tables) -> Consumers:
    consumers = Consumers()

    @durable_consumer(
        consumers,
        bus.auction_subject(kind="settled"),
        bus.AUCTION_EVENTS,
        "table-auction-settled",
        ack_wait_s=RESULT_ACK_WAIT_S,
    )
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
        ack_wait_s=RESULT_ACK_WAIT_S,
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
    except Elsewhere as moved:
        if not moved.address:  # nobody runs it right now: kept and tried again (servicekit.consumers)
            raise
        await _forward(tables, moved.address, table_id, command, command_id)
        return
    try:
        await actor.submit(command, command_id, None)
    except RuleViolation as exc:
        log.info("table %s: %s %s not applied (%s): %s", table_id, kind, command_id, exc.rule, exc)
        RESULTS.labels(kind, "refused").inc()
        return
    except Conflict:
        _second_result(table_id, command, command_id)
        return
    RESULTS.labels(kind, "applied").inc()


def _second_result(table_id: str, command: Command, command_id: str) -> None:
    """A different result for a sub-protocol the table already settled under `command_id`: dropped."""
    log.error(
        "table %s: a second, different result %s for %s dropped; the first one applied stands",
        table_id,
        command,
        command_id,
    )
    RESULTS.labels(type(command).__name__, "conflict").inc()


async def _forward(tables: Tables, address: str, table_id: str, command: Command, command_id: str) -> None:
    """A result for a table another instance runs (the consumers are shared: any instance may get it),
    sent to that instance as the same system command with the same command id (applied once)."""
    kind = type(command).__name__
    assert tables.leases is not None
    stub = tables.leases.peer(address)
    request = table_pb2.SubmitCommandRequest(
        table_id=table_id,
        command_id=command_id,
        command=command_to_proto(command),
        seat_token=auth.service_token(tables.token_secret, FORWARDER),  # a system command: the platform's
    )
    try:
        await stub.SubmitCommand(request, timeout=30)
    except grpc.aio.AioRpcError as exc:
        if exc.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED):
            log.info("table %s at %s: %s %s not applied: %s", table_id, address, kind, command_id, exc.details())
            RESULTS.labels(kind, "refused").inc()
            return
        if exc.code() == grpc.StatusCode.ALREADY_EXISTS:
            _second_result(table_id, command, command_id)
            return
        if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise Unavailable(f"table {table_id}'s instance at {address} did not take {kind}: {exc.details()}") from exc
        raise
    RESULTS.labels(kind, "forwarded").inc()
