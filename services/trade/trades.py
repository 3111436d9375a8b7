"""Trade proposals between the players of a table (T1-T6): propose, accept, decline, cancel, expire.

The rules are the engine's: `engine.trade.validate_terms` (T2-T5) on the
table's current state, read through the table's `GetTable`; who may propose
when (T1 online, T6 hasbro: any active player at any time) is the engine's
`trade_window`. An accepted trade is executed by the
table as the system command `ExecuteTrade`, which re-checks everything, so
the table stays the only authority over cash and deeds.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg
import grpc
from prometheus_client import Counter as PromCounter

from engine import ExecuteTrade, PlayerBankrupt, RuleViolation, TableState, TradeExecuted, codec, trade_window
from engine.game import teammates
from engine.state import TradeOffer
from engine.trade import validate_terms
from monopoly.v1 import common_pb2, table_pb2, table_pb2_grpc, trade_pb2
from servicekit import auth, bus
from servicekit.errors import BadRequest, Conflict, Forbidden, NotFound, Unavailable
from servicekit.wire import command_to_proto, event_from_proto

from . import store
from .store import TradeRow

log = logging.getLogger(__name__)

PROPOSALS = PromCounter("trade_proposals_total", "Trade proposals, by outcome", ["outcome"])
EXECUTIONS = PromCounter("trade_executions_total", "Trades the table executed")
REFUSALS = PromCounter("trade_refusals_total", "Refused proposals and accepts, by rule and stage", ["rule", "stage"])
CLOSED = PromCounter("trade_closed_total", "Trades closed without execution, by status", ["status"])

#: How long the table may take to answer a read or an ExecuteTrade.
TABLE_TIMEOUT_S = 5.0
#: A proposal's request id, at most (characters).
MAX_REQUEST_ID = 64
#: Table events that close or settle proposals (the rest of the stream is skipped unread).
WATCHED = frozenset({"TurnEnded", "GameEnded", "PlayerBankrupt", "TradeExecuted"})
STATUSES = ("open", "executed", "declined", "cancelled", "expired", "refused")


@dataclass(frozen=True, slots=True)
class Terms:
    """What the proposer asks: `give_*` leave the proposer, `take_*` leave the counterparty."""

    counterparty: int
    give_cash: int = 0
    give_squares: tuple[int, ...] = ()
    take_cash: int = 0
    take_squares: tuple[int, ...] = ()
    #: T2 (hasbro): Get Out of Jail Free cards (ids) on each side.
    give_cards: tuple[int, ...] = ()
    take_cards: tuple[int, ...] = ()


def view(t: TradeRow) -> trade_pb2.TradeView:
    return trade_pb2.TradeView(
        table_id=t.table_id,
        trade_id=t.trade_id,
        proposer=t.proposer,
        terms=trade_pb2.TradeTerms(
            counterparty=t.counterparty,
            give_cash=t.give_cash,
            give_squares=t.give_squares,
            take_cash=t.take_cash,
            take_squares=t.take_squares,
            give_cards=t.give_cards,
            take_cards=t.take_cards,
        ),
        status=t.status,
        turn_no=t.turn_no,
        reason=t.reason,
        rule=t.rule,
        table_seq=t.table_seq,
        mortgaged_squares=t.mortgaged_squares or (),
    )


def command_id(table_id: str, trade_id: int) -> str:
    """The id of a trade's ExecuteTrade at the table: a retry is answered as the first time."""
    return f"trade:{table_id}:{trade_id}"


def _rule_of(exc: grpc.aio.AioRpcError) -> str:
    for key, value in exc.trailing_metadata() or ():
        if key == "rule-id":
            return str(value)
    return ""


def _reason_of(exc: grpc.aio.AioRpcError, rule: str) -> str:
    """The table's message without its "[rule] " prefix."""
    details = exc.details() or ""
    prefix = f"[{rule}] "
    return details[len(prefix) :] if rule and details.startswith(prefix) else details


def mortgaged_of(state: TableState, squares: tuple[int, ...]) -> tuple[int, ...]:
    """T2: which of the offered squares are mortgaged now; the table checks they still are, and no
    other, when the trade executes (the squares stand as offered)."""
    return tuple(sq for sq in squares if state.mortgaged_round[sq] >= 0)


def check_window(state: TableState, seat: int) -> None:
    """T1 (online): only the player whose turn it is proposes, before rolling, deciding a purchase or
    paying; T6 (hasbro): any active player at any time. The engine's `trade_window` decides."""
    if "trade" not in state.config.external:
        raise RuleViolation("T1", "this table runs its trades itself: propose them at the table")
    trade_window(state, seat)


class Trades:
    """The trade service's logic over its Postgres schema and the table service."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        table: table_pb2_grpc.TableServiceStub,
        token_secret: auth.Secret,
        wake: Callable[[], None] = lambda: None,
        shared: bool = False,
    ) -> None:
        self.pool = pool
        self.table = table
        self.service_token = auth.renewed_service_token(token_secret, "trade")
        self.wake = wake  # the outbox relay, after each commit that wrote to the outbox
        #: Tables that may have an open proposal: most table batches (a turn ending with nothing
        #: proposed) then cost no Postgres round trip. Filled by `load_open` at start and by every
        #: proposal, emptied when a turn's end left none open; one instance of the service owns the
        #: proposals (like the table service its tables). With several instances (`shared`), a
        #: proposal may have come to another one: every batch that could end one is looked up.
        self.maybe_open: set[str] = set()
        self.shared = shared
        #: Proposals made by this process: a table leaves `maybe_open` only if none came meanwhile.
        self.proposals_made = 0

    async def load_open(self) -> None:
        async with self.pool.acquire() as conn:
            self.maybe_open = await store.tables_with_open(conn)

    # -- reading the table -------------------------------------------------------------

    async def read_table(self, table_id: str) -> TableState:
        """The table's current engine state (one GetTable)."""
        try:
            reply = await self.table.GetTable(table_pb2.GetTableRequest(table_id=table_id), timeout=TABLE_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                raise NotFound(f"no table {table_id}") from None
            if exc.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise BadRequest(exc.details() or "bad table id") from None
            raise Unavailable(f"the table service did not answer ({exc.code().name})") from None
        return codec.state_from_data(json.loads(reply.state_json))

    def _seat(self, table_id: str, seat: int, claims: auth.Claims) -> None:
        """PERMISSION_DENIED for another seat's or table's token (the interceptor verified it)."""
        claims.require_seat(table_id, seat)

    # -- the RPCs ----------------------------------------------------------------------

    async def propose(
        self, table_id: str, seat: int, claims: auth.Claims, terms: Terms, request_id: str = ""
    ) -> TradeRow:
        """T1-T6: a new proposal. With `request_id`, asked again (its answer lost), the proposal made
        then, whatever its status now; the same id with other terms is a Conflict."""
        if not table_id:
            raise BadRequest("table_id is required")
        if len(request_id) > MAX_REQUEST_ID:
            raise BadRequest(f"request_id is at most {MAX_REQUEST_ID} characters")
        self._seat(table_id, seat, claims)
        if request_id:
            async with self.pool.acquire() as conn:
                first = await store.proposed(conn, table_id, seat, request_id)
            if first is not None:
                return self._asked_again(first, terms, request_id)
        state = await self.read_table(table_id)
        offer = TradeOffer(
            0,
            seat,
            terms.counterparty,
            terms.give_cash,
            terms.give_squares,
            terms.take_cash,
            terms.take_squares,
            terms.give_cards,
            terms.take_cards,
        )
        try:
            check_window(state, seat)
            async with self.pool.acquire() as conn, conn.transaction():
                counter = await store.lock_counter(conn, table_id)
                if request_id and (first := await store.proposed(conn, table_id, seat, request_id)) is not None:
                    return self._asked_again(first, terms, request_id)  # the same call, answered meanwhile
                if state.turn_no < counter.turn_no:
                    raise RuleViolation("T1", f"turn {state.turn_no} is over")
                used = counter.proposals if counter.turn_no == state.turn_no else 0
                limit = state.config.trade.max_proposals_per_turn
                if limit is not None and used >= limit:
                    raise RuleViolation("T1", f"at most {limit} trade proposals per turn")
                validate_terms(state, offer, teammates(state, seat, terms.counterparty))
                row = TradeRow(
                    table_id,
                    counter.next_trade_id,
                    seat,
                    terms.counterparty,
                    terms.give_cash,
                    terms.give_squares,
                    terms.take_cash,
                    terms.take_squares,
                    "open",
                    state.turn_no,
                    state.seq,
                    "",
                    "",
                    terms.give_cards,
                    terms.take_cards,
                    mortgaged_of(state, terms.give_squares + terms.take_squares),
                )
                await store.save_counter(
                    conn, table_id, store.Counter(counter.next_trade_id + 1, state.turn_no, used + 1)
                )
                self.maybe_open.add(table_id)
                await store.insert_trade(conn, row, request_id or None)
                await self._publish(conn, row)
        except RuleViolation as exc:
            PROPOSALS.labels("refused").inc()
            REFUSALS.labels(exc.rule, "propose").inc()
            raise
        # Counted once committed: a turn's end handled meanwhile either saw this trade open (and
        # keeps the table) or started before this count (and so keeps it too).
        self.maybe_open.add(table_id)
        self.proposals_made += 1
        PROPOSALS.labels("open").inc()
        self.wake()
        return row

    @staticmethod
    def _asked_again(first: TradeRow, terms: Terms, request_id: str) -> TradeRow:
        made = Terms(
            first.counterparty,
            first.give_cash,
            first.give_squares,
            first.take_cash,
            first.take_squares,
            first.give_cards,
            first.take_cards,
        )
        if made != terms:
            raise Conflict(
                f"request_id {request_id!r} already made trade {first.trade_id} with other terms; "
                "a new proposal takes a new id"
            )
        PROPOSALS.labels("retried").inc()
        return first

    async def accept(self, table_id: str, trade_id: int, seat: int, claims: auth.Claims) -> TradeRow:
        """The counterparty accepts: the table executes the trade, or refuses it as stale.

        The trade's row stays locked while the table decides, so a decline, a cancel or an
        expiry waits for the outcome. A crash between the table's execution and the commit here
        leaves the trade open: accepting again re-sends the same command id and the table answers
        as the first time (and the TradeExecuted on the table's stream settles it anyway).
        """
        self._seat(table_id, seat, claims)
        refusal: RuleViolation | None = None
        async with self.pool.acquire() as conn, conn.transaction():
            t = await self._open_trade(conn, table_id, trade_id, retried=("executed", seat, "counterparty"))
            if t.status == "executed":
                return t  # accepted before (this call asked again): the same answer
            if seat != t.counterparty:
                raise Forbidden(f"only seat {t.counterparty} (the counterparty) may accept trade {trade_id}")
            try:
                await self._execute(t)
            except RuleViolation as exc:
                if exc.rule == "E5":  # paused: nothing is decided, the trade stays open
                    REFUSALS.labels(exc.rule, "accept").inc()
                    raise
                lapsed = (exc.rule == "T1" and "lapsed" in exc.message) or exc.rule == "D5"  # D5: the game ended
                status = "expired" if lapsed else "refused"
                closed = await store.set_status(conn, table_id, trade_id, status, exc.message, exc.rule)
                assert closed is not None  # the row is locked and was open
                await self._publish(conn, closed)
                REFUSALS.labels(exc.rule, "accept").inc()
                CLOSED.labels(status).inc()
                refusal = RuleViolation(exc.rule, f"stale trade: {exc.message}")
                result = closed
            else:
                done = await store.set_status(conn, table_id, trade_id, "executed")
                assert done is not None
                await self._publish(conn, done)
                EXECUTIONS.inc()
                result = done
        self.wake()
        if refusal is not None:  # raised after the commit: the refused status is kept
            raise refusal
        return result

    async def decline(self, table_id: str, trade_id: int, seat: int, claims: auth.Claims) -> TradeRow:
        return await self._close(table_id, trade_id, seat, claims, "declined", counterparty=True)

    async def cancel(self, table_id: str, trade_id: int, seat: int, claims: auth.Claims) -> TradeRow:
        return await self._close(table_id, trade_id, seat, claims, "cancelled", counterparty=False)

    async def list(self, table_id: str, open_only: bool = False) -> list[TradeRow]:
        if not table_id:
            raise BadRequest("table_id is required")
        async with self.pool.acquire() as conn:
            return await store.trades(conn, table_id, open_only)

    # -- the table's stream ------------------------------------------------------------

    async def on_table_batch(self, batch: common_pb2.EventBatch) -> int:
        """Close the proposals a committed table command ended; the number of trades changed.

        `TurnEnded` and `GameEnded` expire the open proposals checked before them (the ended
        turn's), `PlayerBankrupt` those the bankrupt seat is part of, and `TradeExecuted` marks its
        trade executed (the table's word wins, e.g. after a crash between the table's execution and
        this service's commit). Idempotent: only trades still open (or not yet executed) change,
        and their TradeEvents carry ids JetStream deduplicates; so a redelivered or late batch is
        harmless.
        """
        watched = [env for env in batch.events if env.type in WATCHED]
        if not watched:
            return 0
        if not self.shared and all(
            env.type != "TradeExecuted" and env.table_id not in self.maybe_open for env in watched
        ):
            return 0  # most turns end with nothing proposed: no Postgres round trip
        changed: list[TradeRow] = []
        proposals_before = self.proposals_made
        emptied: set[str] = set()  # tables with no open proposal left once this commits
        async with self.pool.acquire() as conn, conn.transaction():
            for env in watched:
                table_id = env.table_id
                if env.type == "TurnEnded":
                    changed += await store.expire_open(conn, table_id, env.seq, "the turn ended")
                    if table_id in self.maybe_open and not await store.has_open(conn, table_id):
                        emptied.add(table_id)
                elif env.type == "GameEnded":
                    changed += await store.expire_open(conn, table_id, env.seq, "the game ended")
                    emptied.add(table_id)
                elif env.type == "PlayerBankrupt":
                    event = event_from_proto(env.payload)
                    assert isinstance(event, PlayerBankrupt)
                    changed += await store.expire_open(
                        conn, table_id, env.seq, f"seat {event.seat} went bankrupt", (event.seat,)
                    )
                else:
                    event = event_from_proto(env.payload)
                    assert isinstance(event, TradeExecuted)
                    others = tuple(s for s in STATUSES if s != "executed")
                    done = await store.set_status(conn, table_id, event.trade_id, "executed", from_statuses=others)
                    if done is not None:
                        log.warning("trade %s:%s settled as executed from the table's stream", table_id, done.trade_id)
                        EXECUTIONS.inc()
                        changed.append(done)
            for t in changed:
                await self._publish(conn, t)
        if self.proposals_made == proposals_before:  # else a proposal may have come for one of them
            self.maybe_open -= emptied
        for t in changed:
            if t.status == "expired":
                CLOSED.labels("expired").inc()
        if changed:
            self.wake()
        return len(changed)

    # -- inside ------------------------------------------------------------------------

    async def _open_trade(
        self, conn: asyncpg.Connection, table_id: str, trade_id: int, retried: tuple[str, int, str] | None = None
    ) -> TradeRow:
        """The open trade, locked; T2 if it is closed, but for a call asked again after its answer was
        lost (`retried`: the status it set, the caller's seat and its role there), which gets the trade."""
        t = await store.trade(conn, table_id, trade_id, lock=True)
        if t is None:
            raise NotFound(f"no trade {trade_id} at table {table_id}")
        if retried is not None and t.status == retried[0] and t.status != "open":
            _, seat, role = retried
            if (t.counterparty if role == "counterparty" else t.proposer) == seat and (
                t.status == "executed" or t.reason == f"{t.status} by seat {seat}"
            ):
                return t
        if t.status != "open":
            raise RuleViolation("T2", f"trade {trade_id} is not open (it was {t.status})")
        return t

    async def _close(
        self, table_id: str, trade_id: int, seat: int, claims: auth.Claims, status: str, counterparty: bool
    ) -> TradeRow:
        self._seat(table_id, seat, claims)
        role = "counterparty" if counterparty else "proposer"
        async with self.pool.acquire() as conn, conn.transaction():
            t = await self._open_trade(conn, table_id, trade_id, retried=(status, seat, role))
            if t.status == status:
                return t  # closed by this call before (asked again): the same answer
            who = t.counterparty if counterparty else t.proposer
            if seat != who:
                verb = "decline" if counterparty else "cancel"
                raise Forbidden(f"only seat {who} (the {role}) may {verb} trade {trade_id}")
            closed = await store.set_status(conn, table_id, trade_id, status, f"{status} by seat {seat}")
            assert closed is not None
            await self._publish(conn, closed)
        CLOSED.labels(status).inc()
        self.wake()
        return closed

    async def _execute(self, t: TradeRow) -> None:
        """Have the table execute the trade; `RuleViolation` with the table's rule if it refuses."""
        command = ExecuteTrade(
            t.proposer,
            t.trade_id,
            t.counterparty,
            t.turn_no,
            t.give_cash,
            t.give_squares,
            t.take_cash,
            t.take_squares,
            t.give_cards,
            t.take_cards,
            t.mortgaged_squares or (),
            t.mortgaged_squares is not None,
        )
        request = table_pb2.SubmitCommandRequest(
            table_id=t.table_id,
            command_id=command_id(t.table_id, t.trade_id),
            seat_token=self.service_token(),
            command=command_to_proto(command),
        )
        try:
            await self.table.SubmitCommand(request, timeout=TABLE_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                rule = _rule_of(exc) or "T2"
                raise RuleViolation(rule, _reason_of(exc, rule)) from None
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                raise NotFound(f"no table {t.table_id}") from None
            log.warning("table %s: ExecuteTrade %s: %s %s", t.table_id, t.trade_id, exc.code().name, exc.details())
            # The outcome is unknown: the trade stays open and a retry gets the table's first answer.
            raise Unavailable(f"the table did not answer ({exc.code().name}); the trade is still open") from None

    async def _publish(self, conn: asyncpg.Connection, t: TradeRow) -> None:
        event_id = f"{t.table_id}:{t.trade_id}:{t.status}"
        event = trade_pb2.TradeEvent(event_id=event_id, trade=view(t), wall_unix_ms=int(time.time() * 1000))
        await store.add_outbox(conn, bus.trade_subject(t.table_id, t.status), event_id, event.SerializeToString())
