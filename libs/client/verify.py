"""Check that a table's three records agree: Postgres rows, JetStream messages, engine replay."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import asyncpg
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from engine import codec, replay
from monopoly.v1 import common_pb2, table_pb2, table_pb2_grpc
from servicekit.bus import TABLE_EVENTS, table_subject
from servicekit.wire import batch_envelopes, stored_event


@dataclass(frozen=True, slots=True)
class Agreement:
    table_id: str
    rows: int
    stream_events: int
    replay_matches: bool
    contiguous: bool
    #: Every row's stored envelope is, byte for byte, the one JetStream delivered for its seq (rows
    #: committed before the envelopes were stored, JSON only, are not compared).
    same_bytes: bool = True

    @property
    def ok(self) -> bool:
        return self.rows == self.stream_events and self.replay_matches and self.contiguous and self.same_bytes


async def stream_envelopes(
    js: JetStreamContext, table_id: str, expected: int, timeout: float = 10.0
) -> list[tuple[int, bytes]]:
    """The table's events on JetStream, in stream order: each one's seq and its envelope's bytes as published."""
    out: list[tuple[int, bytes]] = []
    sub = await js.subscribe(
        table_subject(table_id), stream=TABLE_EVENTS.name, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL
    )
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while len(out) < expected:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                break
            try:
                msg = await sub.next_msg(timeout=remaining)
            except TimeoutError:
                break
            out.extend((common_pb2.Envelope.FromString(one).seq, one) for one in batch_envelopes(msg.data))
    finally:
        await sub.unsubscribe()
    return out


async def check_table(
    pool: asyncpg.Pool, js: JetStreamContext, stub: table_pb2_grpc.TableServiceStub, table_id: str
) -> Agreement:
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT seq, envelope, payload FROM table_events WHERE table_id = $1 ORDER BY seq", table_id
        )
    events = [stored_event(r["envelope"], r["payload"]) for r in rows]
    view = await stub.GetTable(table_pb2.GetTableRequest(table_id=table_id))
    rebuilt = codec.public_state_data(replay(events)) if events else None  # GetTable hides the seed (G10)
    streamed = await stream_envelopes(js, table_id, len(rows))
    published = dict(streamed)
    return Agreement(
        table_id=table_id,
        rows=len(rows),
        stream_events=len(streamed),
        replay_matches=rebuilt == json.loads(view.state_json),
        contiguous=[r["seq"] for r in rows] == list(range(1, len(rows) + 1)) == [seq for seq, _ in streamed],
        same_bytes=all(r["envelope"] is None or published.get(r["seq"]) == r["envelope"] for r in rows),
    )
