"""G10: nobody reads the next roll in advance. Everything a client can read (GetTable's state, a
WatchTable snapshot and its events, the answers to commands) is tried as the generator's seed and
position; the prediction must fail, and the same attempt with the seed the server keeps succeeds
(so the test can fail)."""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import pytest

from bots import make_bot
from client import BotTable
from engine import DeckShuffled, Roll, codec, replay, rng
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.wire import command_to_proto, event_from_proto

from ..integration.helpers import event_rows, get, row_event, watch_snapshot

pytestmark = pytest.mark.integration

ROLLS = 6


def visible_guess(data: dict[str, Any]) -> tuple[int, int]:
    """The next roll as a client would compute it from what it was shown."""
    return rng.dice(int(data.get("rng_seed", 0)), int(data.get("rng_counter", 0)))


async def test_the_next_roll_cannot_be_predicted_from_anything_a_client_reads_but_can_with_the_seed(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    game = BotTable(stub, seed=20261201)
    await game.create()
    bot = make_bot("heuristic", 3)
    visible_hits = seed_hits = rolls = 0
    shown_texts: list[str] = []
    while rolls < ROLLS:
        view = await get(stub, game.table_id)
        snapshot = await watch_snapshot(stub, game.table_id, game.tokens[0])
        shown_texts += [view.state_json, snapshot.state_json]
        data = json.loads(view.state_json)
        state = codec.state_from_data(data)
        if view.phase == "pre_roll":
            guess = visible_guess(data)
            # What the server knows: the seed in Postgres, the position from replaying the stored events.
            rows = await event_rows(pool, game.table_id)
            server = replay([row_event(r) for r in rows])
            with_seed = rng.dice(server.rng_seed, server.rng_counter)
            command = Roll(view.actor)
        else:
            guess = with_seed = None
            command = bot.choose(state, view.actor)
        answer = await stub.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id=game.table_id,
                command_id=f"dice-{view.seq}",
                seat_token=game.tokens[command.seat],
                command=command_to_proto(command),
            ),
            timeout=30,
        )
        assert "TableCreated" not in [e.type for e in answer.events]
        if guess is None:
            continue
        rolled = next(event_from_proto(e.payload) for e in answer.events if e.type == "DiceRolled")
        actual = (rolled.d1, rolled.d2)  # type: ignore[attr-defined]
        rolls += 1
        visible_hits += guess == actual
        seed_hits += with_seed == actual
    assert seed_hits == ROLLS  # with the seed, every roll is known in advance: the attempt is a real one
    assert visible_hits < ROLLS  # from what clients read, it is not (all six by chance: 36**-6)
    for text in shown_texts:
        shown = json.loads(text)
        assert shown["seed"] == shown["rng_seed"] == shown["rng_counter"] == 0
    async with pool.acquire() as conn:
        stored = await conn.fetchval("SELECT seed FROM tables WHERE table_id = $1", game.table_id)
    assert stored == 20261201  # the server keeps it: replay still works from the stored events
    assert not any(str(server.rng_seed) in text for text in shown_texts)


async def test_the_next_card_cannot_be_read_from_anything_a_client_reads(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    """G10, C1-C4: the piles' order is the generator's output before a card is turned. Clients get each
    pile in id order (GetTable, a watch's snapshot, its events from the start, the answers); Postgres
    keeps the shuffled order, and the game plays on from it."""
    game = BotTable(stub, seed=20261205)
    await game.create()
    rows = await event_rows(pool, game.table_id)
    stored = {e.deck: list(e.cards) for e in map(row_event, rows) if isinstance(e, DeckShuffled)}
    assert stored and all(cards != sorted(cards) for cards in stored.values())  # shuffled, so the test can fail
    view = await get(stub, game.table_id)
    snapshot = await watch_snapshot(stub, game.table_id, game.tokens[0])
    for text in (view.state_json, snapshot.state_json):
        shown = json.loads(text)
        assert shown["deck"] == sorted(shown["deck"]) and shown["chest"] == sorted(shown["chest"])
        assert sorted(shown["deck"]) == sorted(stored["chance"])  # the same cards
    call = stub.WatchTable(table_pb2.WatchTableRequest(table_id=game.table_id, seat_token=game.tokens[0], from_seq=1))
    try:
        watched = []
        async for item in call:
            watched += [event_from_proto(e.payload) for e in item.batch.events]
            if len(watched) >= len(rows) - 1:
                break
    finally:
        call.cancel()
    shuffles = [e for e in watched if isinstance(e, DeckShuffled)]
    assert shuffles and all(list(e.cards) == sorted(stored[e.deck]) for e in shuffles)
