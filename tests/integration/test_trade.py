"""The trade service on real NATS and Postgres, with the table service (tables delegate trades to it).

Duel tables (X3) deal the board out at the start, so every player owns
properties from the first turn; the tests drive the game through the table's
gRPC with the seats' tokens from JoinTable.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncIterator, Callable

import asyncpg
import grpc
import nats
import pytest
from nats.js import JetStreamContext

from bots import HeuristicBot
from client import platform_channel
from client.platform import Platform
from client.trade import accept, cancel, connect_trade, decline, open_for, propose, rule_of, trades
from engine import (
    Command,
    ExecuteTrade,
    Mortgage,
    Pay,
    Roll,
    Surrender,
    TableState,
    decide,
    legal_commands,
    new_game,
)
from engine.config import duel
from engine.events import DiceRolled, PaymentDue
from monopoly.v1 import common_pb2, table_pb2, table_pb2_grpc, trade_pb2, trade_pb2_grpc
from servicekit import auth, bus, signals
from servicekit.settings import token_secret
from servicekit.wire import command_to_proto, envelope, stored_event
from services.trade.handlers import DURABLE as TRADE_DURABLE
from services.trade.trades import command_id

from .helpers import join_seats, table_state

pytestmark = pytest.mark.integration

PLAYERS = ["ann", "bob", "cid"]
TRADE_COMMANDS = ("ProposeTrade", "AcceptTrade", "DeclineTrade")
#: What the test driver does when it may: the plainest way through a turn.
PREFERRED = ("Pay", "Roll", "EndTurn", "BuyProperty", "DeclineBet")


@pytest.fixture(scope="module")
def trade_platform(platform: Platform) -> Platform:
    """The session's platform (one table service per NATS: they share their durable consumers)."""
    return platform


@pytest.fixture(scope="module")
async def stubs(
    trade_platform: Platform,
) -> AsyncIterator[tuple[table_pb2_grpc.TableServiceStub, trade_pb2_grpc.TradeServiceStub]]:
    table_channel = platform_channel(trade_platform.table_target)
    trade_channel, trade_stub = connect_trade(trade_platform.target("trade"))
    try:
        yield table_pb2_grpc.TableServiceStub(table_channel), trade_stub
    finally:
        await table_channel.close()
        await trade_channel.close()


@pytest.fixture(scope="module")
async def jets(server_urls: tuple[str, str]) -> AsyncIterator[JetStreamContext]:
    nc = await nats.connect(server_urls[0])
    try:
        yield nc.jetstream()
    finally:
        await nc.close()


class Table:
    """A duel table that delegates trades, with every seat's token, driven through the table's gRPC."""

    def __init__(self, stub: table_pb2_grpc.TableServiceStub, trade: trade_pb2_grpc.TradeServiceStub) -> None:
        self.stub = stub
        self.trade = trade
        self.table_id = ""
        self.tokens: dict[int, str] = {}
        self.bot = HeuristicBot(1)

    async def create(self, seed: int = 7, mode: str = "duel") -> Table:
        reply = await self.stub.CreateTable(
            table_pb2.CreateTableRequest(mode=mode, players=PLAYERS, seed=seed, external=["trade"]), timeout=30
        )
        self.table_id = reply.table_id
        self.tokens = await join_seats(self.stub, self.table_id, len(PLAYERS))
        return self

    async def state(self) -> TableState:
        return await table_state(self.stub, self.table_id)

    async def submit(self, command: Command) -> None:
        await self.stub.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id=self.table_id,
                command_id=f"test:{self.table_id}:{(await self.state()).seq}",
                seat_token=self.tokens[command.seat],  # type: ignore[attr-defined]
                command=command_to_proto(command),
            ),
            timeout=30,
        )

    def choose(self, state: TableState) -> Command:
        seat = state.actor
        legal = [c for c in legal_commands(state, seat) if type(c).__name__ not in TRADE_COMMANDS]
        for name in PREFERRED:
            for c in legal:
                if type(c).__name__ == name:
                    return c
        command = self.bot.choose(state, seat)
        return command if type(command).__name__ not in TRADE_COMMANDS else legal[0]

    async def play_until(self, done: Callable[[TableState], bool], limit: int = 60) -> TableState:
        for _ in range(limit):
            state = await self.state()
            if done(state):
                return state
            await self.submit(self.choose(state))
        raise AssertionError(f"table {self.table_id}: not reached in {limit} commands")

    async def propose(self, seat: int, counterparty: int, **terms: object) -> trade_pb2.TradeView:
        return await propose(self.trade, self.table_id, seat, self.tokens[seat], counterparty, **terms)  # type: ignore[arg-type]


async def refused(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call  # type: ignore[misc]
    return info.value


def owned(state: TableState, seat: int) -> list[int]:
    """The squares `seat` owns, dearest first."""
    board = state.config.board.squares
    return sorted((sq for sq, o in enumerate(state.owner) if o == seat), key=lambda sq: -board[sq].price)


def price(state: TableState, sq: int) -> int:
    return state.config.board.squares[sq].price


def swap(state: TableState, me: int, other: int) -> tuple[int, int, int]:
    """A square of each seat and the cash the proposer adds to make the swap worth the same (T5)."""
    give, take = owned(state, me)[0], owned(state, other)[0]
    return give, take, max(0, price(state, take) - price(state, give))


def doubles_onto_a_payment() -> int:
    """A seed whose first roll is a double that lands the first player on a square they must pay for."""
    config = duel(external=("trade",))
    for seed in range(1, 1000):
        state, _ = new_game(config, PLAYERS, seed=seed)
        events = decide(state, Roll(state.current))
        dice = next(e for e in events if isinstance(e, DiceRolled))
        if dice.d1 == dice.d2 and any(isinstance(e, PaymentDue) and e.debtor == state.current for e in events):
            return seed
    raise AssertionError("no such seed")


async def wait_for(predicate: Callable[[], object], timeout: float = 60.0) -> None:
    # Generous: it bounds a hang, not a speed (a signal goes through the outbox relay, JetStream and
    # the trade service, on a CI box running two suites at once).
    async def poll() -> None:
        while not await predicate():  # type: ignore[misc]
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


async def trade_events(js: JetStreamContext, table_id: str, count: int) -> list[trade_pb2.TradeEvent]:
    """The first `count` TradeEvents of a table, from the trade service's stream."""
    sub = await js.pull_subscribe(bus.trade_subject(table_id, "*"), stream=bus.TRADE_EVENTS.name)
    out: list[trade_pb2.TradeEvent] = []
    try:
        while len(out) < count:
            for msg in await sub.fetch(count - len(out), timeout=10):
                out.append(trade_pb2.TradeEvent.FromString(msg.data))
                await msg.ack()
    finally:
        await sub.unsubscribe()
    return out


# -- the tests ------------------------------------------------------------------------------


async def test_an_unbalanced_trade_is_refused_with_t5_and_stores_nothing(stubs: tuple) -> None:
    t = await Table(*stubs).create()
    state = await t.state()
    me, other = state.current, (state.current + 1) % 3
    dear = owned(state, other)[0]
    exc = await refused(t.propose(me, other, give_cash=100, take_squares=[dear]))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert rule_of(exc) == "T5", exc.details()
    assert await trades(t.trade, t.table_id) == []
    # Not the current player: T1; a square the counterparty does not own: T2.
    exc = await refused(t.propose(other, me, give_cash=100))
    assert (exc.code(), rule_of(exc)) == (grpc.StatusCode.FAILED_PRECONDITION, "T1")
    exc = await refused(t.propose(me, other, give_cash=100, take_squares=[owned(state, me)[0]]))
    assert rule_of(exc) == "T2"
    assert await trades(t.trade, t.table_id) == []


async def test_a_balanced_trade_executes_at_the_table(stubs: tuple, jets: JetStreamContext) -> None:
    t = await Table(*stubs).create()
    before = await t.state()
    me, other = before.current, (before.current + 1) % 3
    give, take, cash = swap(before, me, other)
    view = await t.propose(me, other, give_squares=[give], take_squares=[take], give_cash=cash + 250)
    assert (view.trade_id, view.status, view.turn_no, view.table_seq) == (1, "open", before.turn_no, before.seq)
    assert [v.trade_id for v in await open_for(t.trade, t.table_id, other)] == [1]
    assert await open_for(t.trade, t.table_id, me) == []

    done = await accept(t.trade, t.table_id, 1, other, t.tokens[other])
    assert done.status == "executed"
    after = await t.state()
    assert after.owner[give] == other and after.owner[take] == me
    assert after.players[me].cash == before.players[me].cash - cash - 250
    assert after.players[other].cash == before.players[other].cash + cash + 250
    assert [v.status for v in await trades(t.trade, t.table_id)] == ["executed"]
    events = await trade_events(jets, t.table_id, 2)
    assert [e.event_id for e in events] == [f"{t.table_id}:1:open", f"{t.table_id}:1:executed"]
    assert events[1].trade.terms.give_squares == [give]


async def test_a_trade_made_stale_by_a_rent_payment_is_refused(stubs: tuple) -> None:
    seed = doubles_onto_a_payment()
    t = await Table(*stubs).create(seed=seed)
    state = await t.state()
    me = state.current
    # The roll is known from the test's own seed: GetTable never shows the generator's (G10).
    known, _ = new_game(duel(external=("trade",)), PLAYERS, seed=seed)
    payee = next(e for e in decide(known, Roll(me)) if isinstance(e, PaymentDue)).creditor
    other = next(s for s in range(3) if s not in (me, payee))
    cash = state.players[me].cash
    take = owned(state, other)[0]
    # All the proposer's cash for a property and the rest in cash: balanced, legal now.
    view = await t.propose(me, other, give_cash=cash, take_squares=[take], take_cash=cash - price(state, take))
    assert view.status == "open"

    await t.submit(Roll(me))  # a double onto a square to pay for
    assert (await t.state()).phase.value == "payment"
    await t.submit(Pay(me))
    state = await t.state()
    assert state.current == me and state.phase.value == "pre_roll" and state.players[me].cash < cash

    exc = await refused(accept(t.trade, t.table_id, view.trade_id, other, t.tokens[other]))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert rule_of(exc) == "T2"
    assert "stale trade" in (exc.details() or "") and f"has only ${state.players[me].cash}" in (exc.details() or "")
    [stored] = await trades(t.trade, t.table_id)
    assert (stored.status, stored.rule) == ("refused", "T2")
    assert "has only" in stored.reason
    assert (await t.state()).players[me].cash == state.players[me].cash  # nothing moved


async def test_T2_a_square_mortgaged_after_the_proposal_makes_the_table_refuse_the_trade(stubs: tuple) -> None:
    """Hasbro lets a player mortgage at any time (P10): the counterparty mortgages the square it gives
    and then accepts. The proposer would get it mortgaged, with an M4 fee, on terms changed under the
    offer; the table refuses the agreed trade (T2) and nothing moves. Proposed again as it now stands
    (mortgaged, recorded in the view), the same trade executes."""
    t = await Table(*stubs).create(seed=11, mode="hasbro")
    state = await t.play_until(lambda s: len({o for o in s.owner if o >= 0}) >= 2 and s.phase.value == "pre_roll")
    me = state.current
    other, take = next((o, sq) for sq, o in enumerate(state.owner) if o >= 0 and o != me)
    view = await t.propose(me, other, give_cash=price(state, take), take_squares=[take])
    assert (view.status, list(view.mortgaged_squares)) == ("open", [])

    await t.submit(Mortgage(other, take))
    mortgaged = await t.state()
    assert mortgaged.mortgaged_round[take] >= 0
    exc = await refused(accept(t.trade, t.table_id, view.trade_id, other, t.tokens[other]))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_of(exc) == "T2"
    assert "mortgaged since the proposal" in (exc.details() or "")
    [stored] = await trades(t.trade, t.table_id)
    assert (stored.status, stored.rule) == ("refused", "T2")
    after = await t.state()
    assert after.owner[take] == other and after.players[me].cash == mortgaged.players[me].cash

    again = await t.propose(me, other, give_cash=price(state, take) // 2, take_squares=[take])
    assert list(again.mortgaged_squares) == [take]
    assert (await accept(t.trade, t.table_id, again.trade_id, other, t.tokens[other])).status == "executed"
    done = await t.state()
    assert done.owner[take] == me and done.mortgaged_round[take] >= 0


async def test_three_proposals_per_turn_and_they_expire_when_the_turn_ends(stubs: tuple) -> None:
    t = await Table(*stubs).create()
    state = await t.state()
    me, a, b = state.current, (state.current + 1) % 3, (state.current + 2) % 3
    for other in (a, b, a):
        await t.propose(me, other, give_cash=100, take_cash=100)
    exc = await refused(t.propose(me, b, give_cash=100, take_cash=100))
    assert (exc.code(), rule_of(exc)) == (grpc.StatusCode.FAILED_PRECONDITION, "T1")
    assert "at most 3" in (exc.details() or "")
    assert len(await trades(t.trade, t.table_id)) == 3

    # A decline and a cancel close two; the turn's end expires the third.
    assert (await decline(t.trade, t.table_id, 2, b, t.tokens[b])).status == "declined"
    assert (await cancel(t.trade, t.table_id, 3, me, t.tokens[me])).status == "cancelled"
    turn = state.turn_no
    await t.play_until(lambda s: s.turn_no > turn)
    # Accepted at once: the table finds it lapsed (T1), or the stream's TurnEnded expired it first.
    exc = await refused(accept(t.trade, t.table_id, 1, a, t.tokens[a]))
    assert (exc.code(), rule_of(exc)) in {
        (grpc.StatusCode.FAILED_PRECONDITION, "T1"),
        (grpc.StatusCode.FAILED_PRECONDITION, "T2"),
    }, exc.details()

    async def expired() -> bool:
        return not await trades(t.trade, t.table_id, open_only=True)

    await wait_for(expired)
    statuses = [(v.trade_id, v.status, v.rule) for v in await trades(t.trade, t.table_id)]
    assert statuses == [(1, "expired", "T1"), (2, "declined", ""), (3, "cancelled", "")]


async def test_T1_calls_asked_again_after_a_lost_answer_get_the_first_answer(stubs: tuple) -> None:
    """A proposal sent again with its request id is the same proposal (T1 counts it once), the same id
    with other terms is ALREADY_EXISTS; an accept, decline or cancel asked again answers the trade as
    that call left it, while anyone else's call on a closed trade is still refused (T2)."""
    t = await Table(*stubs).create()
    state = await t.state()
    me, a, b = state.current, (state.current + 1) % 3, (state.current + 2) % 3
    first = await t.propose(me, a, give_cash=100, take_cash=100, request_id="offer-1")
    again = await t.propose(me, a, give_cash=100, take_cash=100, request_id="offer-1")
    assert again == first and first.status == "open"
    exc = await refused(t.propose(me, a, give_cash=200, take_cash=100, request_id="offer-1"))
    assert exc.code() == grpc.StatusCode.ALREADY_EXISTS
    second = await t.propose(me, b, give_cash=100, take_cash=100, request_id="offer-2")
    third = await t.propose(me, a, give_cash=50, take_cash=50)
    assert [v.trade_id for v in (first, second, third)] == [1, 2, 3]  # the retry made no proposal
    exc = await refused(t.propose(me, b, give_cash=10, take_cash=10))
    assert rule_of(exc) == "T1"  # three proposals this turn: the retry was not counted

    declined = await decline(t.trade, t.table_id, second.trade_id, b, t.tokens[b])
    assert await decline(t.trade, t.table_id, second.trade_id, b, t.tokens[b]) == declined
    cancelled = await cancel(t.trade, t.table_id, third.trade_id, me, t.tokens[me])
    assert await cancel(t.trade, t.table_id, third.trade_id, me, t.tokens[me]) == cancelled
    exc = await refused(decline(t.trade, t.table_id, third.trade_id, a, t.tokens[a]))
    assert rule_of(exc) == "T2"  # cancelled by the proposer: the counterparty's decline is no retry
    executed = await accept(t.trade, t.table_id, first.trade_id, a, t.tokens[a])
    assert executed.status == "executed"
    assert await accept(t.trade, t.table_id, first.trade_id, a, t.tokens[a]) == executed
    after = await t.state()
    assert after.players[me].cash == state.players[me].cash  # once: +100 -100
    exc = await refused(t.propose(me, a, give_cash=100, take_cash=100, request_id="x" * 65))
    assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_tokens_forged_and_wrong_seats(stubs: tuple) -> None:
    t = await Table(*stubs).create()
    state = await t.state()
    me, other, third = state.current, (state.current + 1) % 3, (state.current + 2) % 3
    forged = auth.issue("not-the-platform-secret", t.table_id, me, "ann")
    exc = await refused(propose(t.trade, t.table_id, me, forged, other, give_cash=100, take_cash=100))
    assert exc.code() == grpc.StatusCode.UNAUTHENTICATED
    # Another seat's token, and a token of another table.
    exc = await refused(propose(t.trade, t.table_id, me, t.tokens[other], other, give_cash=100, take_cash=100))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED
    elsewhere = auth.issue(token_secret(), "another-table", me, "ann")
    exc = await refused(propose(t.trade, t.table_id, me, elsewhere, other, give_cash=100, take_cash=100))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED

    view = await t.propose(me, other, give_cash=100, take_cash=100)
    # A valid token of a seat that is not the counterparty: PERMISSION_DENIED (the proposer, a third seat).
    for seat in (me, third):
        exc = await refused(accept(t.trade, t.table_id, view.trade_id, seat, t.tokens[seat]))
        assert exc.code() == grpc.StatusCode.PERMISSION_DENIED, seat
    exc = await refused(decline(t.trade, t.table_id, view.trade_id, third, t.tokens[third]))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED
    exc = await refused(cancel(t.trade, t.table_id, view.trade_id, other, t.tokens[other]))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED
    exc = await refused(accept(t.trade, t.table_id, view.trade_id, other, forged))
    assert exc.code() == grpc.StatusCode.UNAUTHENTICATED
    [stored] = await trades(t.trade, t.table_id, open_only=True)
    assert stored.status == "open"


async def test_a_proposal_survives_a_sigkill_and_is_accepted_once(
    stubs: tuple, trade_platform: Platform, pool: asyncpg.Pool
) -> None:
    t = await Table(*stubs).create()
    before = await t.state()
    me, other = before.current, (before.current + 1) % 3
    give, take, cash = swap(before, me, other)
    view = await t.propose(me, other, give_squares=[give], take_squares=[take], give_cash=cash)

    await trade_platform.processes["trade"].kill()
    await trade_platform.processes["trade"].start()
    [stored] = await trades(t.trade, t.table_id, open_only=True)
    assert (stored.trade_id, stored.status) == (view.trade_id, "open")

    done, again = await asyncio.gather(  # the counterparty's accept, sent twice at once
        accept(t.trade, t.table_id, view.trade_id, other, t.tokens[other]),
        accept(t.trade, t.table_id, view.trade_id, other, t.tokens[other]),
    )
    assert done == again and done.status == "executed"  # one execution, the same answer to both
    exc = await refused(accept(t.trade, t.table_id, view.trade_id, me, t.tokens[me]))
    assert rule_of(exc) == "T2" and "not open" in (exc.details() or "")  # the proposer's is no retry
    async with pool.acquire() as conn:
        executed = await conn.fetchval(
            "SELECT count(*) FROM table_events WHERE table_id = $1 AND type = 'TradeExecuted'", t.table_id
        )
    assert executed == 1
    after = await t.state()
    assert after.owner[give] == other and after.owner[take] == me


async def test_a_redelivered_turn_ended_is_harmless(stubs: tuple, jets: JetStreamContext, pool: asyncpg.Pool) -> None:
    t = await Table(*stubs).create()
    state = await t.state()
    first = state.current
    old = await t.propose(first, (first + 1) % 3, give_cash=100, take_cash=100)
    await t.play_until(lambda s: s.turn_no > state.turn_no)
    state = await t.state()
    me = state.current
    new = await t.propose(me, (me + 1) % 3, give_cash=100, take_cash=100)

    async def old_expired() -> bool:
        return [v.status for v in await trades(t.trade, t.table_id)] == ["expired", "open"]

    await wait_for(old_expired)
    # The TurnEnded of the first turn comes again, late (a new message id, so JetStream keeps it).
    async with pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT seq, envelope, payload, game_ms FROM table_events WHERE table_id = $1 AND type = 'TurnEnded'"
            " ORDER BY seq",
            t.table_id,
        )
    event = stored_event(row["envelope"], row["payload"])
    batch = common_pb2.EventBatch(events=[envelope(t.table_id, row["seq"], event, row["game_ms"], 1, 0)])
    ack = await jets.publish(
        signals.subject("turn", t.table_id), batch.SerializeToString(), headers={"Nats-Msg-Id": f"again:{t.table_id}"}
    )

    async def consumed() -> bool:
        info = await jets.consumer_info(bus.TABLE_SIGNALS.name, TRADE_DURABLE)
        return info.ack_floor.stream_seq >= ack.seq

    await wait_for(consumed)
    views = await trades(t.trade, t.table_id)
    assert [(v.trade_id, v.status) for v in views] == [(old.trade_id, "expired"), (new.trade_id, "open")]
    done = await accept(t.trade, t.table_id, new.trade_id, (me + 1) % 3, t.tokens[(me + 1) % 3])
    assert done.status == "executed"


async def test_a_player_cannot_execute_a_trade_at_the_table(stubs: tuple) -> None:
    t = await Table(*stubs).create()
    state = await t.state()
    me, other = state.current, (state.current + 1) % 3
    command = ExecuteTrade(me, 99, other, state.turn_no, 0, (), 5000, ())
    exc = await refused(t.submit(command))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED
    assert (await t.state()).players[other].cash == state.players[other].cash


async def test_a_bankrupt_proposer_expires_the_proposal(stubs: tuple) -> None:
    t = await Table(*stubs).create()
    state = await t.state()
    me, other = state.current, (state.current + 1) % 3
    await t.propose(me, other, give_cash=100, take_cash=100)
    await t.submit(Surrender(me))

    async def closed() -> bool:
        return not await trades(t.trade, t.table_id, open_only=True)

    await wait_for(closed)
    [view] = await trades(t.trade, t.table_id)
    assert (view.status, view.rule, view.reason) == ("expired", "T1", f"seat {me} went bankrupt")


async def test_a_trade_the_table_executed_before_the_service_recorded_it_ends_executed(
    stubs: tuple, trade_platform: Platform, pool: asyncpg.Pool
) -> None:
    """The crash window of AcceptTrade: the table executed the trade, the service did not commit.
    Here the ExecuteTrade reaches the table directly, as if the service had died right after sending it."""
    t = await Table(*stubs).create()
    state = await t.state()
    me, other = state.current, (state.current + 1) % 3
    view = await t.propose(me, other, give_cash=300, take_cash=200)
    command = ExecuteTrade(  # as the service sends it: no square, so none mortgaged (T2)
        me, view.trade_id, other, view.turn_no, 300, (), 200, (), mortgaged_squares=(), mortgages_recorded=True
    )
    await t.stub.SubmitCommand(
        table_pb2.SubmitCommandRequest(
            table_id=t.table_id,
            command_id=command_id(t.table_id, view.trade_id),
            seat_token=auth.service_token(token_secret(), "trade"),
            command=command_to_proto(command),
        ),
        timeout=30,
    )
    # Accepting now gets the table's first answer (executed), unless the stream's TradeExecuted
    # settled it first (then the trade is no longer open); either way it is executed, once.
    try:
        done = await accept(t.trade, t.table_id, view.trade_id, other, t.tokens[other])
        assert done.status == "executed"
    except grpc.aio.AioRpcError as exc:
        assert "not open (it was executed)" in (exc.details() or ""), exc.details()

    async def executed() -> bool:
        return [v.status for v in await trades(t.trade, t.table_id)] == ["executed"]

    await wait_for(executed)
    after = await t.state()
    assert after.players[me].cash == state.players[me].cash - 100
    async with pool.acquire() as conn:
        count = await conn.fetchval(
            "SELECT count(*) FROM table_events WHERE table_id = $1 AND type = 'TradeExecuted'", t.table_id
        )
    assert count == 1


async def test_metrics(stubs: tuple, trade_platform: Platform) -> None:
    t = await Table(*stubs).create()
    state = await t.state()
    me, other = state.current, (state.current + 1) % 3
    await refused(t.propose(me, other, give_cash=100, take_cash=1000))
    view = await t.propose(me, other, give_cash=100, take_cash=100)
    await accept(t.trade, t.table_id, view.trade_id, other, t.tokens[other])
    port = trade_platform.processes["trade"].env["TRADE_METRICS_PORT"]

    def fetch() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
            return str(reply.read().decode())

    text = await asyncio.to_thread(fetch)
    for line in (
        'trade_proposals_total{outcome="open"}',
        'trade_proposals_total{outcome="refused"}',
        'trade_refusals_total{rule="T5",stage="propose"}',
        "trade_executions_total",
    ):
        assert line in text, line
