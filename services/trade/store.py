"""The trade service's SQL: every statement it runs, in one place (schema "trade")."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg


@dataclass(frozen=True, slots=True)
class TradeRow:
    table_id: str
    trade_id: int
    proposer: int
    counterparty: int
    give_cash: int
    give_squares: tuple[int, ...]
    take_cash: int
    take_squares: tuple[int, ...]
    status: str
    turn_no: int
    table_seq: int
    reason: str
    rule: str
    #: T2 (hasbro): Get Out of Jail Free cards on each side.
    give_cards: tuple[int, ...] = ()
    take_cards: tuple[int, ...] = ()
    #: T2: the traded squares mortgaged at the proposal (None: proposed before they were recorded).
    mortgaged_squares: tuple[int, ...] | None = None


def _row(r: asyncpg.Record) -> TradeRow:
    return TradeRow(
        r["table_id"],
        r["trade_id"],
        r["proposer"],
        r["counterparty"],
        r["give_cash"],
        tuple(r["give_squares"]),
        r["take_cash"],
        tuple(r["take_squares"]),
        r["status"],
        r["turn_no"],
        r["table_seq"],
        r["reason"],
        r["rule"],
        tuple(r["give_cards"]),
        tuple(r["take_cards"]),
        None if r["mortgaged_squares"] is None else tuple(r["mortgaged_squares"]),
    )


@dataclass(frozen=True, slots=True)
class Counter:
    next_trade_id: int
    turn_no: int
    proposals: int


async def lock_counter(conn: asyncpg.Connection, table_id: str) -> Counter:
    """The table's counter row, created if missing and locked until the transaction ends:
    proposals of one table are counted and numbered one at a time."""
    await conn.execute("INSERT INTO trade_counters (table_id) VALUES ($1) ON CONFLICT DO NOTHING", table_id)
    r = await conn.fetchrow(
        "SELECT next_trade_id, turn_no, proposals FROM trade_counters WHERE table_id = $1 FOR UPDATE", table_id
    )
    assert r is not None
    return Counter(r["next_trade_id"], r["turn_no"], r["proposals"])


async def save_counter(conn: asyncpg.Connection, table_id: str, counter: Counter) -> None:
    await conn.execute(
        "UPDATE trade_counters SET next_trade_id = $2, turn_no = $3, proposals = $4 WHERE table_id = $1",
        table_id,
        counter.next_trade_id,
        counter.turn_no,
        counter.proposals,
    )


async def insert_trade(conn: asyncpg.Connection, t: TradeRow, request_id: str | None = None) -> None:
    await conn.execute(
        "INSERT INTO trades (table_id, trade_id, proposer, counterparty, give_cash, give_squares, take_cash, "
        "take_squares, status, turn_no, table_seq, reason, rule, give_cards, take_cards, request_id, "
        "mortgaged_squares) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        t.table_id,
        t.trade_id,
        t.proposer,
        t.counterparty,
        t.give_cash,
        list(t.give_squares),
        t.take_cash,
        list(t.take_squares),
        t.status,
        t.turn_no,
        t.table_seq,
        t.reason,
        t.rule,
        list(t.give_cards),
        list(t.take_cards),
        request_id,
        None if t.mortgaged_squares is None else list(t.mortgaged_squares),
    )


async def proposed(conn: asyncpg.Connection, table_id: str, proposer: int, request_id: str) -> TradeRow | None:
    """The proposal `proposer` made at the table under `request_id`, if any."""
    r = await conn.fetchrow(
        "SELECT * FROM trades WHERE table_id = $1 AND proposer = $2 AND request_id = $3", table_id, proposer, request_id
    )
    return _row(r) if r is not None else None


async def trade(conn: asyncpg.Connection, table_id: str, trade_id: int, lock: bool = False) -> TradeRow | None:
    """One trade; with `lock`, its row stays locked until the transaction ends (accept, decline,
    cancel and expiry of one trade take turns)."""
    sql = "SELECT * FROM trades WHERE table_id = $1 AND trade_id = $2" + (" FOR UPDATE" if lock else "")
    r = await conn.fetchrow(sql, table_id, trade_id)
    return _row(r) if r is not None else None


async def set_status(
    conn: asyncpg.Connection,
    table_id: str,
    trade_id: int,
    status: str,
    reason: str = "",
    rule: str = "",
    from_statuses: tuple[str, ...] = ("open",),
) -> TradeRow | None:
    """Move a trade that is in one of `from_statuses` to `status`; None if it was not (someone
    else moved it first: nothing changed)."""
    r = await conn.fetchrow(
        "UPDATE trades SET status = $3, reason = $4, rule = $5, updated_at = now() "
        "WHERE table_id = $1 AND trade_id = $2 AND status = ANY($6::text[]) RETURNING *",
        table_id,
        trade_id,
        status,
        reason,
        rule,
        list(from_statuses),
    )
    return _row(r) if r is not None else None


async def tables_with_open(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch("SELECT DISTINCT table_id FROM trades WHERE status = 'open'")
    return {r["table_id"] for r in rows}


async def has_open(conn: asyncpg.Connection, table_id: str) -> bool:
    return bool(
        await conn.fetchval("SELECT EXISTS (SELECT 1 FROM trades WHERE table_id = $1 AND status = 'open')", table_id)
    )


async def expire_open(
    conn: asyncpg.Connection, table_id: str, before_seq: int, reason: str, seats: tuple[int, ...] = ()
) -> list[TradeRow]:
    """Expire the table's open trades checked before `before_seq` (those of turns that have ended),
    or with `seats` only those a seat in it is part of. Idempotent: only open trades change."""
    rows = await conn.fetch(
        "UPDATE trades SET status = 'expired', reason = $3, rule = 'T1', updated_at = now() "
        "WHERE table_id = $1 AND status = 'open' AND table_seq < $2 "
        "AND (cardinality($4::int[]) = 0 OR proposer = ANY($4::int[]) OR counterparty = ANY($4::int[])) "
        "RETURNING *",
        table_id,
        before_seq,
        reason,
        list(seats),
    )
    return sorted((_row(r) for r in rows), key=lambda t: t.trade_id)


async def trades(conn: asyncpg.Connection, table_id: str, open_only: bool = False) -> list[TradeRow]:
    rows = await conn.fetch(
        "SELECT * FROM trades WHERE table_id = $1 AND (NOT $2 OR status = 'open') ORDER BY trade_id",
        table_id,
        open_only,
    )
    return [_row(r) for r in rows]


async def add_outbox(conn: asyncpg.Connection, subject: str, msg_id: str, payload: bytes) -> None:
    await conn.execute("INSERT INTO outbox (subject, msg_id, payload) VALUES ($1, $2, $3)", subject, msg_id, payload)
