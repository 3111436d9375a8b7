"""One serialization per event: Postgres keeps each event's envelope as the very bytes JetStream
delivers, and a table committed before that (JSON payloads only, migration 005) still replays."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from bots.heuristic import HeuristicBot
from client import BotTable
from client.verify import check_table, stream_envelopes
from engine import Event, RuleViolation, TableState, apply, codec, new_game, preset, replay
from monopoly.v1 import table_pb2_grpc
from servicekit import db, signals
from servicekit.bus import TABLE_SIGNALS
from servicekit.wire import batch_envelopes, stored_event
from services.table import api
from services.table import verify as table_verify
from services.table.tables import Tables, stored_events, wall_ms

from .helpers import TIMEOUT, event_rows

pytestmark = pytest.mark.integration

MIGRATIONS = Path(__file__).parents[2] / "services" / "table" / "migrations"
#: The migration that stores the envelopes (and leaves `payload` NULL from then on).
ENVELOPES = "005_event_envelopes.sql"


async def test_a_stored_event_is_byte_for_byte_what_jetstream_delivered_for_its_seq(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, js: JetStreamContext
) -> None:
    game = BotTable(stub, seed=71)
    await game.create()
    state = await asyncio.wait_for(game.play(), TIMEOUT)
    assert state.finished
    rows = await event_rows(pool, game.table_id)
    assert [r["seq"] for r in rows] == list(range(1, state.seq + 1))
    assert all(r["payload"] is None for r in rows)  # encoded once: no JSON beside the envelope

    published = dict(await stream_envelopes(js, game.table_id, len(rows)))
    assert sorted(published) == [r["seq"] for r in rows]
    for r in rows:
        assert bytes(r["envelope"]) == published[r["seq"]], r["seq"]

    # The signals carry the same bytes too: each signalled event's envelope is its row's.
    signalled = [r for r in rows if r["type"] in signals.TOPICS]
    sub = await js.subscribe(
        signals.subject("*", game.table_id),
        stream=TABLE_SIGNALS.name,
        ordered_consumer=True,
        deliver_policy=DeliverPolicy.ALL,
    )
    on_signals: list[bytes] = []
    try:
        while len(on_signals) < len(signalled):
            on_signals += batch_envelopes((await sub.next_msg(timeout=10)).data)
    finally:
        await sub.unsubscribe()
    assert on_signals == [bytes(r["envelope"]) for r in signalled]

    agreement = await check_table(pool, js, stub, game.table_id)
    assert agreement.ok and agreement.same_bytes, agreement


@pytest.fixture
async def legacy_pool(server_urls: tuple[str, str], tmp_path: Path) -> AsyncIterator[asyncpg.Pool]:
    """A schema of its own migrated as the table service was before migration 005 (every other one)."""
    schema = "legacy_events"
    conn = await asyncpg.connect(server_urls[1])
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    finally:
        await conn.close()
    before = tmp_path / "migrations"
    before.mkdir()
    for path in sorted(MIGRATIONS.glob("*.sql")):
        if path.name != ENVELOPES:
            shutil.copy(path, before / path.name)
    pool = await db.create_pool(server_urls[1], min_size=1, max_size=4, schema=schema)
    await db.migrate(pool, "table", before)
    try:
        yield pool
    finally:
        await pool.close()


def played(seed: int, commands: int) -> tuple[TableState, list[Event]]:
    """A classic game of bots, `commands` commands in: its state and every event."""
    state, events = new_game(preset("classic"), ["ann", "bob", "cy"], seed)
    bot = HeuristicBot(seed)
    for _ in range(commands):
        try:
            events += apply(state, bot.choose(state, state.actor))
        except RuleViolation:
            continue
    return state, events


async def test_a_table_committed_before_the_envelopes_were_stored_replays_and_plays_on(
    legacy_pool: asyncpg.Pool,
) -> None:
    state, events = played(seed=5, commands=150)
    table_id = "legacy0123456789"
    # What the table service wrote before migration 005: the row, and each event as JSON only.
    async with legacy_pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO tables (table_id, mode, players, seed, clock_epoch_ms, clock_scale, seq) "
            'VALUES ($1, \'classic\', \'["ann", "bob", "cy"]\', 5, $2, 1, $3)',
            table_id,
            wall_ms(),
            state.seq,
        )
        await conn.executemany(
            "INSERT INTO table_events (table_id, seq, type, payload, game_ms) VALUES ($1, $2, $3, $4::jsonb, $5)",
            [
                (table_id, seq, type(e).__name__, codec.dumps(codec.event_to_data(e)), 0)
                for seq, e in enumerate(events, start=1)
            ],
        )
    assert await db.migrate(legacy_pool, "table", MIGRATIONS) == [ENVELOPES]

    tables = Tables(legacy_pool)
    try:
        _, loaded = await tables.read(table_id)
        assert codec.state_to_data(loaded) == codec.state_to_data(state)
        async with legacy_pool.acquire() as conn:
            assert await table_verify.check_tables(conn, [table_id]) == []

        # The table plays on: the new events are stored as envelopes after the old JSON rows.
        actor = await tables.get(table_id)
        bot = HeuristicBot(6)
        for _ in range(40):
            try:
                await actor.submit(bot.choose(actor.state, actor.state.actor), "", None)
            except RuleViolation:
                continue
        assert actor.state.seq > state.seq
        async with legacy_pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT seq, type, envelope, payload, game_ms, committed_at FROM table_events"
                " WHERE table_id = $1 ORDER BY seq",
                table_id,
            )
            assert await table_verify.check_tables(conn, [table_id]) == []
        old, new = rows[: state.seq], rows[state.seq :]
        assert all(r["envelope"] is None and r["payload"] is not None for r in old)
        assert new and all(r["envelope"] is not None and r["payload"] is None for r in new)
        assert codec.state_to_data(replay(stored_events(rows))) == codec.state_to_data(actor.state)
        _, reloaded = await Tables(legacy_pool).read(table_id)
        assert codec.state_to_data(reloaded) == codec.state_to_data(actor.state)

        # A watcher resuming over both kinds of rows gets each event, the seed and the piles' order hidden (G10).
        shown = [api._stored(table_id, r, 1) for r in rows]
        assert [e.seq for e in shown] == [r["seq"] for r in rows]
        assert shown[0].payload.table_created.seed == 0
        for env, r in zip(shown[1:], rows[1:], strict=True):
            assert env.type == r["type"]
            event = stored_event(env.SerializeToString(), None)
            assert codec.event_to_data(event) == codec.public_event_data(stored_event(r["envelope"], r["payload"]))
    finally:
        await tables.stop()
