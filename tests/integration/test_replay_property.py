"""G10 through the table service: whatever mix of hostile and legal commands a live table is sent
(extreme amounts, squares out of range, wrong seats, a hundred concurrent copies of one command),
what it accepted replays from Postgres to exactly the state it shows, with contiguous seqs, and the
service can load the table again."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import typing
import uuid

import asyncpg
import grpc
import pytest

from bots.heuristic import HeuristicBot
from engine import COMMAND_TYPES, SYSTEM_COMMANDS, Command, Tick, codec, replay
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.wire import command_to_proto
from services.table.tables import Tables

from .helpers import event_rows, join_seats, row_event, table_state

pytestmark = pytest.mark.integration

EXTREMES = (-(2**63), -(2**31), -1, 0, 1, 2, 5, 39, 40, 41, 2**31, 2**63 - 1)
PLAYERS = ["ann", "bob", "cy"]


def hostile(rng: random.Random, players: int) -> Command:
    """A command of any type a player may send, every field drawn from extremes and small values."""
    kinds = sorted((k for k in COMMAND_TYPES.values() if k is not Tick and k not in SYSTEM_COMMANDS), key=str)
    kind = rng.choice(kinds)
    hints = typing.get_type_hints(kind)
    values: dict[str, object] = {}
    for f in dataclasses.fields(kind):
        hint = hints[f.name]
        if f.name == "seat":
            values[f.name] = rng.choice([*range(players), -1, players, 2**31])
        elif hint is bool:
            values[f.name] = rng.random() < 0.5
        elif hint is int:
            values[f.name] = rng.choice(EXTREMES)
        elif typing.get_origin(hint) is tuple:
            values[f.name] = tuple(rng.choice(EXTREMES) for _ in range(rng.randrange(4)))
        else:
            values[f.name] = f.default if f.default is not dataclasses.MISSING else 0
    return kind(**values)  # type: ignore[arg-type]


async def send(
    stub: table_pb2_grpc.TableServiceStub, table_id: str, token: str, command: Command, command_id: str
) -> grpc.StatusCode:
    try:
        await stub.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id=table_id, command_id=command_id, seat_token=token, command=command_to_proto(command)
            ),
            timeout=30,
        )
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    except (ValueError, TypeError):  # not even encodable (a value beyond int64): never sent
        return grpc.StatusCode.INVALID_ARGUMENT
    return grpc.StatusCode.OK


@pytest.mark.parametrize("seed", [301, 302])
async def test_whatever_a_live_table_accepted_replays_to_its_state(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, seed: int
) -> None:
    rng = random.Random(seed)
    reply = await stub.CreateTable(
        table_pb2.CreateTableRequest(mode="classic", players=PLAYERS, seed=seed, clock_scale=1), timeout=30
    )
    table_id = reply.table_id
    tokens = await join_seats(stub, table_id, len(PLAYERS))
    bot = HeuristicBot(seed)
    codes: dict[grpc.StatusCode, int] = {}
    for step in range(150):
        state = await table_state(stub, table_id)
        if state.finished:
            break
        if step % 25 == 10:  # one legal command, a hundred times at once: 50 with one id, 50 each their own
            command = bot.choose(state, state.actor)
            shared = uuid.uuid4().hex
            ids = [shared] * 50 + [uuid.uuid4().hex for _ in range(50)]
            results = await asyncio.gather(*(send(stub, table_id, tokens[state.actor], command, i) for i in ids))
        elif rng.random() < 0.6:
            command = hostile(rng, len(PLAYERS))
            token = tokens[rng.randrange(len(PLAYERS))]  # often not the command's seat
            results = [await send(stub, table_id, token, command, uuid.uuid4().hex)]
        else:
            command = bot.choose(state, state.actor)
            results = [await send(stub, table_id, tokens[state.actor], command, uuid.uuid4().hex)]
        for code in results:
            codes[code] = codes.get(code, 0) + 1
    assert not {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN} & set(codes), codes
    assert codes.get(grpc.StatusCode.OK, 0) > 20, codes

    shown = await table_state(stub, table_id)
    rows = await event_rows(pool, table_id)  # read after: the table's clock may have moved on meanwhile
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    events = [row_event(r) for r in rows]
    assert codec.public_state_data(replay(events[: shown.seq])) == codec.state_to_data(shown)  # G10: no seed shown
    # The service can load it again, from its snapshot and the events after it.
    _, loaded = await Tables(pool).read(table_id)
    assert codec.state_to_data(loaded) == codec.state_to_data(replay(events))
