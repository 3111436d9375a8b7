"""A SIGKILLed table service resumes its tables: nothing committed is lost or doubled.

(A table whose settings recovery could not load is refused at CreateTable: test_commands.py.)"""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg
import pytest
from nats.js import JetStreamContext

from client import BotTable
from client.platform import Platform
from client.verify import check_table
from monopoly.v1 import table_pb2, table_pb2_grpc

from .helpers import TIMEOUT, assert_nobody_timed_out, clock_of, event_rows, table_state

pytestmark = pytest.mark.integration

SEEDS = (51, 52, 53)


async def wait_until(predicate: object, timeout: float) -> None:
    async def poll() -> None:
        while not predicate():  # type: ignore[operator]
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


async def stop_playing(games: list[BotTable], tasks: list[asyncio.Task[object]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for game in games:
        acting = getattr(game, "_acting", None)
        if acting is not None:
            acting.cancel()
            with contextlib.suppress(BaseException):
                await acting


async def ready(stub: table_pb2_grpc.TableServiceStub, table_id: str) -> None:
    """Wait until the (reconnecting) channel reaches the restarted service."""
    await stub.GetTable(table_pb2.GetTableRequest(table_id=table_id), wait_for_ready=True, timeout=60)


async def test_tables_survive_a_sigkill_of_the_table_service(
    platform: Platform, stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, js: JetStreamContext
) -> None:
    games = [BotTable(stub, seed=seed) for seed in SEEDS]
    for game in games:
        await game.create()
    # A host's table (X5) is recovered with its own settings, not the preset's.
    custom = await stub.CreateTable(
        table_pb2.CreateTableRequest(
            mode="custom", players=["a", "b"], seed=5, custom_settings_json='{"starting_cash": 20000}'
        ),
        timeout=30,
    )
    custom_before = await table_state(stub, custom.table_id)
    assert custom_before.config.starting_cash == 20000
    tasks: list[asyncio.Task[object]] = [asyncio.create_task(game.play()) for game in games]
    try:
        try:
            # Every game has committed commands, and is still far from its end.
            await wait_until(lambda: all(g.commands >= 40 for g in games), TIMEOUT)
        finally:
            await platform.table.kill()
        await stop_playing(games, tasks)

        committed = {g.table_id: await event_rows(pool, g.table_id) for g in games}
        for table_id, rows in committed.items():
            assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1)), table_id
        assert any(not g.state.finished for g in games if g.state is not None)

        await asyncio.wait_for(platform.table.start(), TIMEOUT)
        await ready(stub, games[0].table_id)
        custom_after = await table_state(stub, custom.table_id)
        assert custom_after.seq == custom_before.seq
        assert custom_after.config.starting_cash == 20000
        assert [p.cash for p in custom_after.players] == [20000, 20000]

        # New clients take the same seats (JoinTable hands out the existing tokens) and play on.
        resumed: list[BotTable] = []
        for game in games:
            tokens = {}
            for seat in range(game.players):
                joined = await stub.JoinTable(
                    table_pb2.JoinTableRequest(table_id=game.table_id, seat=seat, service_token=game.service_token),
                    timeout=30,
                )
                tokens[seat] = joined.seat_token
            assert tokens == game.tokens
            resumed.append(BotTable(stub, seed=game.seed + 100, table_id=game.table_id, tokens=tokens))
        finals = await asyncio.wait_for(asyncio.gather(*(r.play() for r in resumed)), TIMEOUT)

        for game, final in zip(games, finals, strict=True):
            assert final.finished, game.table_id
            rows = await event_rows(pool, game.table_id)
            before = committed[game.table_id]
            # What was committed before the crash is still there, unchanged, and the game went on from it.
            assert [(r["seq"], r["type"], r["envelope"], r["payload"]) for r in rows[: len(before)]] == [
                (r["seq"], r["type"], r["envelope"], r["payload"]) for r in before
            ]
            agreement = await check_table(pool, js, stub, game.table_id)
            assert agreement.rows == final.seq == len(rows)
            assert agreement.ok, agreement
    finally:
        for task in tasks:
            task.cancel()
        if platform.table.proc is None or platform.table.proc.returncode is not None:
            await platform.table.start()  # the session's service must be running when the test ends


async def test_E2_a_clean_restart_of_the_table_service_times_nobody_out(
    platform: Platform, stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    """From a clean stop (a restart, a rolling update) until the table runs again its clock stands still:
    the platform's downtime is not the player's (E2). Here the service is down longer than the whole turn
    timer (75 game seconds, 7.5 s at clock scale 10), and the resumed turn still has what it had left."""
    reply = await stub.CreateTable(
        table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob"], seed=61, clock_scale=10), timeout=30
    )
    table_id = reply.table_id
    await table_state(stub, table_id)
    seq_before = len(await event_rows(pool, table_id))
    await platform.table.stop()  # SIGTERM: a clean stop
    assert (await clock_of(pool, table_id))[1] is not None
    await asyncio.sleep(9.0)  # past the turn's deadline in wall time
    await asyncio.wait_for(platform.table.start(), TIMEOUT)
    await ready(stub, table_id)
    await asyncio.sleep(1.0)  # a deadline counted through the downtime would have fired at once
    await assert_nobody_timed_out(pool, table_id, seq_before)
    stopped_ms, paused_at = await clock_of(pool, table_id)
    assert paused_at is None and stopped_ms >= 9000


async def test_E2_a_sigkill_of_the_table_service_times_nobody_out(
    platform: Platform, stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    """A crash records nothing at its moment, so the instance that takes the table's partition next marks
    the clock as stopped from the last owner's last lease renewal (or the table's last commit), and the
    time until the table runs again is taken off it (E2): a SIGKILL, a lost node, an OOM kill are the
    platform's downtime too. Here the service is down longer than the whole turn timer."""
    reply = await stub.CreateTable(
        table_pb2.CreateTableRequest(mode="classic", players=["cat", "dan"], seed=62, clock_scale=10), timeout=30
    )
    table_id = reply.table_id
    await table_state(stub, table_id)
    seq_before = len(await event_rows(pool, table_id))
    try:
        await platform.table.kill()  # SIGKILL: nothing written at the stop
        assert (await clock_of(pool, table_id))[1] is None
        await asyncio.sleep(9.0)  # past the turn's deadline (7.5 s) in wall time
    finally:
        await asyncio.wait_for(platform.table.start(), TIMEOUT)
    await ready(stub, table_id)
    await asyncio.sleep(1.0)  # a deadline counted through the downtime would have fired at once
    await assert_nobody_timed_out(pool, table_id, seq_before)
    stopped_ms, paused_at = await clock_of(pool, table_id)
    assert paused_at is None and stopped_ms >= 9000
