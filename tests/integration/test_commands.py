"""SubmitCommand and the other unary calls: idempotency, validation, rules, seats, staleness."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable

import asyncpg
import grpc
import pytest

from bots import make_bot
from client import BotTable, bot_service_token, platform_channel
from client.platform import Platform
from engine import (
    BANK,
    Bid,
    Build,
    BuyProperty,
    ClockAdvanced,
    Command,
    EndTurn,
    GameEnded,
    Leave,
    Pay,
    PayJailFine,
    PlaceBet,
    PlayerBankrupt,
    ProposeTrade,
    Roll,
    SettleBet,
    Tick,
    codec,
)
from monopoly.v1 import (
    auction_pb2,
    auction_pb2_grpc,
    casino_pb2,
    casino_pb2_grpc,
    commands_pb2,
    table_pb2,
    table_pb2_grpc,
    trade_pb2,
    trade_pb2_grpc,
)
from servicekit import auth
from servicekit.settings import token_secret
from servicekit.wire import command_to_proto, event_from_proto

from .helpers import TIMEOUT, event_rows, get, rule_id

pytestmark = pytest.mark.integration


@pytest.fixture
async def table(stub: table_pb2_grpc.TableServiceStub) -> BotTable:
    game = BotTable(stub, seed=77)
    await game.create()
    return game


def request(
    game: BotTable,
    command: Command | None,
    command_id: str = "",
    token: str | None = None,
    expected_seq: int = 0,
) -> table_pb2.SubmitCommandRequest:
    seat = command.seat if command is not None else 0
    return table_pb2.SubmitCommandRequest(
        table_id=game.table_id,
        command_id=command_id,
        seat_token=game.tokens[seat] if token is None else token,
        command=command_to_proto(command) if command is not None else None,
        expected_seq=expected_seq,
    )


async def refused(stub: table_pb2_grpc.TableServiceStub, req: table_pb2.SubmitCommandRequest) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.SubmitCommand(req, timeout=30)
    return caught.value


async def assert_unchanged_after(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table_id: str, before: int
) -> None:
    """Nothing was committed after seq `before`: a refusal changes nothing, not even the game clock
    (no deadline came due: these tables' timers are a minute away)."""
    view = await get(stub, table_id)
    assert view.seq == before
    assert [r["type"] for r in await event_rows(pool, table_id, before)] == []


async def command_rows(pool: asyncpg.Pool, table_id: str) -> dict[str, bytes]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT command_id, response FROM table_commands WHERE table_id = $1", table_id)
    return {r["command_id"]: bytes(r["response"]) for r in rows}


async def retire(pool: asyncpg.Pool, table_id: str) -> None:
    """Mark a table finished in Postgres, so no later start of the service tries to resume it."""
    async with pool.acquire() as conn:
        await conn.execute("UPDATE tables SET finished = true WHERE table_id = $1", table_id)


def other_seat(view: table_pb2.TableView, players: int) -> int:
    return (view.actor + 1) % players


# -- idempotency ----------------------------------------------------------------


async def test_a_retried_command_id_gets_the_first_answer_and_is_applied_once(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    view = await get(stub, table.table_id)
    assert view.phase == "pre_roll"
    roll = request(table, Roll(view.actor), command_id="roll-once")
    first = await stub.SubmitCommand(roll, timeout=30)
    assert first.first_seq > view.seq and first.last_seq >= first.first_seq
    assert [e.seq for e in first.events] == list(range(first.first_seq, first.last_seq + 1))
    assert "DiceRolled" in [e.type for e in first.events]

    second = await stub.SubmitCommand(roll, timeout=30)
    assert second == first
    assert second.SerializeToString() == first.SerializeToString()
    assert (await get(stub, table.table_id)).seq == first.last_seq  # applied once: no event of the retry

    # The same id with another command in it, or from another seat, is refused: the id is bound to the
    # seat and the command it was first used for (nothing changes, the first answer stays).
    other = request(table, EndTurn(view.actor), command_id="roll-once")
    exc = await refused(stub, other)
    assert exc.code() == grpc.StatusCode.ALREADY_EXISTS and "roll-once" in (exc.details() or ""), exc.details()
    seat = other_seat(view, table.players)
    elsewhere = request(table, Roll(seat), command_id="roll-once")
    assert (await refused(stub, elsewhere)).code() == grpc.StatusCode.ALREADY_EXISTS
    assert (await get(stub, table.table_id)).seq == first.last_seq

    # Retries racing each other: one application, one answer for all.
    view = await get(stub, table.table_id)
    state = codec.state_from_data(json.loads(view.state_json))
    command = make_bot("heuristic", 1).choose(state, state.actor)
    racing = request(table, command, command_id="raced")
    answers = await asyncio.wait_for(
        asyncio.gather(*(stub.SubmitCommand(racing, timeout=30) for _ in range(4))), TIMEOUT
    )
    assert all(a == answers[0] for a in answers)
    assert answers[0].first_seq == view.seq + 1
    assert (await get(stub, table.table_id)).seq == answers[0].last_seq

    rows = await event_rows(pool, table.table_id)
    assert [r["seq"] for r in rows] == list(range(1, answers[0].last_seq + 1))
    assert [r["type"] for r in rows[first.first_seq - 1 : first.last_seq]] == [e.type for e in first.events]
    assert [r["type"] for r in rows[answers[0].first_seq - 1 :]] == [e.type for e in answers[0].events]
    assert [r["type"] for r in rows].count("DiceRolled") == [
        e.type for a in (first, answers[0]) for e in a.events
    ].count("DiceRolled")
    stored = await command_rows(pool, table.table_id)
    assert stored == {"roll-once": first.SerializeToString(), "raced": answers[0].SerializeToString()}

    # Long after (far more than the answers kept in memory), the retry is answered from Postgres.
    rest = BotTable(stub, table_id=table.table_id, tokens=dict(table.tokens), seed=78)
    final = await asyncio.wait_for(rest.play(), TIMEOUT)
    assert final.finished and rest.commands > 64
    assert await stub.SubmitCommand(roll, timeout=30) == first
    assert (await refused(stub, other)).code() == grpc.StatusCode.ALREADY_EXISTS  # bound in Postgres too
    assert (await get(stub, table.table_id)).seq == final.seq
    assert (await command_rows(pool, table.table_id))["roll-once"] == first.SerializeToString()


# -- malformed requests ------------------------------------------------------------


SUBMIT_MALFORMED: dict[str, Callable[[BotTable], table_pb2.SubmitCommandRequest]] = {
    "no command": lambda g: table_pb2.SubmitCommandRequest(
        table_id=g.table_id, command_id="c", seat_token=g.tokens[0], command=commands_pb2.CommandPayload()
    ),
    "no command field": lambda g: table_pb2.SubmitCommandRequest(
        table_id=g.table_id, command_id="c", seat_token=g.tokens[0]
    ),
    "a client's Tick": lambda g: request(g, Tick(10**9, seat=0), command_id="tick"),
    "empty table_id": lambda g: table_pb2.SubmitCommandRequest(
        table_id="", command_id="c", seat_token=g.tokens[0], command=command_to_proto(Roll(0))
    ),
    "too long table_id": lambda g: table_pb2.SubmitCommandRequest(
        table_id="t" * 65, command_id="c", seat_token=g.tokens[0], command=command_to_proto(Roll(0))
    ),
    "too long command_id": lambda g: request(g, Roll(0), command_id="c" * 129),
    "a negative expected_seq": lambda g: request(g, Roll(0), command_id="c", expected_seq=-5),
}


@pytest.mark.parametrize("case", list(SUBMIT_MALFORMED))
async def test_a_malformed_command_is_invalid_and_changes_nothing(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable, case: str
) -> None:
    before = (await get(stub, table.table_id)).seq
    exc = await refused(stub, SUBMIT_MALFORMED[case](table))
    assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, exc.details()
    await assert_unchanged_after(stub, pool, table.table_id, before)
    assert await command_rows(pool, table.table_id) == {}


CREATE_MALFORMED: dict[str, table_pb2.CreateTableRequest] = {
    "settings not JSON": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json="{starting_cash: 20000"
    ),
    "settings not an object": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json="[20000]"
    ),
    "an unknown setting": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json='{"no_such_setting": 1}'
    ),
    "a setting out of bounds": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json='{"starting_cash": 1}'
    ),
    "a setting of the wrong type": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json='{"starting_cash": "lots"}'
    ),
    "a nested setting replaced by a number": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json='{"clock": 5}'
    ),
    "a rule that is not a host's setting, of the wrong type": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json='{"salary": "lots"}'
    ),
    "an unknown mode": table_pb2.CreateTableRequest(mode="monopoly-deluxe", players=["a", "b"]),
    "no players": table_pb2.CreateTableRequest(mode="classic"),
    "one player": table_pb2.CreateTableRequest(mode="classic", players=["a"]),
    "six players": table_pb2.CreateTableRequest(mode="classic", players=list("abcdef")),
    "a duel of two": table_pb2.CreateTableRequest(mode="duel", players=["a", "b"]),
    "a team game of three": table_pb2.CreateTableRequest(mode="team", players=["a", "b", "c"]),
    "an empty name": table_pb2.CreateTableRequest(mode="classic", players=["a", " "]),
    "a negative clock scale": table_pb2.CreateTableRequest(mode="classic", players=["a", "b"], clock_scale=-1),
    # Values Postgres cannot store, or Python cannot parse, are refused before any row is written.
    "a seed of 2^63 (bigint)": table_pb2.CreateTableRequest(mode="classic", players=["a", "b"], seed=2**63),
    "a seed of 2^64-1": table_pb2.CreateTableRequest(mode="classic", players=["a", "b"], seed=2**64 - 1),
    "a clock scale of 2^31 (integer column)": table_pb2.CreateTableRequest(
        mode="classic", players=["a", "b"], clock_scale=2**31
    ),
    "30k-deep settings": table_pb2.CreateTableRequest(  # deeper is larger than a request may be
        mode="custom", players=["a", "b"], custom_settings_json="[" * 30_000 + "]" * 30_000
    ),
    "a NUL in the settings": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json='{"starting_cash\\u0000": 1}'
    ),
    "a NUL in a name": table_pb2.CreateTableRequest(mode="classic", players=["a\x00", "b"]),
    "a newline in a name": table_pb2.CreateTableRequest(mode="classic", players=["a\nINFO forged", "b"]),
    "an ANSI escape in a name": table_pb2.CreateTableRequest(mode="classic", players=["\x1b[31ma", "b"]),
    "a bidi override in a name": table_pb2.CreateTableRequest(mode="classic", players=["a\u202eb", "b"]),
    "a zero-width-only name": table_pb2.CreateTableRequest(mode="classic", players=["\u200b\u200d", "b"]),
    # Quoted in the refusal: its message is cut, so the status stays INVALID_ARGUMENT, not RESOURCE_EXHAUSTED.
    "a 20,000-character mode": table_pb2.CreateTableRequest(mode="m" * 20_000, players=["a", "b"]),
    "a mode of 5,000 four-byte characters": table_pb2.CreateTableRequest(mode="\U0001f600" * 5_000, players=["a", "b"]),
    "a 20,000-character setting": table_pb2.CreateTableRequest(
        mode="custom", players=["a", "b"], custom_settings_json=json.dumps({"build_mode": "k" * 20_000})
    ),
}
#: The game rule a refusal names (`rule-id`), where one refused it.
CREATE_RULES = {
    "a setting out of bounds": "X5",
    "a setting of the wrong type": "X5",
    "one player": "X1",
    "six players": "X1",
    "a duel of two": "X3",
    "a team game of three": "X4",
    "a 20,000-character setting": "X5",
}


@pytest.mark.parametrize("case", list(CREATE_MALFORMED))
async def test_a_malformed_create_table_is_invalid(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, case: str
) -> None:
    async with pool.acquire() as conn:
        before = await conn.fetchval("SELECT count(*) FROM tables WHERE seq = 0 OR seed >= 2 ^ 63")
    try:
        reply = await stub.CreateTable(CREATE_MALFORMED[case], timeout=30)
    except grpc.aio.AioRpcError as exc:
        assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, exc.details()
        assert len((exc.details() or "").encode()) <= 1100
        assert rule_id(exc) == CREATE_RULES.get(case)
        async with pool.acquire() as conn:  # nothing written: no table without events, no bigint overflow
            assert await conn.fetchval("SELECT count(*) FROM tables WHERE seq = 0 OR seed >= 2 ^ 63") == before
        return
    # Accepted: such a table cannot be loaded again (see test_restart), so retire it before it takes
    # the session's service down at its next restart, then fail.
    await retire(pool, reply.table_id)
    pytest.fail(f"CreateTable accepted {case!r} and created table {reply.table_id}")


@pytest.mark.parametrize("seat", [-1, 4, 99])
async def test_joining_a_seat_that_does_not_exist_is_invalid(
    stub: table_pb2_grpc.TableServiceStub, table: BotTable, seat: int
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.JoinTable(
            table_pb2.JoinTableRequest(table_id=table.table_id, seat=seat, service_token=table.service_token),
            timeout=30,
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_joining_a_seat_again_returns_its_token(stub: table_pb2_grpc.TableServiceStub, table: BotTable) -> None:
    for seat, token in table.tokens.items():
        joined = await stub.JoinTable(
            table_pb2.JoinTableRequest(table_id=table.table_id, seat=seat, service_token=table.service_token),
            timeout=30,
        )
        assert (joined.seat, joined.seat_token) == (seat, token)


async def test_a_table_opened_in_one_call_gives_the_tokens_join_would(
    stub: table_pb2_grpc.TableServiceStub, table: BotTable
) -> None:
    # BotTable.create asked CreateTable for the seats' tokens (seat_tokens) and made no JoinTable
    assert len(table.tokens) == 4 and table.unavailable == 0
    for seat in range(4):
        joined = await stub.JoinTable(
            table_pb2.JoinTableRequest(table_id=table.table_id, seat=seat, service_token=table.service_token),
            timeout=30,
        )
        assert joined.seat_token == table.tokens[seat]


async def test_only_a_service_may_ask_create_table_for_the_seat_tokens(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    run = uuid.uuid4().hex[:8]
    names = [f"tokens-{run}-a", f"tokens-{run}-b"]
    create = table_pb2.CreateTableRequest(mode="classic", players=names, seat_tokens=True)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.CreateTable(create, timeout=30)  # the stub's calls carry an operator token
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED, caught.value.details()
    async with pool.acquire() as conn:  # refused before anything was made
        assert await conn.fetchval("SELECT count(*) FROM tables WHERE players = $1::jsonb", json.dumps(names)) == 0
    service = (("authorization", f"Bearer {bot_service_token()}"),)
    reply = await stub.CreateTable(create, timeout=30, metadata=service)
    assert len(reply.seat_tokens) == 2
    assert auth.verify(token_secret(), reply.seat_tokens[1]).seat == 1
    await retire(pool, reply.table_id)


async def test_create_table_asked_again_with_its_request_id_answers_the_same_table(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    key = f"again-{uuid.uuid4().hex}"
    service = (("authorization", f"Bearer {bot_service_token()}"),)
    create = table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob"], seat_tokens=True, request_id=key)
    first = await stub.CreateTable(create, timeout=30, metadata=service)
    again = await stub.CreateTable(create, timeout=30, metadata=service)
    assert (again.table_id, list(again.seat_tokens)) == (first.table_id, list(first.seat_tokens))
    assert again.rule_card == first.rule_card
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM tables WHERE request_id = $1", key) == 1
    # the key with anything else changed is another table's: refused, nothing made
    for change in ({"players": ["ann", "cy"]}, {"external": ["trade"]}, {"seed": 7}, {"clock_scale": 60}):
        other = table_pb2.CreateTableRequest(
            **{"mode": "classic", "players": ["ann", "bob"], "request_id": key, **change}
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.CreateTable(other, timeout=30)
        assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS, (change, caught.value.details())
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM tables WHERE request_id = $1", key) == 1
    await retire(pool, first.table_id)


async def test_create_table_asked_twice_at_once_with_one_request_id_makes_one_table(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    key = f"twice-{uuid.uuid4().hex}"
    create = table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob", "cy"], request_id=key)
    replies = await asyncio.gather(*(stub.CreateTable(create, timeout=30) for _ in range(4)))
    assert len({r.table_id for r in replies}) == 1
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM tables WHERE request_id = $1", key) == 1
    await retire(pool, replies[0].table_id)


async def test_a_request_id_over_128_characters_is_invalid(stub: table_pb2_grpc.TableServiceStub) -> None:
    create = table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob"], request_id="k" * 129)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.CreateTable(create, timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_an_unknown_table_is_not_found(stub: table_pb2_grpc.TableServiceStub, table: BotTable) -> None:
    calls = [
        stub.GetTable(table_pb2.GetTableRequest(table_id="no-such-table"), timeout=30),
        stub.JoinTable(
            table_pb2.JoinTableRequest(table_id="no-such-table", seat=0, service_token=table.service_token), timeout=30
        ),
        stub.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id="no-such-table", command_id="c", seat_token=table.tokens[0], command=command_to_proto(Roll(0))
            ),
            timeout=30,
        ),
    ]
    codes = []
    for call in calls:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        codes.append(caught.value.code())
    # the platform's own tokens hold for every table; a seat token of another table is refused before
    # the table is looked up (so it does not learn which tables exist)
    assert codes == [grpc.StatusCode.NOT_FOUND, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.PERMISSION_DENIED]


# -- rules ----------------------------------------------------------------------


async def test_a_command_out_of_turn_is_refused_with_g2_and_changes_nothing(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    view = await get(stub, table.table_id)
    seat = other_seat(view, table.players)
    await asyncio.sleep(0.6)  # past the clock's resolution: a commit would record the clock's move first
    exc = await refused(stub, request(table, Roll(seat), command_id="out-of-turn"))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc.details()
    assert rule_id(exc) == "G2"
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)
    assert await command_rows(pool, table.table_id) == {}

    # The refused id was not spent and the seat that must act still can.
    after = await get(stub, table.table_id)
    assert (after.actor, after.phase) == (view.actor, view.phase)
    answer = await stub.SubmitCommand(request(table, Roll(view.actor), command_id="out-of-turn"), timeout=30)
    assert "DiceRolled" in [e.type for e in answer.events]


async def test_R3_a_player_leaves_out_of_turn_through_the_api_and_a_second_leave_is_refused_g1(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    view = await get(stub, table.table_id)
    seat = other_seat(view, table.players)
    answer = await stub.SubmitCommand(request(table, Leave(seat), command_id="leave"), timeout=30)
    bankrupt = [e for e in answer.events if e.type == "PlayerBankrupt"]
    assert len(bankrupt) == 1
    left = event_from_proto(bankrupt[0].payload)
    assert isinstance(left, PlayerBankrupt) and (left.seat, left.creditor, left.cause) == (seat, BANK, "surrender")
    after = await get(stub, table.table_id)
    assert after.actor == view.actor  # the turn is not the leaver's: it goes on
    exc = await refused(stub, request(table, Leave(seat), command_id="leave-again"))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc.details()
    assert rule_id(exc) == "G1"


ILLEGAL: dict[str, tuple[Callable[[int], Command], str]] = {
    "end the turn before rolling": (EndTurn, "G2"),
    "build without owning the group": (lambda seat: Build(seat, 1), "P5"),
    "build on a square that is no property": (lambda seat: Build(seat, 0), "P5"),
    "buy with nothing offered": (BuyProperty, "P1"),
    "pay with nothing due": (Pay, "D1"),
    "pay the jail fine out of jail": (PayJailFine, "J2"),
}


@pytest.mark.parametrize("case", list(ILLEGAL))
async def test_an_illegal_command_is_refused_with_its_rule_id(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable, case: str
) -> None:
    make, rule = ILLEGAL[case]
    view = await get(stub, table.table_id)
    assert view.phase == "pre_roll"
    exc = await refused(stub, request(table, make(view.actor), command_id=f"illegal-{case}"))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc.details()
    assert rule_id(exc) == rule, exc.details()
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)
    assert await command_rows(pool, table.table_id) == {}


# -- seats ----------------------------------------------------------------------


async def test_a_token_acts_only_for_its_own_seat(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    view = await get(stub, table.table_id)
    stranger = other_seat(view, table.players)
    exc = await refused(stub, request(table, Roll(view.actor), command_id="c", token=table.tokens[stranger]))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED, exc.details()
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)
    assert await command_rows(pool, table.table_id) == {}


async def test_a_bogus_forged_or_expired_token_is_unauthenticated_and_a_foreign_one_denied(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    elsewhere = BotTable(stub, seed=79)
    await elsewhere.create()
    view = await get(stub, table.table_id)
    forged = auth.issue("not-the-platform-key", table.table_id, view.actor, "p")
    expired = auth.issue(token_secret(), table.table_id, view.actor, "p", ttl_s=-10)
    for token in ("bogus-token", "", forged, expired):
        exc = await refused(stub, request(table, Roll(view.actor), command_id="c", token=token))
        assert exc.code() == grpc.StatusCode.UNAUTHENTICATED, (token, exc.details())
    spectator = auth.issue(token_secret(), table.table_id, -1, "watcher", role="spectator")
    for token in (elsewhere.tokens[view.actor], spectator):
        exc = await refused(stub, request(table, Roll(view.actor), command_id="c", token=token))
        assert exc.code() == grpc.StatusCode.PERMISSION_DENIED, (token, exc.details())
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)
    assert await command_rows(pool, table.table_id) == {}


async def _move_at(channel: grpc.aio.Channel, service: str, table: BotTable, seat: int, token: str) -> None:
    """A move for `seat` of `table` sent to `service` with `token`."""
    if service == "table":
        move = request(table, Roll(seat), command_id="tok", token=token)
        await table_pb2_grpc.TableServiceStub(channel).SubmitCommand(move, timeout=30)
    elif service == "auction":
        bid = auction_pb2.PlaceBidRequest(table_id=table.table_id, seat=seat, amount=10, seat_token=token)
        await auction_pb2_grpc.AuctionServiceStub(channel).PlaceBid(bid, timeout=30)
    elif service == "casino":
        bet = casino_pb2.PlaceBetRequest(table_id=table.table_id, seat=seat, numbers=[1], seat_token=token)
        await casino_pb2_grpc.CasinoServiceStub(channel).PlaceBet(bet, timeout=30)
    else:
        terms = trade_pb2.TradeTerms(counterparty=(seat + 1) % table.players, give_cash=10)
        offer = trade_pb2.ProposeTradeRequest(table_id=table.table_id, seat=seat, seat_token=token, terms=terms)
        await trade_pb2_grpc.TradeServiceStub(channel).ProposeTrade(offer, timeout=30)


@pytest.mark.parametrize("service", ["table", "auction", "trade", "casino"])
async def test_every_service_refuses_forged_expired_and_another_seats_tokens(
    platform: Platform, stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable, service: str
) -> None:
    view = await get(stub, table.table_id)
    seat = view.actor
    forged = auth.issue("not-the-platform-key", table.table_id, seat, "p")
    expired = auth.issue(token_secret(), table.table_id, seat, "p", ttl_s=-10)
    another_seat = table.tokens[other_seat(view, table.players)]
    channel = platform_channel(platform.target(service))
    try:
        for token, code in (
            (forged, grpc.StatusCode.UNAUTHENTICATED),
            (expired, grpc.StatusCode.UNAUTHENTICATED),
            ("", grpc.StatusCode.UNAUTHENTICATED),
            (another_seat, grpc.StatusCode.PERMISSION_DENIED),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await _move_at(channel, service, table, seat, token)
            assert caught.value.code() == code, (service, caught.value.details())
            assert caught.value.details()
    finally:
        await channel.close()
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)


async def _first_of_watch(stub: table_pb2_grpc.TableServiceStub, table_id: str, token: str) -> table_pb2.TableView:
    call = stub.WatchTable(table_pb2.WatchTableRequest(table_id=table_id, seat_token=token), timeout=30)
    try:
        async for item in call:
            return item.snapshot
        raise AssertionError("WatchTable ended without a snapshot")
    finally:
        call.cancel()


async def test_watching_takes_a_token_of_the_table_or_a_service_token(
    stub: table_pb2_grpc.TableServiceStub, table: BotTable
) -> None:
    elsewhere = BotTable(stub, seed=81)
    await elsewhere.create()
    spectator = auth.issue(token_secret(), table.table_id, -1, "fan", role="spectator")
    for token in (spectator, table.tokens[0], table.tokens[1], bot_service_token()):
        snapshot = await _first_of_watch(stub, table.table_id, token)
        assert snapshot.table_id == table.table_id
    forged = auth.issue("not-the-platform-key", table.table_id, -1, "fan", role="spectator")
    expired = auth.issue(token_secret(), table.table_id, -1, "fan", role="spectator", ttl_s=-10)
    foreign_spectator = auth.issue(token_secret(), elsewhere.table_id, -1, "fan", role="spectator")
    for token, code in (
        ("", grpc.StatusCode.UNAUTHENTICATED),
        (forged, grpc.StatusCode.UNAUTHENTICATED),
        (expired, grpc.StatusCode.UNAUTHENTICATED),
        (elsewhere.tokens[0], grpc.StatusCode.PERMISSION_DENIED),
        (foreign_spectator, grpc.StatusCode.PERMISSION_DENIED),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _first_of_watch(stub, table.table_id, token)
        assert caught.value.code() == code, caught.value.details()


async def test_a_spectator_token_watches_but_never_acts(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    spectator = auth.issue(token_secret(), table.table_id, -1, "fan", role="spectator")
    view = await _first_of_watch(stub, table.table_id, spectator)
    exc = await refused(stub, request(table, Roll(view.actor), command_id="fan", token=spectator))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED, exc.details()
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)


async def test_joining_a_table_takes_a_service_token(stub: table_pb2_grpc.TableServiceStub, table: BotTable) -> None:
    spectator = auth.issue(token_secret(), table.table_id, -1, "fan", role="spectator")
    forged = auth.service_token("not-the-platform-key", "bots")
    for token, code in (
        ("", grpc.StatusCode.UNAUTHENTICATED),
        (forged, grpc.StatusCode.UNAUTHENTICATED),
        (table.tokens[0], grpc.StatusCode.PERMISSION_DENIED),  # a player's own seat token
        (spectator, grpc.StatusCode.PERMISSION_DENIED),
    ):
        join = table_pb2.JoinTableRequest(table_id=table.table_id, seat=0, service_token=token)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.JoinTable(join, timeout=30)
        assert caught.value.code() == code, caught.value.details()
    join = table_pb2.JoinTableRequest(table_id=table.table_id, seat=0, service_token=bot_service_token())
    assert (await stub.JoinTable(join, timeout=30)).seat_token == table.tokens[0]


async def test_results_of_sub_protocols_come_only_from_services(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    view = await get(stub, table.table_id)
    settle = SettleBet(view.actor, "x", (1,), 1, False)
    exc = await refused(stub, request(table, settle, command_id="c", token=table.tokens[view.actor]))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED, exc.details()
    # a service token passes the gate; the engine then refuses what does not fit (K1: this table bets itself)
    service = auth.service_token(token_secret(), "casino")
    exc = await refused(stub, request(table, settle, command_id="c", token=service))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc.details()
    assert ("rule-id", "K1") in tuple(exc.trailing_metadata() or ())
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)


async def test_a_table_delegating_its_sub_protocols_sends_bids_bets_and_proposals_away(
    stub: table_pb2_grpc.TableServiceStub,
) -> None:
    everything = ["auction", "trade", "casino"]
    created = await stub.CreateTable(
        table_pb2.CreateTableRequest(mode="classic", players=["a", "b"], seed=5, external=everything)
    )
    view = await get(stub, created.table_id)
    state = codec.state_from_data(json.loads(view.state_json))
    assert state.config.external == ("auction", "trade", "casino")
    seat = view.actor
    join = table_pb2.JoinTableRequest(table_id=created.table_id, seat=seat, service_token=bot_service_token())
    token = (await stub.JoinTable(join)).seat_token
    for command, rule in (
        (Bid(seat, 1000), "A1"),
        (PlaceBet(seat, (1,)), "K1"),
        (ProposeTrade(seat, 1 - seat, give_cash=100), "T1"),
    ):
        call = table_pb2.SubmitCommandRequest(
            table_id=created.table_id, command_id="x", seat_token=token, command=command_to_proto(command)
        )
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.SubmitCommand(call)
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION, info.value.details()
        assert ("rule-id", rule) in tuple(info.value.trailing_metadata() or ())
        assert "service" in (info.value.details() or "")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.CreateTable(table_pb2.CreateTableRequest(mode="classic", players=["a", "b"], external=["bank"]))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# -- staleness ------------------------------------------------------------------


async def test_an_old_expected_seq_is_aborted_and_the_current_one_is_accepted(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    view = await get(stub, table.table_id)
    for old in (1, view.seq - 1):
        exc = await refused(stub, request(table, Roll(view.actor), command_id="c", expected_seq=old))
        assert exc.code() == grpc.StatusCode.ABORTED, exc.details()
    await assert_unchanged_after(stub, pool, table.table_id, view.seq)
    assert await command_rows(pool, table.table_id) == {}

    current = (await get(stub, table.table_id)).seq
    answer = await stub.SubmitCommand(request(table, Roll(view.actor), command_id="c", expected_seq=current))
    assert answer.first_seq == current + 1
    # Sent again with the same id and seq (its answer lost; a routed client resends it after a failover):
    # the table is past that seq now, and the retry gets the first answer, not ABORTED.
    again = await stub.SubmitCommand(request(table, Roll(view.actor), command_id="c", expected_seq=current))
    assert again == answer
    play = stub.Play()
    await play.write(request(table, Roll(view.actor), command_id="c", expected_seq=current))
    reply = await play.read()
    assert reply.answer == answer, reply
    play.cancel()
    # and a new command against that old seq is still stale
    exc = await refused(stub, request(table, Roll(view.actor), command_id="d", expected_seq=current))
    assert exc.code() == grpc.StatusCode.ABORTED


# -- the Play stream ------------------------------------------------------------


async def test_play_answers_each_command_in_order_and_a_refusal_leaves_the_stream_open(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, table: BotTable
) -> None:
    """Play is SubmitCommand on one stream: the same tokens, rules, staleness and idempotency, each
    refusal answered with its status and rule ID (nothing changed), the stream open for the next."""
    view = await get(stub, table.table_id)
    other = other_seat(view, table.players)
    forged = table.tokens[view.actor][:-4] + "AAAA"
    cases: list[tuple[table_pb2.SubmitCommandRequest, str, str]] = [  # (request, code, rule ID)
        (request(table, Roll(view.actor), "p1", token=table.tokens[other]), "PERMISSION_DENIED", ""),
        (request(table, Roll(other), "p2"), "FAILED_PRECONDITION", "G2"),
        (request(table, Roll(view.actor), "p3", token=forged), "UNAUTHENTICATED", ""),
        (request(table, Roll(view.actor), "p4", expected_seq=view.seq + 5), "ABORTED", ""),
        (request(table, Roll(view.actor), "p\x00"), "INVALID_ARGUMENT", ""),  # malformed: the stream goes on
    ]
    call = stub.Play()
    try:
        for req, code, rule in cases:
            await call.write(req)
            reply = await asyncio.wait_for(call.read(), TIMEOUT)
            assert reply.command_id == req.command_id and reply.HasField("refused"), reply
            assert (reply.refused.code, reply.refused.rule_id) == (code, rule), reply.refused
            assert reply.refused.message
        await assert_unchanged_after(stub, pool, table.table_id, view.seq)

        roll = request(table, Roll(view.actor), "p5")
        await call.write(roll)
        first = await asyncio.wait_for(call.read(), TIMEOUT)
        assert first.command_id == "p5" and first.HasField("answer")
        assert "DiceRolled" in [e.type for e in first.answer.events]
        await call.write(roll)  # the same command id again: the first answer, applied once
        again = await asyncio.wait_for(call.read(), TIMEOUT)
        assert again.answer == first.answer
        assert (await get(stub, table.table_id)).seq == first.answer.last_seq
        # the unary call and the stream share the record of answers
        assert await stub.SubmitCommand(roll, timeout=30) == first.answer
        await call.done_writing()
        assert await asyncio.wait_for(call.read(), TIMEOUT) is grpc.aio.EOF
    finally:
        call.cancel()


async def test_get_table_without_state_gives_the_summary_and_no_state(
    stub: table_pb2_grpc.TableServiceStub, table: BotTable
) -> None:
    """A watch stream's silence check asks only where the table is: the same summary, no state JSON."""
    full = await stub.GetTable(table_pb2.GetTableRequest(table_id=table.table_id), timeout=30)
    summary = await stub.GetTable(table_pb2.GetTableRequest(table_id=table.table_id, without_state=True), timeout=30)
    assert json.loads(full.state_json)["seq"] == full.seq > 0
    assert summary.state_json == ""
    assert (summary.seq, summary.phase, summary.actor, summary.finished, summary.mode, summary.game_ms) == (
        full.seq,
        full.phase,
        full.actor,
        full.finished,
        full.mode,
        full.game_ms,
    )


async def test_E6_a_table_records_the_scale_its_clock_runs_at(stub: table_pb2_grpc.TableServiceStub) -> None:
    """TableCreated's config and GameEnded say the table's clock_scale, as the envelopes do."""
    service = (("authorization", f"Bearer {bot_service_token()}"),)
    create = table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob"], clock_scale=50, seat_tokens=True)
    made = await stub.CreateTable(create, timeout=30, metadata=service)
    view = await get(stub, made.table_id)
    assert json.loads(view.state_json)["config"]["clock"]["scale"] == 50
    leave = table_pb2.SubmitCommandRequest(
        table_id=made.table_id, command_id="leave", seat_token=made.seat_tokens[1], command=command_to_proto(Leave(1))
    )
    answer = await stub.SubmitCommand(leave, timeout=30)
    (ended,) = [event_from_proto(e.payload) for e in answer.events if e.type == "GameEnded"]
    assert isinstance(ended, GameEnded) and ended.scale == 50
    assert all(e.occurred_at.clock_scale == 50 for e in answer.events)


async def test_E1_E6_a_command_on_a_fast_clock_first_brings_the_clock_to_now(
    stub: table_pb2_grpc.TableServiceStub,
) -> None:
    """At 100x, 60 real ms are 6 game seconds: a command that may start a timer (a turn, a bid) is applied
    at the clock as it is now, not at one several game seconds old, so no timer it sets is short."""
    service = (("authorization", f"Bearer {bot_service_token()}"),)
    create = table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob"], clock_scale=100, seat_tokens=True)
    made = await stub.CreateTable(create, timeout=30, metadata=service)
    view = await get(stub, made.table_id)
    await asyncio.sleep(0.06)
    roll = table_pb2.SubmitCommandRequest(
        table_id=made.table_id,
        command_id="roll",
        seat_token=made.seat_tokens[view.actor],
        command=command_to_proto(Roll(view.actor)),
    )
    answer = await stub.SubmitCommand(roll, timeout=30)
    assert answer.events[0].type == "ClockAdvanced", [e.type for e in answer.events]
    advanced = event_from_proto(answer.events[0].payload)
    assert isinstance(advanced, ClockAdvanced) and advanced.now >= 6_000
