"""Invariant checks of the tables' records, for operators: `monopoly verify` and the table service's
periodic pass.

Per table: its events' seqs run 1..n with n the table row's seq (a **gap**); replaying the events
reaches that seq, without an error, and through the stored snapshot (a **replay** mismatch); the
money is conserved against the bank's ledger at the end (a **ledger** imbalance,
`engine.check_invariants`). Each problem found is logged and counted (`table_verify_problems`), so
corruption is known before a player meets it. Reads only; never repairs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
from prometheus_client import Counter, Gauge

from engine import InvariantBroken, check_invariants, codec, evolve, replay
from engine.events import TableCreated
from servicekit.wire import stored_event

log = logging.getLogger(__name__)

PROBLEMS = Gauge("table_verify_problems", "Tables with a problem at the last verification pass", ["problem"])
CHECKED = Counter("table_verify_tables_total", "Tables verified")
#: How often the table service verifies the tables that changed since its last pass.
VERIFY_INTERVAL_S = 300.0
PROBLEM_KINDS = ("gap", "replay", "ledger")

_GAPS = """
SELECT t.table_id, t.seq, count(e.seq) AS events, coalesce(min(e.seq), 0) AS first, coalesce(max(e.seq), 0) AS last
FROM tables t LEFT JOIN table_events e USING (table_id)
WHERE t.table_id = ANY($1::text[])
GROUP BY t.table_id, t.seq
HAVING count(e.seq) <> t.seq OR coalesce(min(e.seq), 1) <> 1 OR coalesce(max(e.seq), 0) <> t.seq
"""


@dataclass(frozen=True, slots=True)
class Finding:
    table_id: str
    problem: str  # gap | replay | ledger
    detail: str


async def tables_changed(conn: asyncpg.Connection, since: float | None) -> list[str]:
    """The tables written since `since` (unix seconds; None: every table)."""
    if since is None:
        return [r["table_id"] for r in await conn.fetch("SELECT table_id FROM tables ORDER BY created_at")]
    rows = await conn.fetch(
        "SELECT table_id FROM tables WHERE updated_at >= to_timestamp($1) ORDER BY created_at", since
    )
    return [r["table_id"] for r in rows]


async def check_tables(conn: asyncpg.Connection, table_ids: Sequence[str]) -> list[Finding]:
    """Every problem of the given tables."""
    findings = [
        Finding(
            r["table_id"],
            "gap",
            f"row seq {r['seq']}, {r['events']} events, seqs {r['first']}..{r['last']}",
        )
        for r in await conn.fetch(_GAPS, list(table_ids))
    ]
    gapped = {f.table_id for f in findings}
    for table_id in table_ids:
        if table_id not in gapped:
            findings += await _check_replay(conn, table_id)
    CHECKED.inc(len(table_ids))
    return findings


async def _check_replay(conn: asyncpg.Connection, table_id: str) -> list[Finding]:
    # One snapshot of both: a table playing on between two reads would look like events past its row.
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        row = await conn.fetchrow("SELECT seq, snapshot, snapshot_seq FROM tables WHERE table_id = $1", table_id)
        if row is None:
            return []
        rows = await conn.fetch(
            "SELECT seq, envelope, payload FROM table_events WHERE table_id = $1 ORDER BY seq", table_id
        )
    try:
        events = [stored_event(r["envelope"], r["payload"]) for r in rows]
        first = events[0]
        if not isinstance(first, TableCreated):
            return [Finding(table_id, "replay", f"its first event is {type(first).__name__}, not TableCreated")]
        state = replay(events[:1])
        snapshot = json.loads(row["snapshot"]) if row["snapshot"] is not None else None
        for event in events[1:]:
            evolve(state, event)
            if snapshot is not None and state.seq == row["snapshot_seq"] and codec.state_to_data(state) != snapshot:
                return [Finding(table_id, "replay", f"the replay differs from the snapshot at seq {state.seq}")]
    except Exception as exc:  # an event that does not fit the state before it
        return [Finding(table_id, "replay", f"{type(exc).__name__}: {exc}")]
    if state.seq != row["seq"]:
        return [Finding(table_id, "replay", f"replays to seq {state.seq}, the row says {row['seq']}")]
    try:
        check_invariants(state, state.seq)
    except InvariantBroken as exc:
        return [Finding(table_id, "ledger", str(exc))]
    return []


def report(findings: Sequence[Finding], checked: int) -> None:
    """The metric and one log line per problem, then a summary."""
    for kind in PROBLEM_KINDS:
        PROBLEMS.labels(kind).set(sum(1 for f in findings if f.problem == kind))
    for f in findings:
        log.error("verify: table %s: %s: %s", f.table_id, f.problem, f.detail)
    log.info("verify: %d tables checked, %d with problems", checked, len({f.table_id for f in findings}))


async def periodically(pool: asyncpg.Pool, interval_s: float = VERIFY_INTERVAL_S) -> None:
    """The table service's pass: at start the tables written in the last hour, then those written
    since the last pass (`monopoly verify` checks them all)."""
    since: float | None = time.time() - 3600
    while True:
        started = time.time()
        try:
            async with pool.acquire() as conn:
                table_ids = await tables_changed(conn, since)
                findings = await check_tables(conn, table_ids)
            report(findings, len(table_ids))
            since = started - 1.0  # a little overlap: a commit racing the pass's start is seen next time
        except Exception:  # Postgres away: the next pass covers what this one missed
            log.exception("verify: the pass failed")
        await asyncio.sleep(interval_s)


async def verify(database_url: str, table_ids: Sequence[str]) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        wanted = list(table_ids) or await tables_changed(conn, None)
        findings = await check_tables(conn, wanted)
        if table_ids:
            known = {
                r["table_id"] for r in await conn.fetch("SELECT table_id FROM tables WHERE table_id = ANY($1)", wanted)
            }
            missing = [t for t in wanted if t not in known]
        else:
            missing = []
    except asyncpg.UndefinedTableError:
        print("monopoly verify: this database has no tables (the table service never ran on it)")
        return 1
    finally:
        await conn.close()
    for table_id in missing:
        print(f"{table_id}: no such table")
    for f in findings:
        print(f"{f.table_id}: {f.problem}: {f.detail}")
    broken = len({f.table_id for f in findings})
    counts = ", ".join(f"{sum(1 for f in findings if f.problem == k)} {k}" for k in PROBLEM_KINDS)
    print(f"{len(wanted) - len(missing)} tables checked: {broken} with problems ({counts})")
    return 1 if findings or missing else 0
