"""Bots play whole games with auctions, trades and bets run by their services, while each of the three
services is SIGKILLed in the middle of its protocol and restarted: every game still ends, a ledger
reconciliation over the whole run finds nothing lost and nothing paid twice, and results delivered
again, late and out of order, change nothing."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import Callable

import asyncpg
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from client import BotTable, SubProtocolStubs, connect
from client.platform import Platform
from client.verify import check_table
from engine import Phase, check_invariants, codec
from monopoly.v1 import casino_pb2, table_pb2
from servicekit.bus import auction_subject, casino_subject

TABLES = 6
GAME_TIMEOUT_S = 300.0


async def until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def crash(platform: Platform, service: str) -> None:
    await platform.processes[service].kill()
    await asyncio.sleep(0.5)  # the bots meet a dead service for a moment
    await platform.processes[service].start()


async def table_event_types(pool: asyncpg.Pool, table_id: str) -> Counter[str]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT type FROM table_events WHERE table_id = $1", table_id)
    return Counter(r["type"] for r in rows)


async def test_sigkill_of_each_sub_protocol_service_mid_protocol_loses_and_doubles_nothing(
    platform: Platform, pool: asyncpg.Pool, js: JetStreamContext
) -> None:
    services = SubProtocolStubs.connect({n: platform.target(n) for n in ("auction", "trade", "casino")})
    channel, stub = connect(platform.table_target)
    games = [BotTable(stub, seed=500 + i, clock_scale=20, services=services) for i in range(TABLES)]
    for g in games:
        await g.create()
    tasks = [asyncio.create_task(g.play()) for g in games]

    def in_phase(phase: Phase) -> bool:
        return any(g.state is not None and not g.state.finished and g.state.phase is phase for g in games)

    def trade_moves() -> int:
        return sum(g.service_moves["trade"] for g in games)

    killed_mid = {}
    killed_mid["auction"] = await until(lambda: in_phase(Phase.AUCTION), 120)
    await crash(platform, "auction")
    killed_mid["casino"] = await until(lambda: in_phase(Phase.CASINO), 120)
    await crash(platform, "casino")
    before = trade_moves()
    killed_mid["trade"] = await until(lambda: trade_moves() > before, 60)
    await crash(platform, "trade")
    assert killed_mid["auction"] and killed_mid["casino"], killed_mid  # the kills hit running protocols

    states = await asyncio.wait_for(asyncio.gather(*tasks), GAME_TIMEOUT_S)
    assert all(s.finished for s in states)
    await asyncio.sleep(1.0)  # the relays publish the last commits

    totals: Counter[str] = Counter()
    for g in games:
        table_id = g.table_id
        agreement = await check_table(pool, js, stub, table_id)
        assert agreement.ok, agreement
        view = await stub.GetTable(table_pb2.GetTableRequest(table_id=table_id))
        state = codec.state_from_data(json.loads(view.state_json))
        check_invariants(state, state.seq)  # every player's cash + the bank's ledger + the pool add up
        assert services.casino is not None
        pool_view = await services.casino.GetPool(casino_pb2.GetPoolRequest(table_id=table_id))
        assert pool_view.pool == state.jackpot, (table_id, pool_view.pool, state.jackpot)
        types = await table_event_types(pool, table_id)
        async with pool.acquire() as conn:
            bets = await conn.fetchval("SELECT count(*) FROM casino.ledger WHERE table_id = $1", table_id)
            sold = await conn.fetchval(
                "SELECT count(*) FROM auction.auctions WHERE table_id = $1 AND status = 'settled'", table_id
            )
            executed = await conn.fetchval(
                "SELECT count(*) FROM trade.trades WHERE table_id = $1 AND status = 'executed'", table_id
            )
            results = await conn.fetch(
                "SELECT command_id FROM table_commands WHERE table_id = $1 AND command_id LIKE 'auction:%'", table_id
            )
        # each bet the casino settled was paid once at the table, and no bet was paid that the casino did not settle
        assert types["BetSettled"] == bets, (table_id, types["BetSettled"], bets)
        # each auction the service settled was applied once (the table may also close some itself)
        assert len(results) == sold and types["AuctionSettled"] >= sold, (table_id, len(results), sold)
        assert types["TradeExecuted"] == executed, (table_id, types["TradeExecuted"], executed)
        totals.update(bets=bets, auctions=sold, trades=executed)
    # the run exercised every protocol (counted over all tables)
    assert totals["auctions"] > 0 and totals["bets"] > 0, totals

    # Late, duplicated and out-of-order results are harmless: every result the services published for
    # these tables, delivered again in reverse order under new message ids, changes no table.
    seqs = {g.table_id: (await stub.GetTable(table_pb2.GetTableRequest(table_id=g.table_id))).seq for g in games}
    replayed = 0
    for g in games:
        for subject in (auction_subject(g.table_id, "*"), casino_subject(g.table_id, "*")):
            for payload in reversed(await published(js, subject)):
                await js.publish(subject, payload, headers={"Nats-Msg-Id": uuid.uuid4().hex})
                replayed += 1
    assert replayed > 0
    await asyncio.sleep(2.0)  # the table's consumers take them all
    for g in games:
        view = await stub.GetTable(table_pb2.GetTableRequest(table_id=g.table_id))
        assert view.seq == seqs[g.table_id], g.table_id
    await services.close()
    await channel.close()


async def published(js: JetStreamContext, subject: str) -> list[bytes]:
    """Every message on `subject`, in stream order (an ephemeral ordered consumer)."""
    out: list[bytes] = []
    sub = await js.subscribe(subject, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL)
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=1.0)
            except TimeoutError:
                return out
            out.append(msg.data)
    finally:
        await sub.unsubscribe()
