"""The casino service's SQL: every statement it runs, in one place."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

_BET = """
SELECT b.bet_id, b.table_id, b.opened_seq, b.seat, b.status, b.reason, b.cash, b.deadline_unix_ms, b.paused,
       b.applied, l.seed, l.counter, l.numbers, l.die, l.jackpot_hit, l.stake, l.payout,
       l.pool_before, l.pool_add, l.jackpot, l.pool_after
FROM bets b LEFT JOIN ledger l USING (bet_id)
"""


@dataclass(frozen=True, slots=True)
class Bet:
    bet_id: str
    table_id: str
    opened_seq: int
    seat: int
    status: str
    reason: str | None
    cash: int
    deadline_unix_ms: int
    paused: bool
    # The ledger (settled bets only).
    seed: int | None = None
    counter: int | None = None
    numbers: tuple[int, ...] = ()
    die: int = 0
    jackpot_hit: bool = False
    stake: int = 0
    payout: int = 0
    pool_before: int = 0
    pool_add: int = 0
    jackpot: int = 0
    pool_after: int = 0
    #: The table applied the bet's result (its BetSettled was seen on the table's stream).
    applied: bool = False


def _bet(r: asyncpg.Record) -> Bet:
    settled = r["die"] is not None
    return Bet(
        r["bet_id"],
        r["table_id"],
        r["opened_seq"],
        r["seat"],
        r["status"],
        r["reason"],
        r["cash"],
        r["deadline_unix_ms"],
        r["paused"],
        r["seed"],
        r["counter"],
        tuple(r["numbers"] or ()),
        r["die"] if settled else 0,
        bool(r["jackpot_hit"]),
        r["stake"] or 0,
        r["payout"] or 0,
        r["pool_before"] or 0,
        r["pool_add"] or 0,
        r["jackpot"] or 0,
        r["pool_after"] or 0,
        bool(r["applied"]),
    )


@dataclass(frozen=True, slots=True)
class Pool:
    table_id: str
    pool: int
    bets: int
    seed: int
    counter: int


def _pool(r: asyncpg.Record) -> Pool:
    return Pool(r["table_id"], r["pool"], r["bets"], r["seed"], r["counter"])


async def ensure_pool(conn: asyncpg.Connection, table_id: str, seed: int) -> None:
    """The table's pool, created at $0 with `seed` unless it exists (K4: one pool per table)."""
    await conn.execute(
        "INSERT INTO pools (table_id, seed) VALUES ($1, $2) ON CONFLICT (table_id) DO NOTHING", table_id, seed
    )


async def open_bet(
    conn: asyncpg.Connection,
    bet_id: str,
    table_id: str,
    seq: int,
    seat: int,
    cash: int,
    deadline_unix_ms: int,
    window_ms: int | None = None,
) -> bool:
    """A new open bet; False if it exists (a redelivered CasinoOpened)."""
    done = await conn.fetchval(
        "INSERT INTO bets (bet_id, table_id, opened_seq, seat, status, cash, deadline_unix_ms, window_ms) "
        "VALUES ($1, $2, $3, $4, 'open', $5, $6, $7) ON CONFLICT (bet_id) DO NOTHING RETURNING true",
        bet_id,
        table_id,
        seq,
        seat,
        cash,
        deadline_unix_ms,
        window_ms,
    )
    return bool(done)


async def bet(conn: asyncpg.Connection, bet_id: str, lock: bool = False) -> Bet | None:
    if lock:
        await conn.execute("SELECT 1 FROM bets WHERE bet_id = $1 FOR UPDATE", bet_id)
    r = await conn.fetchrow(_BET + " WHERE b.bet_id = $1", bet_id)
    return _bet(r) if r is not None else None


async def latest_bet(conn: asyncpg.Connection, table_id: str, lock: bool = False) -> Bet | None:
    """The table's most recent bet (the open one, if any: a table has one bet open at a time)."""
    bet_id = await conn.fetchval(
        "SELECT bet_id FROM bets WHERE table_id = $1 ORDER BY opened_seq DESC LIMIT 1"
        + (" FOR UPDATE" if lock else ""),
        table_id,
    )
    return await bet(conn, bet_id) if bet_id is not None else None


async def open_bet_of(conn: asyncpg.Connection, table_id: str) -> Bet | None:
    r = await conn.fetchrow(_BET + " WHERE b.table_id = $1 AND b.status = 'open' ORDER BY b.opened_seq DESC", table_id)
    return _bet(r) if r is not None else None


async def open_bets(conn: asyncpg.Connection, table_id: str | None = None, lock: bool = False) -> list[Bet]:
    if table_id is None:
        rows = await conn.fetch(_BET + " WHERE b.status = 'open' ORDER BY b.deadline_unix_ms")
    else:
        if lock:
            await conn.execute("SELECT 1 FROM bets WHERE table_id = $1 AND status = 'open' FOR UPDATE", table_id)
        rows = await conn.fetch(_BET + " WHERE b.table_id = $1 AND b.status = 'open'", table_id)
    return [_bet(r) for r in rows]


async def close_bet(conn: asyncpg.Connection, bet_id: str, status: str, reason: str | None) -> None:
    await conn.execute(
        "UPDATE bets SET status = $2, reason = $3, closed_at = now() WHERE bet_id = $1", bet_id, status, reason
    )


async def mark_applied(conn: asyncpg.Connection, table_id: str, seat: int, settled_seq: int) -> None:
    """The table applied, at its event `settled_seq` (a BetSettled), the result of the bet it had open then:
    the latest opened before it, `seat`'s. By seq, so a late copy of an old BetSettled marks its own bet,
    never a newer one the table has not applied."""
    await conn.execute(
        "UPDATE bets SET applied = true WHERE bet_id = (SELECT bet_id FROM bets WHERE table_id = $1 "
        "AND opened_seq < $3 ORDER BY opened_seq DESC LIMIT 1) AND seat = $2 AND status = 'settled'",
        table_id,
        seat,
        settled_seq,
    )


async def void(conn: asyncpg.Connection, b: Bet, reason: str) -> None:
    """A settled bet the table never applied: void, and its pool back to what it was before it."""
    await close_bet(conn, b.bet_id, "void", reason)
    await conn.execute(
        "UPDATE pools SET pool = pool - $2 + $3, bets = bets - 1, updated_at = now() WHERE table_id = $1",
        b.table_id,
        b.pool_after,
        b.pool_before,
    )


async def set_paused(conn: asyncpg.Connection, table_id: str, paused: bool, extend_ms: int = 0) -> list[str]:
    """Freeze (E5) or unfreeze the timers of the table's open bets, moving their deadlines by `extend_ms`."""
    rows = await conn.fetch(
        "UPDATE bets SET paused = $2, deadline_unix_ms = deadline_unix_ms + $3 "
        "WHERE table_id = $1 AND status = 'open' RETURNING bet_id",
        table_id,
        paused,
        extend_ms,
    )
    return [r["bet_id"] for r in rows]


async def restart_window(conn: asyncpg.Connection, bet_id: str, now_ms: int) -> int:
    """E2: the open bet's deadline moved to `now_ms` plus its whole window (as the table gave it; for a bet
    opened before windows were kept, from the row's creation to its first deadline); the new deadline."""
    return int(
        await conn.fetchval(
            "UPDATE bets SET deadline_unix_ms = $2 + COALESCE(window_ms, GREATEST(0, deadline_unix_ms - "
            "(EXTRACT(EPOCH FROM created_at) * 1000)::bigint)) WHERE bet_id = $1 RETURNING deadline_unix_ms",
            bet_id,
            now_ms,
        )
    )


async def pool(conn: asyncpg.Connection, table_id: str, lock: bool = False) -> Pool | None:
    r = await conn.fetchrow("SELECT * FROM pools WHERE table_id = $1" + (" FOR UPDATE" if lock else ""), table_id)
    return _pool(r) if r is not None else None


async def pools_total(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval("SELECT COALESCE(SUM(pool), 0) FROM pools"))


async def settle(conn: asyncpg.Connection, b: Bet, pool_after: int, draws: int) -> None:
    """The ledger row of a settled bet, its status, and its pool moved on, in the caller's transaction."""
    await conn.execute(
        "INSERT INTO ledger (bet_id, table_id, seat, seed, counter, numbers, die, jackpot_hit, stake, payout, "
        "pool_before, pool_add, jackpot, pool_after) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        b.bet_id,
        b.table_id,
        b.seat,
        b.seed,
        b.counter,
        list(b.numbers),
        b.die,
        b.jackpot_hit,
        b.stake,
        b.payout,
        b.pool_before,
        b.pool_add,
        b.jackpot,
        b.pool_after,
    )
    await conn.execute(
        "UPDATE pools SET pool = $2, bets = bets + 1, counter = counter + $3, updated_at = now() WHERE table_id = $1",
        b.table_id,
        pool_after,
        draws,
    )
    await close_bet(conn, b.bet_id, "settled", None)


async def outbox(conn: asyncpg.Connection, subject: str, msg_id: str, payload: bytes) -> None:
    await conn.execute("INSERT INTO outbox (subject, msg_id, payload) VALUES ($1, $2, $3)", subject, msg_id, payload)
