"""`monopoly verify` and the table service's periodic pass find seq gaps and replay mismatches in the
tables' records (real Postgres), and nothing in healthy tables."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bots.heuristic import HeuristicBot
from engine import RuleViolation
from servicekit import db
from services.table import verify
from services.table.tables import Tables

pytestmark = pytest.mark.integration

SCHEMA = "verify_check"
MIGRATIONS = Path(__file__).parents[2] / "services" / "table" / "migrations"


@pytest.fixture(scope="module")
async def tables(server_urls: tuple[str, str]) -> AsyncIterator[Tables]:
    pool = await db.create_pool(server_urls[1], min_size=1, max_size=2, schema=SCHEMA)
    await db.migrate(pool, "table", MIGRATIONS)
    t = Tables(pool, snapshot_every=25)
    try:
        yield t
    finally:
        await t.stop()
        await pool.close()


async def played(t: Tables, seed: int, moves: int = 60) -> str:
    table_id = (await t.create("classic", ["ann", "bob"], seed, {}, 1)).table_id
    actor, bot = t.actors[table_id], HeuristicBot(seed)
    for i in range(moves):
        state = actor.state
        if state.finished:
            break
        with contextlib.suppress(RuleViolation):
            await actor.submit(bot.choose(state, state.actor), f"{seed}-{i}", None)
    await actor.stop()
    del t.actors[table_id]
    return table_id


async def test_verify_finds_a_gap_and_a_replay_mismatch_and_passes_healthy_tables(
    tables: Tables, server_urls: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    healthy, gapped, tampered = [await played(tables, seed) for seed in (71, 72, 73)]
    async with tables.pool.acquire() as conn:
        await conn.execute("DELETE FROM table_events WHERE table_id = $1 AND seq = 7", gapped)
        snapshot = json.loads(await conn.fetchval("SELECT snapshot FROM tables WHERE table_id = $1", tampered))
        snapshot["players"][0]["cash"] += 1  # the snapshot no longer what the events give
        await conn.execute("UPDATE tables SET snapshot = $2::jsonb WHERE table_id = $1", tampered, json.dumps(snapshot))
        findings = await verify.check_tables(conn, [healthy, gapped, tampered])
    assert {(f.table_id, f.problem) for f in findings} == {(gapped, "gap"), (tampered, "replay")}
    verify.report(findings, 3)
    assert verify.PROBLEMS.labels("gap")._value.get() == 1
    # The command line, on the same records: exit 1 and one line per problem.
    url = (
        f"{server_urls[1]}&search_path={SCHEMA}" if "?" in server_urls[1] else f"{server_urls[1]}?search_path={SCHEMA}"
    )
    assert await verify.verify(url, [healthy]) == 0
    assert await verify.verify(url, [healthy, gapped, tampered]) == 1
    out = capsys.readouterr().out
    assert f"{gapped}: gap:" in out and f"{tampered}: replay:" in out
    assert "3 tables checked: 2 with problems (1 gap, 1 replay, 0 ledger)" in out
    assert await verify.verify(url, [healthy, "no-such-table"]) == 1  # a mistyped id is no pass
    out = capsys.readouterr().out
    assert "no-such-table: no such table" in out and "1 tables checked: 0 with problems" in out


def test_the_command_needs_only_the_database_and_says_in_one_line_when_it_is_out_of_reach() -> None:
    """No token key (these commands read Postgres and call no service); a database out of reach is one
    line with the password left out, exit 1."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("TOKEN_SECRET", "TOKEN_SECRETS", "MONOPOLY_DEV")}
    env["DATABASE_URL"] = "postgresql://someone:hunter2@127.0.0.1:1/monopoly"
    for args in (["verify", "t1"], ["casino", "verify", "t1:5"]):
        proc = subprocess.run(
            [sys.executable, "-m", "monopoly_cli", *args], capture_output=True, text=True, env=env, timeout=60
        )
        assert proc.returncode == 1, proc.stderr
        assert "out of reach" in proc.stderr and "hunter2" not in proc.stderr and "Traceback" not in proc.stderr
