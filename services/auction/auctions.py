"""The auctions this process runs: one lock per auction serialises its moves and its timer here,
and the row's version in Postgres serialises them across instances of the service.

A bid, a pass or a time-out is decided by the pure `engine.auction` module on
the auction's state, then the new state (with an optimistic version check),
the move and its `AuctionEvent`s (outbox rows) are committed in one
transaction; only then is memory updated, the caller answered and watchers
told. Timers are wall-clock deadlines stored in Postgres, so a restarted
service re-arms exactly the timers it had (an overdue one fires at once).

Several instances: each holds every open auction (loaded at start, and every
`SWEEP_S` by `sweep`, which also adopts what another instance committed) and
arms its timer. A write commits only at the version it was decided on, so of
two instances whose timers fire together one commits the time-out and the
other finds the row moved on (`Stale`), reloads it and re-arms. A move decided
on a row another instance has moved since is decided again on the row read
back (`MOVE_ATTEMPTS`), so the player is answered on the auction as it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field

import asyncpg
from prometheus_client import Counter, Gauge

from engine import BANK, Command, RuleViolation
from engine import auction as rules
from engine.auction import AuctionLimitsChanged, AuctionSettled, AuctionStarted, Bid, PassBid
from engine.state import AuctionState
from monopoly.v1 import auction_pb2
from servicekit import bus
from servicekit.consumers import nothing_to_read
from servicekit.errors import NotFound, Stale, Unavailable, unreachable

from . import store
from .store import CANCELLED, OPEN, SETTLED, AuctionRow, OutboxRow

log = logging.getLogger(__name__)

OPEN_AUCTIONS = Gauge("auction_open_auctions", "Auctions open in this process")
MOVES = Counter("auction_moves_total", "Bids, passes and time-outs, by outcome", ["outcome"])
SETTLEMENTS = Counter("auction_settlements_total", "Auctions closed, by result", ["result"])

#: After a failed time-out (Postgres away), try again this much later (seconds).
RETRY_S = 1.0
#: How often the open auctions are read back from Postgres: those another instance opened or moved
#: are adopted (and their timers armed), those it closed are let go.
SWEEP_S = 1.0
#: Tries of a move whose row another instance moved meanwhile (each decided on the row read back).
MOVE_ATTEMPTS = 5
#: Waits (seconds) between the read-backs of a write whose connection was lost while it ran.
READ_BACK_WAITS = (0.0, 0.1, 0.3, 1.0)

#: A move: (seat, kind, amount) as written to auction_moves.
Move = tuple[int, str, int]


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def bid_window_ms(bid_ms: int, scale: int) -> int:
    """A bidder's time (game ms) in wall ms on a table running `scale` times faster than real time."""
    return -(-bid_ms // max(1, scale))


def new_row(table_id: str, seq: int, started: AuctionStarted, wall_unix_ms: int, scale: int) -> AuctionRow:
    """The auction a table's `AuctionStarted` opens: the first bidder's time runs from the event's wall time."""
    if len(started.limits) != len(started.bidders) or started.bid_ms <= 0:
        raise ValueError(f"auction {started.auction_id} of table {table_id} is not run by a service")
    return AuctionRow(
        table_id=table_id,
        auction_id=started.auction_id,
        status=OPEN,
        state=rules.open_auction(started),
        limits=tuple(started.limits),
        bid_ms=started.bid_ms,
        clock_scale=max(1, scale),
        deadline_unix_ms=wall_unix_ms + bid_window_ms(started.bid_ms, scale),
        version=0,
        moves=0,
        events=0,
        winner=None,
        price=None,
        closed_by=None,
        started_seq=seq,
    )


def fact(row: AuctionRow, kind: str, now_ms: int, seat: int = BANK, amount: int = 0) -> auction_pb2.AuctionEvent:
    """The auction's next AuctionEvent (numbered in the row: its id is `<table_id>:<auction_id>:<n>`)."""
    row.events += 1
    return auction_pb2.AuctionEvent(
        event_id=f"{row.table_id}:{row.auction_id}:{row.events}",
        table_id=row.table_id,
        auction_id=row.auction_id,
        type=kind,
        seat=seat,
        amount=amount,
        square=row.state.square,
        winner=row.winner if row.winner is not None else BANK,
        price=row.price or 0,
        wall_unix_ms=now_ms,
    )


def limit_of(row: AuctionRow, seat: int) -> int:
    """A3: the most `seat` could pay, as the table last reckoned it (at the opening, or after a
    trade, build or mortgage meanwhile: `limits_changed`)."""
    bidders = row.state.bidders
    return row.limits[bidders.index(seat)] if seat in bidders else 0


def _settle(new: AuctionRow, settled: AuctionSettled, now_ms: int) -> auction_pb2.AuctionEvent:
    new.status = SETTLED
    new.winner = settled.winner
    new.price = settled.price
    new.closed_by = "service"
    new.deadline_unix_ms = 0
    return fact(new, "settled", now_ms, settled.winner, settled.price)


def play(
    row: AuctionRow, command: Command, now_ms: int, timed_out: bool = False
) -> tuple[AuctionRow, Move, list[auction_pb2.AuctionEvent]]:
    """A bid or pass (a time-out is the current bidder's pass) applied to a copy of `row`:
    the new row, the move and its AuctionEvents. Raises `RuleViolation` (A1, A3) and then
    `row` is untouched."""
    if row.paused_left_ms is not None:
        raise RuleViolation("E5", "the game is paused: bidding resumes with the game")
    events = rules.decide(row.state, command, limit_of(row, command.seat))
    state = row.state.copy()
    settled: AuctionSettled | None = None
    for event in events:
        if isinstance(event, AuctionSettled):
            settled = event
        else:
            rules.evolve(state, event)
    new = dataclasses.replace(row, state=state, version=row.version + 1, moves=row.moves + 1)
    if isinstance(command, Bid):
        move: Move = (command.seat, "bid", command.amount)
        facts = [fact(new, "bid", now_ms, command.seat, command.amount)]
    else:
        move = (command.seat, "timeout" if timed_out else "pass", 0)
        facts = [fact(new, "timed_out" if timed_out else "passed", now_ms, command.seat)]
    if settled is not None:
        facts.append(_settle(new, settled, now_ms))
    else:
        new.deadline_unix_ms = now_ms + bid_window_ms(row.bid_ms, row.clock_scale)
    return new, move, facts


def withdrawn(row: AuctionRow, seat: int, now_ms: int) -> tuple[AuctionRow, list[auction_pb2.AuctionEvent]] | None:
    """The auction after `seat` left the game (bankrupt), or None if that changes nothing here.
    When only the high bidder is left, or nobody, the auction is settled here: the table, which
    never sees the passes made here, may still count bidders who passed. (When it counts nobody
    either, it settles unsold itself and refuses this result as a second one.)"""
    if seat not in row.state.bidders:
        return None
    state = row.state.copy()
    rules.withdraw(state, seat)
    if state == row.state:
        return None
    settled = rules.result_if_closed(state)
    new = dataclasses.replace(row, state=state, version=row.version + 1)
    if settled is not None:
        return new, [_settle(new, settled, now_ms)]
    if state.turn != row.state.turn:
        new.deadline_unix_ms = now_ms + bid_window_ms(row.bid_ms, row.clock_scale)
    return new, []


def limits_changed(row: AuctionRow, seq: int, changed: AuctionLimitsChanged) -> AuctionRow | None:
    """The auction with the bidders' new limits the table sent after its command `seq`, or None if that
    changes nothing here: another auction's, a closed one, or limits as old as those held (a redelivery)."""
    if (
        changed.auction_id != row.auction_id
        or row.status != OPEN
        or seq <= max(row.started_seq, row.limits_seq)
        or len(changed.limits) != len(row.state.bidders)
    ):
        return None
    limits = tuple(changed.limits)
    state = dataclasses.replace(row.state.copy(), limits=limits)
    return dataclasses.replace(row, state=state, limits=limits, limits_seq=seq, version=row.version + 1)


def restarted(row: AuctionRow, now_ms: int) -> AuctionRow:
    """E2: the current bidder's whole bid window again from `now_ms` (their time ran out while the
    platform could not take a bid)."""
    return dataclasses.replace(
        row, deadline_unix_ms=now_ms + bid_window_ms(row.bid_ms, row.clock_scale), version=row.version + 1
    )


def paused(row: AuctionRow, seq: int, at_ms: int) -> AuctionRow | None:
    """E5: the game paused at wall time `at_ms` (table seq `seq`): the bidder's clock stops (None: it was
    stopped already, or the pause is older than the auction or than the last pause or resume seen)."""
    if row.paused_left_ms is not None or seq <= max(row.started_seq, row.pause_seq):
        return None
    left = max(0, row.deadline_unix_ms - at_ms)
    return dataclasses.replace(row, paused_left_ms=left, deadline_unix_ms=0, pause_seq=seq, version=row.version + 1)


def resumed(row: AuctionRow, seq: int, at_ms: int) -> AuctionRow | None:
    """E5: the game resumed at wall time `at_ms` (table seq `seq`): the bidder has the time they had left
    (None: not paused, or a resume older than the last pause or resume seen)."""
    if row.paused_left_ms is None or seq <= row.pause_seq:
        return None
    return dataclasses.replace(
        row,
        paused_left_ms=None,
        deadline_unix_ms=at_ms + row.paused_left_ms,
        pause_seq=seq,
        version=row.version + 1,
    )


def view(row: AuctionRow) -> auction_pb2.AuctionView:
    s = row.state
    is_open = row.status == OPEN
    return auction_pb2.AuctionView(
        table_id=row.table_id,
        auction_id=row.auction_id,
        square=s.square,
        reason=s.reason,
        status=row.status,
        bidders=s.bidders,
        passed=s.out,
        bidder=s.bidder if is_open else BANK,
        min_bid=s.min_bid if is_open else 0,
        high_bid=s.high_bid,
        high_bidder=s.high_bidder,
        deadline_unix_ms=row.deadline_unix_ms if is_open else 0,
        winner=row.winner if row.winner is not None else BANK,
        price=row.price or 0,
        moves=row.moves,
    )


@dataclass(eq=False)
class Auction:
    """An open auction in memory: its row as committed, its lock, timer and watchers."""

    row: AuctionRow
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    timer: asyncio.TimerHandle | None = None
    #: E2: the bidder's time ran out while Postgres could not be reached (no bid could be taken either):
    #: once it is back the bidder gets a whole bid window instead of the time-out.
    outage: bool = False
    watchers: set[asyncio.Queue[auction_pb2.AuctionView | None]] = field(default_factory=set)


class Auctions:
    """Every open auction this process runs (a table has at most one open at a time)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.open: dict[str, Auction] = {}  # table_id -> its open auction
        self.relay_wake: Callable[[], None] = lambda: None
        #: Waits until the table events published so far are handled (`Consumers.read_through`): a
        #: time-out asks it first, so a pause (E5) the table published before the time ran out is seen.
        self.read_through: Callable[[], Awaitable[None]] = nothing_to_read
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False

    # -- lifecycle -------------------------------------------------------------

    async def recover(self) -> int:
        """Load every open auction from Postgres and re-arm its timer. E2: one whose bidder's time ran out
        while no auction service ran (a restart, a crash) gives that bidder a whole bid window, as after
        an outage of Postgres: nobody could bid meanwhile."""
        async with self.pool.acquire() as conn:
            rows = await store.all_open(conn)
        now = wall_ms()
        for row in rows:
            if row.table_id not in self.open:
                overdue = row.paused_left_ms is None and 0 < row.deadline_unix_ms <= now
                self._register(row).outage = overdue
        return len(rows)

    def start_sweeping(self) -> None:
        """Run `sweep` every SWEEP_S until `stop`."""
        task = asyncio.create_task(self._sweep_forever(), name="auction-sweep")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _sweep_forever(self) -> None:
        while not self._stopped:
            await asyncio.sleep(SWEEP_S)
            try:
                await self.sweep()
            except Exception:  # Postgres away: the next sweep tries again
                log.debug("auction sweep failed", exc_info=True)

    async def sweep(self) -> int:
        """Bring memory to Postgres: adopt open auctions this process did not hold (opened by another
        instance, or one that stopped) and rows another instance moved on, arming their timers (an
        overdue one fires at once); let go of the auctions another instance closed. The number adopted."""
        async with self.pool.acquire() as conn:
            rows = await store.all_open(conn)
        adopted = 0
        live = {(row.table_id, row.auction_id) for row in rows}
        for row in rows:
            a = self.open.get(row.table_id)
            if a is None:
                self._register(row)
                adopted += 1
            elif a.row.auction_id < row.auction_id:
                await self._forget(a)
                self._register(row)
                adopted += 1
            elif a.row.auction_id == row.auction_id and row.version > a.row.version and not a.lock.locked():
                async with a.lock:
                    if row.version > a.row.version and self.open.get(row.table_id) is a:
                        a.row = row
                        self._changed(a)
        for a in list(self.open.values()):
            if (a.row.table_id, a.row.auction_id) not in live and not a.lock.locked():
                async with a.lock:
                    if self.open.get(a.row.table_id) is a:
                        await self._reload(a)  # closed elsewhere: memory follows, and lets it go
        return adopted

    async def _forget(self, a: Auction) -> None:
        """Drop an auction held here that a newer one of its table replaced."""
        async with a.lock:
            if self.open.get(a.row.table_id) is a:
                await self._reload(a)
            if self.open.get(a.row.table_id) is a:
                del self.open[a.row.table_id]
                if a.timer:
                    a.timer.cancel()
                for q in a.watchers:
                    q.put_nowait(None)
                OPEN_AUCTIONS.set(len(self.open))

    async def _held(self, table_id: str) -> Auction | None:
        """The table's open auction: the one held here, else the one Postgres holds open (opened by
        another instance), adopted."""
        a = self.open.get(table_id)
        if a is not None:
            return a
        async with self.pool.acquire() as conn:
            row = await store.open_of_table(conn, table_id)
        if row is None:
            return None
        a = self.open.get(table_id)  # adopted meanwhile
        return a if a is not None else self._register(row)

    async def stop(self) -> None:
        self._stopped = True
        for a in self.open.values():
            if a.timer:
                a.timer.cancel()
            for q in a.watchers:
                q.put_nowait(None)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _register(self, row: AuctionRow) -> Auction:
        a = Auction(row)
        self.open[row.table_id] = a
        OPEN_AUCTIONS.set(len(self.open))
        self._arm(a)
        return a

    # -- what the table tells us (handlers.py) ------------------------------------

    async def start(self, table_id: str, seq: int, started: AuctionStarted, wall_unix_ms: int, scale: int) -> bool:
        """Open the auction a table started; False if it was opened before (a redelivery)."""
        # The first bidder's time runs from the opening here, or from the table's event if that is later: an
        # AuctionStarted heard late (NATS away, this service restarting) does not time the bidder out at once.
        row = new_row(table_id, seq, started, max(wall_unix_ms, wall_ms()), scale)
        older = self.open.get(table_id)
        if older is not None and older.row.auction_id > started.auction_id:
            return False  # a late copy of an auction the table closed before opening the one held here
        if older is not None and older.row.auction_id < started.auction_id:
            # The table opens an auction only when none is open: it closed the older one meanwhile.
            await self.closed_by_table(table_id, older.row.auction_id, BANK, 0)
        outbox = [_outbox_row(fact(row, "opened", wall_ms()))]
        async with self.pool.acquire() as conn:
            inserted = await store.open_auction(conn, row, outbox)
        if not inserted:
            return False
        self._register(row)
        self.relay_wake()
        log.info("table %s: auction %d of square %d opened", table_id, row.auction_id, row.state.square)
        return True

    async def closed_by_table(self, table_id: str, auction_id: int, winner: int, price: int) -> None:
        """The table settled the auction itself (no bidder left, D2): close it without a result of ours."""
        await self._close(table_id, auction_id, SETTLED, winner, price, "table")

    async def game_ended(self, table_id: str) -> None:
        a = self.open.get(table_id)
        await self._close(table_id, a.row.auction_id if a else None, CANCELLED, BANK, 0, "game_ended")

    async def _close(
        self, table_id: str, auction_id: int | None, status: str, winner: int, price: int, by: str
    ) -> None:
        """Close the open auction without a result of ours (in Postgres when this process does not hold
        it: another instance opened it)."""
        a = self.open.get(table_id)
        if a is not None and a.row.auction_id == auction_id:
            for _ in range(MOVE_ATTEMPTS):
                async with a.lock:
                    if a.row.status != OPEN:
                        return
                    new = dataclasses.replace(
                        a.row,
                        status=status,
                        winner=winner,
                        price=price,
                        closed_by=by,
                        deadline_unix_ms=0,
                        version=a.row.version + 1,
                    )
                    try:
                        await self._commit(a, new, None, [])
                    except Stale:
                        continue  # another instance moved it: close the row as it is now
                SETTLEMENTS.labels(f"closed_by_{by}").inc()
                return
        # Not held here (another instance opened it), or moved on too often: close it in Postgres;
        # the other instances let it go at their next sweep.
        async with self.pool.acquire() as conn:
            await store.close_if_open(conn, table_id, auction_id, status, winner, price, by)

    async def withdraw(self, table_id: str, seat: int) -> None:
        """A player left the game (bankrupt): out of the table's open auction, as the table does."""
        new = await self._follow(table_id, lambda row: withdrawn(row, seat, wall_ms()), "withdrawal")
        if new is not None and new.status == SETTLED:
            SETTLEMENTS.labels("sold" if new.winner != BANK else "unsold").inc()

    async def change_limits(self, table_id: str, seq: int, changed: AuctionLimitsChanged) -> None:
        """A3: the table's bidders could pay other amounts now (a hasbro trade, build or mortgage meanwhile)."""

        def change(row: AuctionRow) -> tuple[AuctionRow, list[auction_pb2.AuctionEvent]] | None:
            new = limits_changed(row, seq, changed)
            return (new, []) if new is not None else None

        new = await self._follow(table_id, change, "new limits")
        if new is not None:
            log.info("table %s: auction %d: the bidders' limits are now %s", table_id, new.auction_id, new.limits)

    async def pause(self, table_id: str, seq: int, at_ms: int, resume: bool) -> None:
        """E5: the table's game paused (or resumed) at wall time `at_ms`, its event `seq`: stop (or restart)
        the bidder's clock. A copy of an older pause or resume (redelivered late) changes nothing."""

        def change(row: AuctionRow) -> tuple[AuctionRow, list[auction_pb2.AuctionEvent]] | None:
            new = (resumed if resume else paused)(row, seq, at_ms)
            return (new, []) if new is not None else None

        await self._follow(table_id, change, "pause")

    async def _follow(
        self,
        table_id: str,
        change: Callable[[AuctionRow], tuple[AuctionRow, list[auction_pb2.AuctionEvent]] | None],
        what: str,
    ) -> AuctionRow | None:
        """Apply to the table's open auction what the table told us (`change`: the new row and its facts,
        or None when it changes nothing), decided again on the row as it is when another instance moved
        it meanwhile. The row committed, or None (no open auction, nothing to change)."""
        for _ in range(MOVE_ATTEMPTS):
            a = await self._held(table_id)
            if a is None:
                return None
            async with a.lock:
                if self.open.get(table_id) is not a:
                    continue
                changed = change(a.row)
                if changed is None:
                    return None
                new, facts = changed
                try:
                    await self._commit(a, new, None, facts)
                except Stale:
                    continue  # decided again on the row as another instance left it
            return new
        raise Stale(f"table {table_id}: the auction kept moving on; the table sends the {what} again")

    # -- players' moves (api.py) -----------------------------------------------------

    async def move(self, table_id: str, auction_id: int, command: Command) -> auction_pb2.AuctionView:
        """A bid or pass, decided on the row held here; when another instance moved the auction since,
        decided again on the row as Postgres has it (a refusal too: it may have been a stale one)."""
        for attempt in range(MOVE_ATTEMPTS):
            last = attempt == MOVE_ATTEMPTS - 1
            a = await self._open_for_move(table_id, auction_id)
            async with a.lock:
                if self.open.get(a.row.table_id) is not a and not last:
                    continue
                try:
                    if a.row.status != OPEN:
                        raise RuleViolation(
                            a.row.state.bid_rule, f"auction {a.row.auction_id} is already {a.row.status}"
                        )
                    new, move, facts = play(a.row, command, wall_ms())
                except RuleViolation:
                    if not last and await self._moved_elsewhere(a):
                        continue
                    if made_already(a.row.state, command):  # asked again after its answer was lost
                        MOVES.labels("repeated").inc()
                        return view(a.row)
                    MOVES.labels("refused").inc()
                    raise
                try:
                    await self._commit(a, new, move, facts)
                except Stale:
                    if last:
                        raise
                    continue  # reloaded by _commit: decided again
                MOVES.labels("bid" if isinstance(command, Bid) else "passed").inc()
                self._count_settlement(new)
                return view(a.row)
        raise Stale("the auction moved on meanwhile (another writer); nothing changed, try again")

    async def _moved_elsewhere(self, a: Auction) -> bool:
        """Whether Postgres has the auction at another version than memory (then memory takes it);
        the caller holds `a.lock`."""
        async with self.pool.acquire() as conn:
            row = await store.get(conn, a.row.table_id, a.row.auction_id)
        if row is None or row.version == a.row.version:
            return False
        a.row = row
        self._changed(a)
        return True

    async def _open_for_move(self, table_id: str, auction_id: int) -> Auction:
        a = self.open.get(table_id)
        if a is not None and auction_id in (0, a.row.auction_id):
            return a
        row = await self._row(table_id, auction_id)
        if row.status != OPEN:
            raise RuleViolation(row.state.bid_rule, f"auction {row.auction_id} is already {row.status}")
        a = self.open.get(table_id)  # adopted meanwhile (the sweep)
        if a is not None and a.row.auction_id == row.auction_id:
            return a
        if row.table_id in self.open:  # an older auction still held open here: the newer one wins
            stale = self.open.pop(row.table_id)
            if stale.timer:
                stale.timer.cancel()
        return self._register(row)

    async def _row(self, table_id: str, auction_id: int) -> AuctionRow:
        async with self.pool.acquire() as conn:
            if auction_id:
                row = await store.get(conn, table_id, auction_id)
            else:
                row = await store.open_of_table(conn, table_id)
        if row is None:
            what = f"auction {auction_id}" if auction_id else "no open auction"
            raise NotFound(f"table {table_id!r}: {what}" + (" not found" if auction_id else ""))
        return row

    async def get(self, table_id: str, auction_id: int) -> auction_pb2.AuctionView:
        a = self.open.get(table_id)
        if a is not None and auction_id in (0, a.row.auction_id):
            return view(a.row)
        return view(await self._row(table_id, auction_id))

    async def watch(self, table_id: str, auction_id: int) -> AsyncGenerator[auction_pb2.AuctionView, None]:
        """The auction's view now and after every change, until it is closed."""
        a = self.open.get(table_id)
        if a is None or auction_id not in (0, a.row.auction_id):
            yield view(await self._row(table_id, auction_id))
            return
        q: asyncio.Queue[auction_pb2.AuctionView | None] = asyncio.Queue()
        a.watchers.add(q)
        try:
            yield view(a.row)
            if a.row.status != OPEN:
                return
            while (item := await q.get()) is not None:
                yield item
                if item.status != OPEN:
                    return
        finally:
            a.watchers.discard(q)

    # -- timers ----------------------------------------------------------------------

    def _arm(self, a: Auction, retry: bool = False) -> None:
        if a.timer:
            a.timer.cancel()
            a.timer = None
        if a.row.status != OPEN or a.row.paused_left_ms is not None or self._stopped:
            return
        delay = max(0.0, (a.row.deadline_unix_ms - wall_ms()) / 1000) + 0.002
        if retry:
            delay = max(delay, RETRY_S)
        version = a.row.version
        a.timer = asyncio.get_running_loop().call_later(delay, self._spawn_timeout, a, version)

    def _spawn_timeout(self, a: Auction, version: int) -> None:
        task = asyncio.create_task(self._timeout(a, version), name=f"auction-timeout-{a.row.table_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _timeout(self, a: Auction, version: int) -> None:
        """A1, E1: the current bidder's time ran out: a pass, and maybe the settlement.

        Only once the table's events published until now are read: a pause (E5) among them stops the
        clock instead (a restarted service has a backlog to read; its timers are armed before)."""
        try:
            await self.read_through()
        except Exception as exc:  # NATS away: the pass could not reach the table either; try again
            log.warning(
                "table %s: auction %d: table events not read through (%s); retrying",
                a.row.table_id,
                a.row.auction_id,
                exc,
            )
            self._arm(a, retry=True)
            return
        async with a.lock:
            if a.row.status != OPEN or a.row.version != version or self.open.get(a.row.table_id) is not a:
                return  # moved on meanwhile: its own timer is armed
            now = wall_ms()
            if now < a.row.deadline_unix_ms:
                self._arm(a)
                return
            seat = a.row.state.bidder
            try:
                if a.outage:
                    await self._commit(a, restarted(a.row, now), None, [])
                    a.outage = False
                    log.info(
                        "table %s: auction %d: seat %d's time ran out while Postgres was away or no auction "
                        "service ran; a whole bid window from now",
                        a.row.table_id,
                        a.row.auction_id,
                        seat,
                    )
                    return
                new, move, facts = play(a.row, PassBid(seat), now, timed_out=True)
                await self._commit(a, new, move, facts)
            except Stale:
                return  # reloaded and re-armed by _commit
            except Exception as exc:
                a.outage = a.outage or isinstance(exc, Unavailable)
                log.warning(
                    "table %s: time-out of auction %d failed (%s); retrying",
                    a.row.table_id,
                    a.row.auction_id,
                    exc,
                    exc_info=not isinstance(exc, Unavailable),
                )
                self._arm(a, retry=True)
                return
        MOVES.labels("timed_out").inc()
        self._count_settlement(new)
        log.info("table %s: auction %d: seat %d timed out", a.row.table_id, a.row.auction_id, seat)

    # -- commits ---------------------------------------------------------------------

    async def _commit(
        self, a: Auction, new: AuctionRow, move: Move | None, facts: list[auction_pb2.AuctionEvent]
    ) -> None:
        """Write `new` (if the row is still at our version), the move and the facts; then memory follows."""
        try:
            async with self.pool.acquire() as conn:
                saved = await store.save(conn, new, a.row.version, move, [_outbox_row(f) for f in facts])
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            # A connection lost while the statement ran: Postgres may have taken it. Read back first.
            if not unreachable(exc) or not await self._saved_after_all(a, new):
                log.exception("table %s: auction %d could not be saved", a.row.table_id, a.row.auction_id)
                raise Unavailable(f"the auction could not be saved ({type(exc).__name__}); nothing changed") from exc
            log.warning("table %s: auction %d: the write went in, its answer was lost", a.row.table_id, new.auction_id)
            saved = True
        if not saved:
            await self._reload(a)
            raise Stale("the auction moved on meanwhile (another writer); nothing changed, try again")
        a.row = new
        if facts:
            self.relay_wake()
        self._changed(a)

    async def _saved_after_all(self, a: Auction, new: AuctionRow) -> bool:
        """Whether a write whose connection was lost went in: the row read back on a fresh connection
        (a few tries while Postgres is away) is `new`. The caller holds `a.lock`, so nothing else moves
        this auction until the outcome is known. Still unknown after the tries: UNAVAILABLE saying so;
        memory keeps the old row, and the version check refuses any write decided on it (the auction
        is reloaded then)."""
        for wait in READ_BACK_WAITS:
            await asyncio.sleep(wait)
            try:
                async with self.pool.acquire() as conn:
                    row = await store.get(conn, a.row.table_id, a.row.auction_id)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                if not unreachable(exc):
                    raise
                continue
            return (
                row is not None
                and row.version == new.version
                and row.status == new.status
                and store.state_json(row.state) == store.state_json(new.state)
            )
        raise Unavailable(
            f"auction {new.auction_id}: Postgres went away during the move and is not back; whether the move "
            "went in is not known yet (GetAuction shows it once Postgres is back)"
        )

    async def _reload(self, a: Auction) -> None:
        async with self.pool.acquire() as conn:
            row = await store.get(conn, a.row.table_id, a.row.auction_id)
        if row is not None:
            a.row = row
        self._changed(a)

    def _changed(self, a: Auction) -> None:
        snapshot = view(a.row)
        for q in a.watchers:
            q.put_nowait(snapshot)
        if a.row.status == OPEN:
            self._arm(a)
            return
        if a.timer:
            a.timer.cancel()
            a.timer = None
        for q in a.watchers:
            q.put_nowait(None)
        if self.open.get(a.row.table_id) is a:
            del self.open[a.row.table_id]
        OPEN_AUCTIONS.set(len(self.open))

    @staticmethod
    def _count_settlement(row: AuctionRow) -> None:
        if row.status == SETTLED and row.closed_by == "service":
            SETTLEMENTS.labels("sold" if row.winner != BANK else "unsold").inc()


def made_already(state: AuctionState, command: Command) -> bool:
    """Whether a refused move is one the auction already took (the call asked again after its answer
    was lost): the bidder's bid is still the high one, or the bidder is out. Neither can be a new move
    (A1: a bid must beat the high bid; a bidder out stays out), so answering the auction as it stands
    changes nothing."""
    if isinstance(command, Bid):
        return state.high_bidder == command.seat and state.high_bid == command.amount
    if isinstance(command, PassBid) and command.seat in state.bidders:
        return state.out[state.bidders.index(command.seat)]
    return False


def _outbox_row(event: auction_pb2.AuctionEvent) -> OutboxRow:
    return (bus.auction_subject(event.table_id, event.type), event.event_id, event.SerializeToString())


__all__ = [
    "Auction",
    "Auctions",
    "bid_window_ms",
    "made_already",
    "new_row",
    "paused",
    "play",
    "resumed",
    "view",
    "wall_ms",
    "withdrawn",
]
