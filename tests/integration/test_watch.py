"""WatchTable: a snapshot then every committed event, resumable from a seq."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import grpc
import pytest

from bots import make_bot
from client import BotTable, bot_service_token
from engine import codec, evolve
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.wire import command_to_proto, event_from_proto

from .helpers import TIMEOUT, assert_matches_rows, envelopes_of, event_rows, get, watch

pytestmark = pytest.mark.integration


async def test_a_watcher_gets_a_snapshot_then_every_event_in_order_while_bots_play(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    game = BotTable(stub, seed=41)
    await game.create()
    subscribed = asyncio.Event()
    watcher = asyncio.create_task(watch(stub, game.table_id, first=subscribed))
    await asyncio.wait_for(subscribed.wait(), 30)
    state = await asyncio.wait_for(game.play(), TIMEOUT)
    assert state.finished
    items = await asyncio.wait_for(watcher, TIMEOUT)  # the stream ends with the game

    assert items[0].HasField("snapshot")
    snapshot = items[0].snapshot
    assert snapshot.table_id == game.table_id
    assert not snapshot.finished
    envelopes = envelopes_of(items[1:])  # after the snapshot, only events
    assert [e.seq for e in envelopes] == list(range(snapshot.seq + 1, state.seq + 1))
    assert len(envelopes) > 100  # the watcher followed the whole game, not just its end
    assert_matches_rows(envelopes, await event_rows(pool, game.table_id, snapshot.seq), game.table_id)

    # The snapshot plus the streamed events rebuild the server's final state exactly.
    replica = codec.state_from_data(json.loads(snapshot.state_json))
    for env in envelopes:
        evolve(replica, event_from_proto(env.payload))
    final = await get(stub, game.table_id)
    assert final.finished and final.seq == state.seq
    assert codec.public_state_data(replica) == json.loads(final.state_json)


async def test_a_watcher_resuming_from_a_seq_gets_exactly_the_events_after_it_then_live_ones(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    game = BotTable(stub, seed=42)
    await game.create()
    reached = asyncio.Event()
    game.on_event = lambda g, _e: reached.set() if g.state is not None and g.state.seq >= 300 else None
    play = asyncio.create_task(game.play())
    try:
        await asyncio.wait_for(reached.wait(), TIMEOUT)
        k = 120
        resumed = asyncio.create_task(watch(stub, game.table_id, from_seq=k))
        at_start = await get(stub, game.table_id)
        assert not at_start.finished
        state = await asyncio.wait_for(play, TIMEOUT)
    finally:
        play.cancel()
    items = await asyncio.wait_for(resumed, TIMEOUT)

    assert state.finished
    assert state.seq > at_start.seq  # the game went on while the watcher followed it live
    envelopes = envelopes_of(items)  # a resumed watch sends no snapshot
    assert [e.seq for e in envelopes] == list(range(k + 1, state.seq + 1))
    assert_matches_rows(envelopes, await event_rows(pool, game.table_id, k), game.table_id)

    # Resuming a finished table: exactly the rows after k, then the stream ends.
    again = await watch(stub, game.table_id, from_seq=k, timeout=30)
    assert_matches_rows(envelopes_of(again), await event_rows(pool, game.table_id, k), game.table_id)
    assert await watch(stub, game.table_id, from_seq=state.seq, timeout=30) == []
    finished = await watch(stub, game.table_id, timeout=30)
    assert len(finished) == 1 and finished[0].HasField("snapshot")
    assert finished[0].snapshot.finished and finished[0].snapshot.seq == state.seq


async def test_watching_an_unknown_table_is_not_found(stub: table_pb2_grpc.TableServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await watch(stub, "no-such-table", timeout=30)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    "request_",
    [
        table_pb2.WatchTableRequest(table_id="", seat_token=bot_service_token()),
        table_pb2.WatchTableRequest(table_id="x" * 65, seat_token=bot_service_token()),
    ],
)
async def test_watching_without_a_valid_table_id_is_invalid(
    stub: table_pb2_grpc.TableServiceStub, request_: table_pb2.WatchTableRequest
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(_drain(stub, request_), 30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_watching_from_a_negative_seq_is_invalid(stub: table_pb2_grpc.TableServiceStub) -> None:
    game = BotTable(stub, seed=43, players=2)
    await game.create()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await watch(stub, game.table_id, from_seq=-1, timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("ahead", [1, 1000, 2**63 - 1])
async def test_watching_from_a_seq_past_the_tables_last_is_invalid_not_silent(
    stub: table_pb2_grpc.TableServiceStub, ahead: int
) -> None:
    """No client has seen a seq the table has not committed: such a stream would wait in silence."""
    game = BotTable(stub, seed=44, players=2)
    await game.create()
    seq = (await get(stub, game.table_id)).seq
    request = table_pb2.WatchTableRequest(
        table_id=game.table_id, seat_token=bot_service_token(), from_seq=min(seq + ahead, 2**63 - 1)
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(_drain(stub, request), 30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "past the table's last seq" in (caught.value.details() or "")


async def test_a_leave_out_prefix_over_64_characters_is_invalid(stub: table_pb2_grpc.TableServiceStub) -> None:
    game = BotTable(stub, seed=45, players=2)
    await game.create()
    request = table_pb2.WatchTableRequest(
        table_id=game.table_id, seat_token=bot_service_token(), leave_out_commands="p" * 65
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(_drain(stub, request), 30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "leave_out_commands" in (caught.value.details() or "")


async def _drain(stub: table_pb2_grpc.TableServiceStub, request: table_pb2.WatchTableRequest) -> None:
    async for _ in stub.WatchTable(request):
        pass


async def test_a_watcher_leaving_out_its_own_commands_gets_every_other_batch_and_nothing_twice(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    """`leave_out_commands`: the live batches of commands whose id starts with the prefix are not sent
    (their client has them from its answers); every other batch is. The bot driver names its commands
    so and watches with its prefix, and its replica still ends exactly where the table does."""
    game = BotTable(stub, seed=44)
    await game.create()
    subscribed = asyncio.Event()
    everything = asyncio.create_task(watch(stub, game.table_id, first=subscribed))
    await asyncio.wait_for(subscribed.wait(), 30)
    own = stub.WatchTable(
        table_pb2.WatchTableRequest(
            table_id=game.table_id, seat_token=bot_service_token(), leave_out_commands=game.command_prefix
        )
    )
    left: list[table_pb2.WatchTableResponse] = []

    async def follow() -> None:
        async for item in own:
            left.append(item)
            subscribed.set()

    subscribed.clear()
    following = asyncio.create_task(follow())
    await asyncio.wait_for(subscribed.wait(), 30)
    # The first move made by another client (its command id without the prefix), the bots' after it.
    opening = codec.state_from_data(json.loads(left[0].snapshot.state_json))
    first_move = make_bot("heuristic", 1).choose(opening, opening.actor)
    await game.stub.SubmitCommand(
        table_pb2.SubmitCommandRequest(
            table_id=game.table_id,
            command_id="another-client-1",
            seat_token=game.tokens[opening.actor],
            command=command_to_proto(first_move),
        ),
        timeout=30,
    )
    state = await asyncio.wait_for(game.play(), TIMEOUT)
    all_items = await asyncio.wait_for(everything, TIMEOUT)
    await asyncio.wait_for(following, TIMEOUT)

    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT command_id, response FROM table_commands WHERE table_id = $1", game.table_id)
    answered_own: set[int] = set()
    for row in rows:
        if row["command_id"].startswith(game.command_prefix):
            answer = table_pb2.SubmitCommandResponse.FromString(bytes(row["response"]))
            answered_own.update(range(answer.first_seq, answer.last_seq + 1))
    assert answered_own, "the bots' commands were stored under their prefix"

    snapshot = left[0].snapshot
    every = [e.seq for e in envelopes_of(all_items[1:])]
    sent = [e.seq for e in envelopes_of(left[1:])]
    assert sent == [s for s in every if s not in answered_own]
    assert any(s not in answered_own for s in every), "the other client's command was sent"
    assert snapshot.seq < min(every)
    final = await get(stub, game.table_id)
    assert state.finished and state.seq == final.seq
    assert codec.public_state_data(state) == json.loads(final.state_json)
