"""The casino service with the table service, on real NATS and Postgres (K1-K4, E1/E2).

Tables delegate their casino (`external=["casino"]`); a deterministic driver
(GetTable + engine.legal_commands) plays seed 688, whose first roll and tenth
command land a player on the casino. Pools are seeded by the tests (a pool row
inserted before the table's first bet) so the die and the jackpot draw are known.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import grpc
import pytest
from nats.js import JetStreamContext

from client import platform_channel
from client.casino import connect as casino_connect
from client.casino import decline, open_bet, place_bet
from client.casino import pool as get_pool
from client.platform import ROOT, Platform
from engine import Command, ConfirmBack, Leave, RequestPause, TableState, VotePause, legal_commands
from engine.casino import draw
from engine.config import CasinoRules
from monopoly.v1 import casino_pb2, casino_pb2_grpc, common_pb2, table_pb2, table_pb2_grpc
from servicekit import auth, bus, signals
from servicekit.wire import command_to_proto, envelope
from services.casino.handlers import DURABLE as CASINO_DURABLE

from .helpers import event_rows, join_seats, row_data, row_event, rule_id, table_state

pytestmark = pytest.mark.integration

RULES = CasinoRules()
SEED = 688  # classic, 2 players: the first roll and the tenth command reach the casino (driver below)
SCALE = 3  # 75 s turns last 25 s: time enough to bet
PRIORITY = ("Roll", "PayJailFine", "BuyProperty", "Pay", "EndTurn", "PassBid", "DeclineProperty")
WAIT = 30.0


def jackpot_seed(hits: tuple[bool, ...]) -> int:
    """A pool seed whose bets k = 0, 1, ... hit the jackpot (K3) exactly as `hits` says."""
    for seed in range(1, 1_000_000):
        if all(draw(seed, 2 * k, RULES)[1] == hit for k, hit in enumerate(hits)):
            return seed
    raise AssertionError("no such seed")


@pytest.fixture(scope="module")
def casino_platform(platform: Platform) -> Platform:
    """The session's platform (one table service per NATS: they share their durable consumers)."""
    return platform


@pytest.fixture(scope="module")
async def stubs(
    platform: Platform, casino_platform: Platform
) -> AsyncIterator[tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub]]:
    table_channel = platform_channel(platform.table_target)
    casino_channel, casino = casino_connect(casino_platform.target("casino"))
    try:
        yield table_pb2_grpc.TableServiceStub(table_channel), casino
    finally:
        await table_channel.close()
        await casino_channel.close()


class Table:
    """A 2-player table with external casino, driven through the table service."""

    def __init__(self, stub: table_pb2_grpc.TableServiceStub, scale: int = SCALE) -> None:
        self.stub = stub
        self.scale = scale
        self.table_id = ""
        self.tokens: dict[int, str] = {}

    async def create(self, db: asyncpg.Pool, pool_seed: int | None = None) -> Table:
        reply = await self.stub.CreateTable(
            table_pb2.CreateTableRequest(
                mode="classic", players=["ann", "bob"], seed=SEED, clock_scale=self.scale, external=["casino"]
            )
        )
        self.table_id = reply.table_id
        if pool_seed is not None:  # before the first bet opens: the casino keeps this pool (K4)
            await db.execute("INSERT INTO casino.pools (table_id, seed) VALUES ($1, $2)", self.table_id, pool_seed)
        self.tokens = await join_seats(self.stub, self.table_id, 2)
        return self

    async def state(self) -> TableState:
        return await table_state(self.stub, self.table_id)

    async def jackpot(self) -> int:
        view = await self.stub.GetTable(table_pb2.GetTableRequest(table_id=self.table_id), timeout=10)
        return int(json.loads(view.state_json)["jackpot"])

    async def submit(self, command: Command) -> None:
        await self.stub.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id=self.table_id,
                command_id=uuid.uuid4().hex,
                seat_token=self.tokens[command.seat],
                command=command_to_proto(command),
            ),
            timeout=10,
        )

    async def to_casino(self, limit: int = 400) -> TableState:
        """Play (buy, pay, end turns) until a bet is open at the casino."""
        for _ in range(limit):
            state = await self.state()
            assert not state.finished
            if state.casino:
                return state
            legal = {type(c).__name__: c for c in reversed(legal_commands(state, state.actor))}
            command = next((legal[name] for name in PRIORITY if name in legal), None) or next(iter(legal.values()))
            try:
                await self.submit(command)
            except grpc.aio.AioRpcError as exc:  # a timer moved the table on meanwhile: look again
                assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc
        raise AssertionError("nobody reached the casino")

    async def settled(self, timeout: float = WAIT) -> TableState:
        """The table once it applied the casino's result (no bet open any more)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while (state := await self.state()).casino:
            assert asyncio.get_running_loop().time() < deadline, "the table never applied the casino's result"
            await asyncio.sleep(0.05)
        return state


async def bet_opened(casino: casino_pb2_grpc.CasinoServiceStub, table_id: str) -> casino_pb2.BetView:
    deadline = asyncio.get_running_loop().time() + WAIT
    while (bet := await open_bet(casino, table_id)) is None:
        assert asyncio.get_running_loop().time() < deadline, "the casino never opened the bet"
        await asyncio.sleep(0.05)
    return bet


async def pool_row(db: asyncpg.Pool, table_id: str) -> asyncpg.Record:
    row = await db.fetchrow("SELECT * FROM casino.pools WHERE table_id = $1", table_id)
    assert row is not None
    return row


async def table_events_of(db: asyncpg.Pool, table_id: str, kind: str) -> list[dict[str, object]]:
    return [row_data(r) for r in await event_rows(db, table_id) if r["type"] == kind]


async def assert_pools_agree(table: Table, casino: casino_pb2_grpc.CasinoServiceStub) -> int:
    """The table's mirror of the pool (state.jackpot) equals the casino's pool."""
    amount = (await get_pool(casino, table.table_id)).pool
    assert await table.jackpot() == amount
    return amount


def monopoly_cli(*args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("monopoly")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "monopoly_cli"]
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT / "libs")}
    return subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=60, check=False)


async def test_a_bet_pays_its_payout_and_verifies(
    casino_platform: Platform,
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub],
    pool: asyncpg.Pool,
    server_urls: tuple[str, str],
    js: JetStreamContext,
) -> None:
    table_stub, casino = stubs
    db = pool
    table = await Table(table_stub).create(db, pool_seed=jackpot_seed((False,)))
    state = await table.to_casino()
    seat, cash = state.current, state.players[state.current].cash
    bet = await bet_opened(casino, table.table_id)
    assert (bet.seat, bet.status) == (seat, "open")
    opened = await table_events_of(db, table.table_id, "CasinoOpened")
    assert bet.bet_id.startswith(f"{table.table_id}:") and len(opened) == 1

    row = await pool_row(db, table.table_id)
    die, hit = draw(row["seed"], row["counter"], RULES)
    assert not hit
    numbers = [die, die % 6 + 1]  # K2: a hit on two numbers pays 6000 / 2, stake included
    settled = await place_bet(casino, table.table_id, seat, table.tokens[seat], numbers)
    assert (settled.status, settled.die, settled.jackpot_hit) == ("settled", die, False)
    assert (settled.stake, settled.payout, settled.jackpot, settled.pool_after) == (1000, 3000, 0, 500)

    after = await table.settled()
    assert after.players[seat].cash == cash - RULES.stake + settled.payout
    [event] = await table_events_of(db, table.table_id, "BetSettled")
    assert (event["die"], event["payout"], event["jackpot"]) == (die, 3000, 0)
    assert await assert_pools_agree(table, casino) == 500  # K4

    # Settled once: a second bet on it is refused.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await place_bet(casino, table.table_id, seat, table.tokens[seat], [1])
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(refused.value) == "K1"
    assert "already settled" in (refused.value.details() or "")
    got = await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id, bet_id=settled.bet_id))
    assert got == settled
    with pytest.raises(grpc.aio.AioRpcError) as none_open:
        await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id))
    assert none_open.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as too_long:  # refused before it is looked up (or quoted)
        await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id, bet_id="b" * 20_000))
    assert too_long.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    # Metrics: bets by outcome, payouts, the pools' total.
    port = casino_platform.processes["casino"].env["CASINO_METRICS_PORT"]
    scraped = await asyncio.to_thread(
        lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
    )
    text = scraped.decode()
    assert 'casino_bets_total{outcome="won"}' in text, text[-2000:]
    assert 'casino_payouts_dollars_total{kind="payout"}' in text, text[-2000:]
    assert "casino_jackpot_pool_dollars" in text

    # (e) monopoly casino verify: a match, then a mismatch once the ledger is tampered with.
    db_url = server_urls[1]
    ok = await asyncio.to_thread(monopoly_cli, "casino", "verify", settled.bet_id, database_url=db_url)
    assert ok.returncode == 0 and "match" in ok.stdout, ok.stdout + ok.stderr
    await db.execute("UPDATE casino.ledger SET die = $2 WHERE bet_id = $1", settled.bet_id, die % 6 + 1)
    try:
        bad = await asyncio.to_thread(monopoly_cli, "casino", "verify", settled.bet_id, database_url=db_url)
    finally:
        await db.execute("UPDATE casino.ledger SET die = $2 WHERE bet_id = $1", settled.bet_id, die)
    assert bad.returncode == 1 and "MISMATCH" in bad.stdout, bad.stdout + bad.stderr

    # (g) The same CasinoOpened again under a new message id opens nothing new.
    [opened_row] = [r for r in await event_rows(db, table.table_id) if r["type"] == "CasinoOpened"]
    env = envelope(
        table.table_id,
        opened_row["seq"],
        row_event(opened_row),
        opened_row["game_ms"],
        SCALE,
        0,
    )
    ack = await js.publish(
        signals.subject("casino", table.table_id),
        common_pb2.EventBatch(events=[env]).SerializeToString(),
        headers={"Nats-Msg-Id": f"redelivery-{uuid.uuid4().hex}"},
    )
    deadline = asyncio.get_running_loop().time() + WAIT
    while (info := await js.consumer_info(bus.TABLE_SIGNALS.name, CASINO_DURABLE)).ack_floor.stream_seq < ack.seq:
        assert asyncio.get_running_loop().time() < deadline, info
        await asyncio.sleep(0.05)
    bets = await db.fetch("SELECT bet_id, status FROM casino.bets WHERE table_id = $1", table.table_id)
    assert [(r["bet_id"], r["status"]) for r in bets] == [(settled.bet_id, "settled")]
    assert await open_bet(casino, table.table_id) is None
    assert len(await table_events_of(db, table.table_id, "BetSettled")) == 1


async def test_the_pool_grows_by_500_a_bet_and_a_jackpot_pays_it_all(
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub], pool: asyncpg.Pool
) -> None:
    table_stub, casino = stubs
    db = pool
    table = await Table(table_stub).create(db, pool_seed=jackpot_seed((False, True)))
    assert (await pool_of(casino, table.table_id)) == (0, 0)  # K4: starts at $0

    # Bet 1: a miss; the pool holds the bank's $500.
    state = await table.to_casino()
    seat = state.current
    await bet_opened(casino, table.table_id)
    row = await pool_row(db, table.table_id)
    die, _ = draw(row["seed"], row["counter"], RULES)
    miss = [n for n in range(1, 7) if n != die][:3]
    first = await place_bet(casino, table.table_id, seat, table.tokens[seat], miss)
    assert (first.payout, first.jackpot, first.jackpot_hit, first.pool_after) == (0, 0, False, 500)
    # Asked again (its answer lost on the way back): the same settled bet, nothing staked twice.
    assert await place_bet(casino, table.table_id, seat, table.tokens[seat], list(reversed(miss))) == first
    with pytest.raises(grpc.aio.AioRpcError) as other_numbers:  # another bet is not the same call asked again
        await place_bet(casino, table.table_id, seat, table.tokens[seat], [die])
    assert rule_id(other_numbers.value) == "K1"
    after = await table.settled()
    assert after.players[seat].cash == state.players[seat].cash - 1000
    assert await assert_pools_agree(table, casino) == 500
    assert (await pool_of(casino, table.table_id)) == (500, 1)

    # Bet 2: the jackpot draw hits; the whole pool (this bet's $500 included) goes to the bettor.
    state = await table.to_casino()
    seat = state.current
    await bet_opened(casino, table.table_id)
    row = await pool_row(db, table.table_id)
    assert row["counter"] == 2
    die, hit = draw(row["seed"], row["counter"], RULES)
    assert hit
    second = await place_bet(casino, table.table_id, seat, table.tokens[seat], [die])
    assert (second.payout, second.jackpot, second.jackpot_hit, second.pool_after) == (6000, 1000, True, 0)
    after = await table.settled()
    assert after.players[seat].cash == state.players[seat].cash - 1000 + 6000 + 1000
    assert await assert_pools_agree(table, casino) == 0
    assert (await pool_of(casino, table.table_id)) == (0, 2)
    ledger = await db.fetch(
        "SELECT counter, pool_before, pool_add, jackpot, pool_after FROM casino.ledger WHERE table_id = $1 "
        "ORDER BY counter",
        table.table_id,
    )
    assert [tuple(r) for r in ledger] == [(0, 0, 500, 0, 500), (2, 500, 500, 1000, 0)]


async def test_K4_R3_a_bettor_who_leaves_before_the_table_applies_the_result_voids_the_bet(
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub], pool: asyncpg.Pool
) -> None:
    """The bettor sees the result and leaves at once. The Leave usually reaches the table before the
    casino's result (which goes through the service's outbox and NATS), and the table then refuses the
    result: the bet is void at the service and its pool goes back, so both pools stay one (K4). When the
    result came first, the bet stands at both. Either way the pools agree; every order is counted."""
    table_stub, casino = stubs
    outcomes: list[str] = []
    for _ in range(3):
        table = await Table(table_stub).create(pool, pool_seed=jackpot_seed((False,)))
        state = await table.to_casino()
        seat = state.current
        bet = await bet_opened(casino, table.table_id)
        placed = await place_bet(casino, table.table_id, seat, table.tokens[seat], [1, 2, 3], bet_id=bet.bet_id)
        assert placed.status == "settled" and placed.pool_after == 500
        await table.submit(Leave(seat))
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            row = await pool.fetchrow("SELECT status, applied FROM casino.bets WHERE bet_id = $1", bet.bet_id)
            if row["status"] == "void" or row["applied"]:
                break
            assert asyncio.get_running_loop().time() < deadline, f"bet {bet.bet_id} neither applied nor void"
            await asyncio.sleep(0.05)
        applied = [e for e in await table_events_of(pool, table.table_id, "BetSettled")]
        expected = 500 if applied else 0
        assert row["applied"] == bool(applied) and (row["status"] == "void") == (not applied)
        assert await assert_pools_agree(table, casino) == expected
        outcomes.append("applied" if applied else "void")
        if not applied:  # asked again (its answer lost): K1, the bet is void, not a second settlement
            with pytest.raises(grpc.aio.AioRpcError) as again:
                await place_bet(casino, table.table_id, seat, table.tokens[seat], [1, 2, 3], bet_id=bet.bet_id)
            assert rule_id(again.value) == "K1" and "void" in (again.value.details() or "")
    print("bettor left:", outcomes)


async def pool_of(casino: casino_pb2_grpc.CasinoServiceStub, table_id: str) -> tuple[int, int]:
    view = await get_pool(casino, table_id)
    return view.pool, view.bets


async def test_decline_tokens_and_bad_numbers(
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub], pool: asyncpg.Pool
) -> None:
    table_stub, casino = stubs
    table = await Table(table_stub).create(pool)
    state = await table.to_casino()
    seat, other = state.current, 1 - state.current
    bet = await bet_opened(casino, table.table_id)

    async def refused(numbers: list[int], seat: int, token: str) -> grpc.aio.AioRpcError:
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await place_bet(casino, table.table_id, seat, token, numbers)
        return exc.value

    forged = auth.issue("not-the-platform-secret", table.table_id, seat, "ann")
    assert (await refused([1], seat, forged)).code() == grpc.StatusCode.UNAUTHENTICATED
    assert (await refused([1], seat, "")).code() == grpc.StatusCode.UNAUTHENTICATED
    assert (await refused([1], seat, table.tokens[other])).code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await decline(casino, table.table_id, seat, table.tokens[other])
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    not_yours = await refused([1], other, table.tokens[other])  # no bet is open for the other seat
    assert not_yours.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(not_yours) == "K1"
    for numbers in ([], [0], [7], [2, 2], [1, 2, 3, 4]):
        bad = await refused(numbers, seat, table.tokens[seat])
        assert bad.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(bad) == "K1", numbers

    with pytest.raises(grpc.aio.AioRpcError) as exc:  # a call for another bet (asked again late) is refused
        await place_bet(casino, table.table_id, seat, table.tokens[seat], [1], bet_id=f"{table.table_id}:1")
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "K1"
    cash = state.players[seat].cash
    declined = await decline(casino, table.table_id, seat, table.tokens[seat], bet_id=bet.bet_id)
    assert (declined.bet_id, declined.status) == (bet.bet_id, "declined")
    assert await decline(casino, table.table_id, seat, table.tokens[seat]) == declined  # asked again: the same
    after = await table.settled()
    assert after.players[seat].cash == cash
    assert len(await table_events_of(pool, table.table_id, "BetDeclined")) == 1
    assert await assert_pools_agree(table, casino) == 0
    again = await refused([1], seat, table.tokens[seat])
    assert again.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(again) == "K1"


async def test_no_answer_in_time_is_a_decline(
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub], pool: asyncpg.Pool
) -> None:
    table_stub, casino = stubs
    table = await Table(table_stub, scale=25).create(pool)  # 75 s turns last 3 s
    state = await table.to_casino()
    bet = await bet_opened(casino, table.table_id)
    assert bet.deadline_unix_ms > 0
    after = await table.settled(timeout=WAIT)  # nobody answers: the casino declines for the player (E2)
    assert len(await table_events_of(pool, table.table_id, "BetDeclined")) == 1
    got = await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id, bet_id=bet.bet_id))
    assert got.status == "declined"
    reason = await pool.fetchval("SELECT reason FROM casino.bets WHERE bet_id = $1", bet.bet_id)
    assert reason == "timeout"
    assert after.players[state.current].cash >= 0


async def test_an_open_bet_survives_a_sigkill_and_settles_once(
    casino_platform: Platform,
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub],
    pool: asyncpg.Pool,
) -> None:
    table_stub, casino = stubs
    table = await Table(table_stub, scale=2).create(pool, pool_seed=jackpot_seed((False,)))
    state = await table.to_casino()
    seat = state.current
    bet = await bet_opened(casino, table.table_id)

    await casino_platform.processes["casino"].kill()
    await asyncio.wait_for(casino_platform.processes["casino"].start(), 60)
    reopened = await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id), wait_for_ready=True, timeout=30)
    assert (reopened.bet_id, reopened.status) == (bet.bet_id, "open")

    row = await pool_row(pool, table.table_id)
    die, _ = draw(row["seed"], row["counter"], RULES)
    settled = await place_bet(casino, table.table_id, seat, table.tokens[seat], [die])
    assert (settled.payout, settled.pool_after) == (6000, 500)
    after = await table.settled()
    assert after.players[seat].cash == state.players[seat].cash + 5000
    await asyncio.sleep(0.5)  # time for any duplicate to arrive
    assert len(await table_events_of(pool, table.table_id, "BetSettled")) == 1
    assert await pool.fetchval("SELECT count(*) FROM casino.ledger WHERE table_id = $1", table.table_id) == 1
    assert await assert_pools_agree(table, casino) == 500


async def test_a_pause_freezes_the_bet_timer(
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub], pool: asyncpg.Pool
) -> None:
    table_stub, casino = stubs
    table = await Table(table_stub, scale=15).create(pool, pool_seed=jackpot_seed((False,)))  # 75 s turns: 5 s
    state = await table.to_casino()
    seat, other = state.current, 1 - state.current
    bet = await bet_opened(casino, table.table_id)
    await table.submit(RequestPause(seat))
    await table.submit(VotePause(other, True))  # E5: everyone agreed, the table is paused
    deadline = asyncio.get_running_loop().time() + WAIT
    while not await pool.fetchval("SELECT paused FROM casino.bets WHERE bet_id = $1", bet.bet_id):
        assert asyncio.get_running_loop().time() < deadline, "the casino never saw the pause"
        await asyncio.sleep(0.05)
    await asyncio.sleep(max(0.0, (bet.deadline_unix_ms - time.time() * 1000) / 1000) + 1.0)
    assert (await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id))).status == "open"
    for move in (
        lambda: place_bet(casino, table.table_id, seat, table.tokens[seat], [1, 2, 3]),
        lambda: decline(casino, table.table_id, seat, table.tokens[seat]),
    ):  # E5: a paused table takes no bet and no decline, as when it runs its casino itself
        with pytest.raises(grpc.aio.AioRpcError) as paused:
            await move()
        assert paused.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(paused.value) == "E5"
    assert (await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id))).status == "open"

    await table.submit(ConfirmBack(seat))
    await table.submit(ConfirmBack(other))
    while await pool.fetchval("SELECT paused FROM casino.bets WHERE bet_id = $1", bet.bet_id):
        assert asyncio.get_running_loop().time() < deadline, "the casino never saw the table resume"
        await asyncio.sleep(0.05)
    moved = await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id))
    assert moved.deadline_unix_ms > bet.deadline_unix_ms  # the pause moved the deadline on
    settled = await place_bet(casino, table.table_id, seat, table.tokens[seat], [1, 2, 3])
    assert settled.status == "settled"
    await table.settled()
    assert await assert_pools_agree(table, casino) == 500
