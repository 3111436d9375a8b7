"""Bets at the casino (K1-K4): opened by the table's `CasinoOpened`, settled here, published as CasinoEvents.

Every change of a bet (opened, settled, declined) is one Postgres transaction
that also writes its CasinoEvent to the outbox, so a bet is published if and
only if it was committed. The outcome comes from the engine's pure casino
module (`check_numbers`, `draw`, `payout`, `settle`) over the table's own
generator stream (the pool row's seed and counter), so a settled bet can be
recomputed from its ledger row (`verify.py`).

Several instances: every change locks the bet's row (`FOR UPDATE`) and acts
only on a bet still open, so of two instances whose timers fire together one
declines the bet and the other, once the lock is free, finds it closed and
does nothing. Each instance arms a timer for every open bet it knows of: the
ones it opened, and every `SWEEP_S` the ones Postgres holds open (opened by
another instance, or by one that stopped: an overdue one fires at once).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import time
from collections.abc import Awaitable, Callable

import asyncpg
from prometheus_client import Counter, Gauge

from engine import RuleViolation
from engine import casino as rules_module
from engine.casino import DRAWS_PER_BET
from engine.config import CasinoRules
from monopoly.v1 import casino_pb2
from servicekit import bus
from servicekit.consumers import nothing_to_read
from servicekit.errors import NotFound, unreachable
from servicekit.idempotency import first_delivery

from . import store
from .store import Bet

log = logging.getLogger("casino")

#: The durable consumer of the table signals (`handlers`), the key of its processed messages.
CONSUMER = "casino-table-signals"

#: How often the open bets are read back from Postgres (timers armed for those another instance opened).
SWEEP_S = 1.0
#: How soon a time-out that could not learn whether the table's events were all read (NATS away) tries again.
READ_RETRY_S = 0.5

#: outcome: won | lost | jackpot | declined | timeout | void (the table never applied the result)
BETS = Counter("casino_bets_total", "Bets closed, by outcome", ["outcome"])
POOL = Gauge("casino_jackpot_pool_dollars", "Sum of every table's jackpot pool (K4)")
# payout (K2) | jackpot (K3)
PAYOUTS = Counter("casino_payouts_dollars_total", "Money paid to bettors, by kind", ["kind"])


def wall_ms() -> int:
    return int(time.time() * 1000)


def view(b: Bet) -> casino_pb2.BetView:
    return casino_pb2.BetView(
        bet_id=b.bet_id,
        table_id=b.table_id,
        seat=b.seat,
        status=b.status,
        numbers=list(b.numbers),
        die=b.die,
        jackpot_hit=b.jackpot_hit,
        stake=b.stake,
        payout=b.payout,
        jackpot=b.jackpot,
        pool_after=b.pool_after,
        deadline_unix_ms=b.deadline_unix_ms,
    )


def event_row(b: Bet) -> tuple[str, str, bytes]:
    """The outbox row of a bet's fact: (subject, msg_id, CasinoEvent)."""
    event_id = f"{b.bet_id}:{b.status}"
    message = casino_pb2.CasinoEvent(event_id=event_id, bet=view(b), wall_unix_ms=wall_ms())
    return bus.casino_subject(b.table_id, b.status), event_id, message.SerializeToString()


def outcome(b: Bet, rules: CasinoRules) -> Bet:
    """The settled bet: pool += pool_per_bet (K4), the die and the jackpot draw from (seed, counter) (K2, K3).

    `b` carries the numbers and the pool's seed, counter and current amount (`pool_before`).
    """
    assert b.seed is not None and b.counter is not None
    die, jackpot_hit = rules_module.draw(b.seed, b.counter, rules)
    pool = b.pool_before + rules.pool_per_bet
    settled = rules_module.settle(b.seat, b.numbers, die, jackpot_hit, pool, rules, DRAWS_PER_BET)
    return dataclasses.replace(
        b,
        status="settled",
        die=settled.die,
        jackpot_hit=settled.jackpot_hit,
        stake=rules.stake,
        payout=settled.payout,
        pool_add=rules.pool_per_bet,
        jackpot=settled.jackpot,
        pool_after=pool - settled.jackpot,
    )


class Casino:
    """The service's bets and pools over Postgres, with a timer per open bet."""

    def __init__(self, pool: asyncpg.Pool, rules: CasinoRules | None = None) -> None:
        self.pool = pool
        self.rules = rules or CasinoRules()
        self.relay_wake: Callable[[], None] = lambda: None
        #: Waits until the table events published so far are handled (`Consumers.read_through`): a
        #: time-out asks it first, so a pause (E5) the table published before the time ran out is seen.
        self.read_through: Callable[[], Awaitable[None]] = nothing_to_read
        self.timers: dict[str, asyncio.TimerHandle] = {}
        #: E2: bets whose time ran out while Postgres was away: the next time-out restarts their window.
        self.outage_bets: set[str] = set()
        self._tasks: set[asyncio.Task[bool]] = set()

    # -- opened and closed by the table's events ---------------------------------------------

    async def open(
        self, table_id: str, seq: int, seat: int, cash: int, deadline_unix_ms: int, window_ms: int | None = None
    ) -> bool:
        """K1: the table opened a bet (its CasinoOpened at `seq`) with `window_ms` to bet (None: until the
        deadline from now); False if it was opened before."""
        bet_id = f"{table_id}:{seq}"
        window = window_ms if window_ms is not None else max(0, deadline_unix_ms - wall_ms())
        async with self.pool.acquire() as conn, conn.transaction():
            if not await store.open_bet(conn, bet_id, table_id, seq, seat, cash, deadline_unix_ms, window):
                return False
            await store.ensure_pool(conn, table_id, secrets.randbits(63))
            b = await store.bet(conn, bet_id)
            assert b is not None
            await store.outbox(conn, *event_row(b))
        self.relay_wake()
        self.arm(bet_id, deadline_unix_ms)
        log.info("bet %s open for seat %d until %d", bet_id, seat, deadline_unix_ms)
        return True

    async def close_table(self, table_id: str, seq: int, seat: int | None = None) -> None:
        """The game ended (or the bettor left it) at the table event `seq`: its open bets close, declined,
        and nothing is published (the table has no bet open any more). A bet settled here whose result
        the table had not applied by then never will be (it refuses it): the bet is void and the pool
        goes back (K4: one pool per table, the table's)."""
        voided: Bet | None = None
        async with self.pool.acquire() as conn, conn.transaction():
            if not await first_delivery(conn, CONSUMER, f"{table_id}:{seq}"):
                return
            for b in await store.open_bets(conn, table_id, lock=True):
                if seat is None or b.seat == seat:
                    await store.close_bet(conn, b.bet_id, "declined", "closed")
                    self.disarm(b.bet_id)
            latest = await store.latest_bet(conn, table_id, lock=True)
            if (
                latest is not None
                and latest.status == "settled"
                and not latest.applied
                and (seat is None or latest.seat == seat)
            ):
                await store.pool(conn, table_id, lock=True)  # its pool row locked, as a settlement locks it
                await store.void(conn, latest, "left" if seat is not None else "game_ended")
                voided = dataclasses.replace(latest, status="void")
                await store.outbox(conn, *event_row(voided))
        if voided is not None:
            self.relay_wake()
            BETS.labels("void").inc()
            POOL.inc(voided.pool_before - voided.pool_after)
            log.info("bet %s void: the table closed it before applying its result", voided.bet_id)

    async def applied(self, table_id: str, seat: int, seq: int) -> None:
        """The table applied the result of the bet it had open (its BetSettled at `seq`): that bet stands."""
        async with self.pool.acquire() as conn:
            await store.mark_applied(conn, table_id, seat, seq)

    async def pause(self, table_id: str, seq: int, paused: bool, extend_ms: int = 0) -> None:
        """E5 (the table event `seq`): a paused table freezes the bet's timer; on resume the deadline
        moves on by the pause."""
        async with self.pool.acquire() as conn, conn.transaction():
            if not await first_delivery(conn, CONSUMER, f"{table_id}:{seq}"):
                return
            bet_ids = await store.set_paused(conn, table_id, paused, extend_ms)
            bets = [await store.bet(conn, bet_id) for bet_id in bet_ids]
        for b in bets:
            if b is None:
                continue
            if paused:
                self.disarm(b.bet_id)
            else:
                self.arm(b.bet_id, b.deadline_unix_ms)

    # -- the bettor ------------------------------------------------------------------------

    async def _open_for(
        self, conn: asyncpg.Connection, table_id: str, seat: int, bet_id: str, answered: Callable[[Bet], bool]
    ) -> tuple[Bet, bool]:
        """The table's open bet for `seat` (the latest bet, or `bet_id` when given), locked, and False;
        K1 otherwise. A call asked again after its answer was lost (`answered`: the bet as that call
        closed it) gets that bet and True: the same answer, nothing changed twice."""
        b = await store.latest_bet(conn, table_id, lock=True)
        if b is None or b.seat != seat:
            raise RuleViolation("K1", f"no bet is open for seat {seat}")
        if bet_id and b.bet_id != bet_id:
            raise RuleViolation("K1", f"bet {bet_id} is not the table's bet now ({b.bet_id} is)")
        if b.status != "open" and answered(b):
            return b, True
        if b.status == "settled":
            raise RuleViolation("K1", f"bet {b.bet_id} is already settled")
        if b.status == "declined":
            raise RuleViolation("K1", f"bet {b.bet_id} is already declined")
        if b.status == "void":
            raise RuleViolation("K1", f"bet {b.bet_id} is void: the table closed it before applying its result")
        if b.paused:  # E5: nothing moves on a paused table but players confirming they are back
            raise RuleViolation("E5", "the game is paused: confirm you are back")
        return b, False

    async def place(self, table_id: str, seat: int, numbers: tuple[int, ...], bet_id: str = "") -> Bet:
        """K1-K4 in one transaction: the pool locked, $500 added, the draws, the payout, the ledger, the event.
        The same bet asked again (its answer lost) answers the settled bet."""
        rules = self.rules
        rules_module.check_numbers(numbers, rules)
        picked = tuple(sorted(numbers))
        async with self.pool.acquire() as conn, conn.transaction():
            b, again = await self._open_for(
                conn, table_id, seat, bet_id, lambda b: b.status == "settled" and b.numbers == picked
            )
            if again:
                return b
            if b.cash < rules.stake:
                raise RuleViolation("K1", f"the stake is ${rules.stake}")
            if b.deadline_unix_ms < wall_ms():  # E1: the timer declines it
                raise RuleViolation("K1", f"bet {b.bet_id}: the time to bet ran out")
            p = await store.pool(conn, table_id, lock=True)
            assert p is not None  # created with the bet
            b = outcome(
                dataclasses.replace(b, numbers=picked, seed=p.seed, counter=p.counter, pool_before=p.pool),
                rules,
            )
            await store.settle(conn, b, b.pool_after, DRAWS_PER_BET)
            await store.outbox(conn, *event_row(b))
        self.relay_wake()
        self.disarm(b.bet_id)
        won = "jackpot" if b.jackpot_hit else ("won" if b.payout else "lost")
        BETS.labels(won).inc()
        POOL.inc(b.pool_after - b.pool_before)
        PAYOUTS.labels("payout").inc(b.payout)
        PAYOUTS.labels("jackpot").inc(b.jackpot)
        log.info("bet %s settled: %s die %d payout %d jackpot %d", b.bet_id, b.numbers, b.die, b.payout, b.jackpot)
        return b

    async def decline(self, table_id: str, seat: int, bet_id: str = "") -> Bet:
        """Decline the open bet; asked again (its answer lost), the bet as the player declined it."""
        async with self.pool.acquire() as conn, conn.transaction():
            b, again = await self._open_for(
                conn, table_id, seat, bet_id, lambda b: b.status == "declined" and b.reason == "player"
            )
            if again:
                return b
            b = await self._decline(conn, b, "player")
        self.relay_wake()
        BETS.labels("declined").inc()
        return b

    async def _decline(self, conn: asyncpg.Connection, b: Bet, reason: str) -> Bet:
        await store.close_bet(conn, b.bet_id, "declined", reason)
        b = dataclasses.replace(b, status="declined", reason=reason)
        await store.outbox(conn, *event_row(b))
        self.disarm(b.bet_id)
        return b

    # -- timers (E1/E2: no answer in time is a decline) ----------------------------------------

    def arm(self, bet_id: str, deadline_unix_ms: int) -> None:
        self.disarm(bet_id)
        delay = max(0.0, (deadline_unix_ms - wall_ms()) / 1000) + 0.005
        self.timers[bet_id] = asyncio.get_running_loop().call_later(delay, self._fire, bet_id)

    def disarm(self, bet_id: str) -> None:
        handle = self.timers.pop(bet_id, None)
        if handle is not None:
            handle.cancel()

    def _fire(self, bet_id: str) -> None:
        self.timers.pop(bet_id, None)
        task = asyncio.create_task(self.expire(bet_id), name=f"expire-{bet_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def expire(self, bet_id: str) -> bool:
        """Decline for the player if the bet is still open past its deadline; retried while Postgres is away.

        Only once the table's events published until now are read: a pause (E5) among them freezes the
        timer instead (a restarted service has a backlog to read; its timers are armed before). E2: a
        deadline that passed while Postgres was away (no bet could be placed either) gives the bettor a
        whole bet window from when it is back, as the auction service gives a bidder."""
        try:
            await self.read_through()
        except Exception as exc:  # NATS away: the decline could not reach the table either; try again
            log.warning("bet %s: table events not read through (%s); retrying", bet_id, exc)
            self.arm(bet_id, wall_ms() + int(READ_RETRY_S * 1000))
            return False
        for attempt in range(20):
            try:
                async with self.pool.acquire() as conn, conn.transaction():
                    b = await store.bet(conn, bet_id, lock=True)
                    if b is None or b.status != "open":
                        self.outage_bets.discard(bet_id)
                        return False
                    if b.paused:
                        return False
                    now = wall_ms()
                    if b.deadline_unix_ms > now:  # moved on (a pause): wait for the new deadline
                        self.arm(bet_id, b.deadline_unix_ms)
                        return False
                    if bet_id in self.outage_bets:
                        deadline = await store.restart_window(conn, bet_id, now)
                        self.outage_bets.discard(bet_id)
                        self.arm(bet_id, deadline)
                        log.info(
                            "bet %s: seat %d's time ran out while Postgres was away; a whole bet window, until %d",
                            bet_id,
                            b.seat,
                            deadline,
                        )
                        return False
                    await self._decline(conn, b, "timeout")
                self.relay_wake()
                BETS.labels("timeout").inc()
                log.info("bet %s timed out: declined for seat %d", bet_id, b.seat)
                return True
            except Exception as exc:
                if unreachable(exc):
                    self.outage_bets.add(bet_id)
                elif not isinstance(exc, asyncpg.PostgresError):
                    raise
                log.exception("bet %s: time-out failed (attempt %d); retrying", bet_id, attempt + 1)
                await asyncio.sleep(min(5.0, 0.2 * 2**attempt))
        return False

    async def recover(self) -> int:
        """Re-arm the timers of every open bet (after a restart); the pool gauge from Postgres."""
        async with self.pool.acquire() as conn:
            bets = await store.open_bets(conn)
            POOL.set(await store.pools_total(conn))
        for b in bets:
            if not b.paused:
                self.arm(b.bet_id, b.deadline_unix_ms)
        return len(bets)

    def start_sweeping(self) -> None:
        """Run `sweep` every SWEEP_S until `stop`."""

        async def forever() -> bool:
            while True:
                await asyncio.sleep(SWEEP_S)
                try:
                    await self.sweep()
                except Exception:  # Postgres away: the next sweep tries again
                    log.debug("casino sweep failed", exc_info=True)

        task = asyncio.create_task(forever(), name="casino-sweep")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def sweep(self) -> int:
        """Arm the timers of the open bets Postgres holds and this process does not time (opened or
        resumed by another instance); drop those of bets closed meanwhile. The number armed."""
        before = dict(self.timers)  # a timer armed while we read (a bet opened here) is not dropped
        async with self.pool.acquire() as conn:
            bets = await store.open_bets(conn)
        timed = {b.bet_id for b in bets if not b.paused}
        for bet_id, handle in before.items():
            if bet_id not in timed and self.timers.get(bet_id) is handle:
                self.disarm(bet_id)
        armed = 0
        for b in bets:
            if b.bet_id in timed and b.bet_id not in self.timers:
                self.arm(b.bet_id, b.deadline_unix_ms)
                armed += 1
        return armed

    def stop(self) -> None:
        for bet_id in list(self.timers):
            self.disarm(bet_id)
        for task in self._tasks:
            task.cancel()

    # -- reads -------------------------------------------------------------------------------

    async def get(self, table_id: str, bet_id: str = "") -> Bet:
        async with self.pool.acquire() as conn:
            if bet_id:
                b = await store.bet(conn, bet_id)
                if b is not None and b.table_id != table_id:
                    b = None
            else:
                b = await store.open_bet_of(conn, table_id)
        if b is None:
            raise NotFound(f"no bet {bet_id} at table {table_id}" if bet_id else f"no bet is open at table {table_id}")
        return b

    async def pool_of(self, table_id: str) -> tuple[int, int]:
        """(pool, bets settled into it); a table without bets has an empty pool (K4)."""
        async with self.pool.acquire() as conn:
            p = await store.pool(conn, table_id)
        return (p.pool, p.bets) if p is not None else (0, 0)
