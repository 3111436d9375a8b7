"""The table service end to end on real NATS and Postgres."""

from __future__ import annotations

import asyncpg
import pytest
from nats.js import JetStreamContext

from client import BotTable
from client.verify import check_table
from monopoly.v1 import table_pb2_grpc

pytestmark = pytest.mark.integration


async def test_a_bot_game_through_grpc_ends_and_every_record_agrees(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, js: JetStreamContext
) -> None:
    game = BotTable(stub, seed=11)
    await game.create()
    state = await game.play()
    assert state.finished
    agreement = await check_table(pool, js, stub, game.table_id)
    assert agreement.rows == state.seq
    assert agreement.ok, agreement
