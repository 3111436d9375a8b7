"""The DuckDB side of an export: tables from the schema, one transaction per batch, the position.

Exactly once per (table_id, seq): each batch's rows and the stream position
they reach are committed in one DuckDB transaction, and a resumed export
starts after the committed position. An event the stream holds twice (a
re-publish outside JetStream's duplicate window) is dropped by the `events`
table's primary key (table_id, seq), and its type's row with it. The event
type tables carry no index of their own: an index costs about eight times
the insert.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa

from . import rows

#: The position of an export in the table event stream (the archive carries the same sequence numbers).
SOURCE = "MONOPOLY_TABLE_EVENTS"

_SQL_TYPES = {
    pa.int64(): "BIGINT",
    pa.int32(): "INTEGER",
    pa.uint64(): "UBIGINT",
    pa.string(): "VARCHAR",
    pa.bool_(): "BOOLEAN",
    pa.float64(): "DOUBLE",
    pa.binary(): "BLOB",
    pa.timestamp("ms", tz="UTC"): "TIMESTAMPTZ",
}


def _sql_type(t: pa.DataType) -> str:
    if pa.types.is_list(t):
        return _sql_type(t.value_type) + "[]"
    return _SQL_TYPES[t]


def _create(con: duckdb.DuckDBPyConnection, name: str, schema: pa.Schema, key: tuple[str, ...] = ()) -> None:
    columns = [f'"{f.name}" {_sql_type(f.type)}' for f in schema]
    existing = {
        r[0]
        for r in con.execute(
            f"SELECT column_name FROM information_schema.columns WHERE table_name = '{name}'"
        ).fetchall()
    }
    if existing:  # a schema newer than the file: its new fields become new columns
        for f in schema:
            if f.name not in existing:
                con.execute(f'ALTER TABLE "{name}" ADD COLUMN "{f.name}" {_sql_type(f.type)}')
        return
    pk = f", PRIMARY KEY ({', '.join(key)})" if key else ""
    con.execute(f'CREATE TABLE "{name}" ({", ".join(columns)}{pk})')


def open_db(path: Path) -> duckdb.DuckDBPyConnection:
    """The export file, its tables brought to the schema this reader knows."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE IF NOT EXISTS export_progress (source VARCHAR PRIMARY KEY, last_stream_seq BIGINT)")
    _create(con, "events", rows.ENVELOPE, ("table_id", "seq"))
    for name, descriptor in rows.event_types().items():
        _create(con, name, rows.schema_of(descriptor))
    _create(con, "tables", rows.TABLES, ("table_id",))
    _create(con, "board_squares", rows.SQUARES)
    _create(con, "dead_letters", rows.DEAD, ("stream_seq",))
    create_views(con)
    return con


def position(con: duckdb.DuckDBPyConnection) -> int:
    """The last stream sequence committed to this file (0: none)."""
    row = con.execute("SELECT last_stream_seq FROM export_progress WHERE source = ?", [SOURCE]).fetchone()
    return int(row[0]) if row else 0


def dead_letters(con: duckdb.DuckDBPyConnection) -> list[rows.Raw]:
    """The messages an export could not decode, as they came from the stream."""
    found = con.execute("SELECT stream_seq, subject, published, data FROM dead_letters ORDER BY stream_seq").fetchall()
    return [rows.Raw(int(seq), subject, published, bytes(data)) for seq, subject, published, data in found]


def commit(con: duckdb.DuckDBPyConnection, batch: rows.Batch, revived: Sequence[int] = ()) -> int:
    """The batch's rows and its position, all or nothing; `revived`: dead letters (by stream sequence)
    the batch now holds decoded, deleted in the same transaction. The events new to the file (one
    published twice is there once)."""
    tables = batch.arrow()
    added = 0
    con.execute("BEGIN TRANSACTION")
    try:
        if revived:
            con.execute("DELETE FROM dead_letters WHERE stream_seq IN (SELECT unnest(?))", [list(revived)])
        events = tables.pop("events", None)
        if events is not None:
            con.register("_batch", events)
            new = con.execute("INSERT OR IGNORE INTO events SELECT * FROM _batch RETURNING table_id, seq").fetchall()
            con.unregister("_batch")
            added = len(new)
            if len(new) < events.num_rows:  # some were exported before: keep only the new ones' rows
                keys = {(str(t), int(s)) for t, s in new}
                tables = {name: _only(t, keys) for name, t in tables.items()}
        for name, table in tables.items():
            if table.num_rows == 0:
                continue
            con.register("_batch", table)
            cols = ", ".join(f'"{c}"' for c in table.column_names)
            keyed = name in ("tables", "dead_letters")  # small: their primary key costs nothing
            con.execute(f'INSERT {"OR IGNORE " if keyed else ""}INTO "{name}" ({cols}) SELECT {cols} FROM _batch')
            con.unregister("_batch")
        con.execute(
            "INSERT INTO export_progress VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET "
            "last_stream_seq = greatest(export_progress.last_stream_seq, excluded.last_stream_seq)",
            [SOURCE, batch.last_stream_seq],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return added


def _only(table: pa.Table, keys: set[tuple[str, int]]) -> pa.Table:
    """The rows of an event type's (or dimension's) table whose event is among `keys`."""
    if "table_id" not in table.column_names:
        return table  # dead letters: keyed by stream sequence, never doubled
    if "seq" not in table.column_names:  # a table's dimensions: they come with its TableCreated, event 1
        mask = [(t, 1) in keys for t in table.column("table_id").to_pylist()]
        return table.filter(pa.array(mask, pa.bool_()))
    pairs = zip(table.column("table_id").to_pylist(), table.column("seq").to_pylist(), strict=True)
    return table.filter(pa.array([p in keys for p in pairs], pa.bool_()))


VIEWS = {
    # One row per game: mode, players, rounds, game minutes, winner and why it ended (G10, E6).
    "games": """
        SELECT t.table_id, t.ruleset, t.mode, t.board, t.players,
               (SELECT max("round") FROM turn_started s WHERE s.table_id = t.table_id) AS rounds,
               g.game_ms / 60000.0 AS game_minutes,
               g.winner,
               CASE WHEN g.winner >= 0 THEN t.player_names[g.winner + 1] END AS winner_name,
               g.reason AS end_reason,
               g.table_id IS NOT NULL AS finished
        FROM tables t LEFT JOIN game_ended g USING (table_id)
    """,
    # Every payment (D1) with the square it arose on and what it was for (PaymentMade.square and
    # reason_code, schema 4 on). A payment written before schema 4 has no square (NULL); the view
    # takes the payer's last move before it, which is the rented square for rent (G7, P2-P4).
    "payments": """
        SELECT p.table_id, p.seq, p.debtor, p.creditor, p.amount, p.bank_share, p.reason_code AS kind,
               p.reason, coalesce(p.square, m.to_square) AS square, p.square IS NULL AS square_inferred,
               b.name AS square_name, b.colour_group, b.group_name, b.kind AS square_kind
        FROM payment_made p
        ASOF LEFT JOIN (SELECT table_id, seq, seat, to_square FROM moved) m
          ON p.square IS NULL AND p.table_id = m.table_id AND p.debtor = m.seat AND p.seq >= m.seq
        LEFT JOIN board_squares b ON b.table_id = p.table_id AND b.square = coalesce(p.square, m.to_square)
    """,
    "rents": """
        SELECT table_id, seq, debtor AS payer, creditor AS owner, amount, square, square_name, colour_group,
               group_name, square_kind
        FROM payments WHERE kind = 'PAYMENT_REASON_RENT'
    """,
    "rents_by_square": """
        SELECT square, any_value(square_name) AS square_name, any_value(colour_group) AS colour_group,
               count(*) AS payments, sum(amount) AS total
        FROM rents GROUP BY square ORDER BY square
    """,
    "rents_by_group": """
        SELECT colour_group, any_value(group_name) AS group_name, any_value(square_kind) AS kind,
               count(*) AS payments, sum(amount) AS total
        FROM rents GROUP BY colour_group ORDER BY colour_group
    """,
    # Auctions (A1-A3, D4, P10): how each opened and settled, against the square's list price.
    "auctions": """
        SELECT s.table_id, s.auction_id, s.square, b.name AS square_name, b.price AS list_price, s.reason,
               s.start_price, e.winner, e.price, e.price / nullif(b.price, 0) AS price_to_list
        FROM auction_started s
        LEFT JOIN auction_settled e ON e.table_id = s.table_id AND e.auction_id = s.auction_id
        LEFT JOIN board_squares b ON b.table_id = s.table_id AND b.square = s.square
    """,
    # Casino bets (K1-K4) and their outcome; jackpot wins are the rows with jackpot_hit.
    "casino_bets": """
        SELECT p.table_id, p.seq, p.seat, p.numbers, p.stake, s.die, s.payout, s.jackpot_hit, s.jackpot
        FROM bet_placed p
        ASOF LEFT JOIN bet_settled s ON s.table_id = p.table_id AND s.seat = p.seat AND s.seq > p.seq
    """,
    "jackpot_wins": "SELECT * FROM casino_bets WHERE jackpot_hit",
    # Where tokens come to rest (B1): every move's destination.
    "landings": "SELECT to_square AS square, count(*) AS landings FROM moved GROUP BY 1 ORDER BY 1",
}


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    for name, sql in VIEWS.items():
        con.execute(f'CREATE OR REPLACE VIEW "{name}" AS {sql}')


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows in the envelope table and the dead letters."""
    events = con.execute("SELECT count(*) FROM events").fetchone()
    dead = con.execute("SELECT count(*) FROM dead_letters").fetchone()
    return {"events": int(events[0]) if events else 0, "dead_letters": int(dead[0]) if dead else 0}
