"""Client SDK: talk to the table service, and let bots play tables through it.

`BotTable` keeps a local replica of a table's engine state from the
`WatchTable` stream (a snapshot, then every event) and submits its bots'
commands whenever one of their seats must act, exactly as a player's client
would: the server stays the authority, the replica only decides.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc

from bots import make_bot
from engine import Event, TableState, codec, evolve
from engine.rng import draw
from monopoly.v1 import common_pb2, table_pb2, table_pb2_grpc
from servicekit.wire import command_to_proto, event_from_proto


def connect(target: str) -> tuple[grpc.aio.Channel, table_pb2_grpc.TableServiceStub]:
    channel = grpc.aio.insecure_channel(target)
    return channel, table_pb2_grpc.TableServiceStub(channel)


@dataclass
class BotTable:
    """One table played to its end by bots through the real API."""

    stub: table_pb2_grpc.TableServiceStub
    mode: str = "classic"
    players: int = 4
    seed: int = 0
    bots: str = "heuristic"
    clock_scale: int = 1
    think_s: float = 0.0
    table_id: str = ""
    state: TableState | None = None
    tokens: dict[int, str] = field(default_factory=dict)
    commands: int = 0
    refused: int = 0
    latencies: list[float] = field(default_factory=list)
    #: Called with (table, event) for every event the replica applies.
    on_event: Callable[[BotTable, Event], None] | None = None

    async def create(self) -> str:
        names = [f"{self.bots}-{i}" for i in range(self.players)]
        reply = await self.stub.CreateTable(
            table_pb2.CreateTableRequest(mode=self.mode, players=names, seed=self.seed, clock_scale=self.clock_scale)
        )
        self.table_id = reply.table_id
        for seat in range(self.players):
            joined = await self.stub.JoinTable(table_pb2.JoinTableRequest(table_id=self.table_id, seat=seat))
            self.tokens[seat] = joined.seat_token
        return self.table_id

    async def play(self) -> TableState:
        """Follow the table and act for its seats until the game ends."""
        self._stopped = False
        self._bots = {s: make_bot(self.bots, draw(self.seed or 1, 1000 + s)) for s in self.tokens}
        self._acting: asyncio.Task[None] | None = None
        stream = self.stub.WatchTable(table_pb2.WatchTableRequest(table_id=self.table_id))
        try:
            async for item in stream:
                if item.HasField("snapshot"):
                    self.state = codec.state_from_data(json.loads(item.snapshot.state_json))
                elif item.HasField("batch"):
                    self._apply(item.batch.events)
                else:
                    self._apply([item.event])
                if self.state is not None and self.state.finished:
                    break
                self._maybe_act()
        finally:
            stream.cancel()
            if self._acting is not None:
                self._acting.cancel()
                with contextlib.suppress(BaseException):
                    await self._acting
            self._stopped = True
        assert self.state is not None
        return self.state

    def _apply(self, envelopes: Sequence[common_pb2.Envelope]) -> None:
        """Bring the replica up to date; events it already has (by seq) are skipped."""
        state = self.state
        assert state is not None
        for env in envelopes:
            if env.seq == state.seq + 1:
                event = event_from_proto(env.payload)
                evolve(state, event)
                if self.on_event is not None:
                    self.on_event(self, event)

    def _maybe_act(self) -> None:
        state = self.state
        if (
            self._stopped
            or state is None
            or state.finished
            or state.paused
            or (self._acting and not self._acting.done())
        ):
            return
        seat = state.actor
        if seat in self._bots:
            self._acting = asyncio.create_task(self._act(self._bots[seat], seat, state.seq))

    async def _act(self, bot: object, seat: int, seq: int) -> None:
        assert self.state is not None
        if self.think_s:
            await asyncio.sleep(self.think_s)
            if self.state.seq != seq:
                return
        command = bot.choose(self.state, seat)  # type: ignore[attr-defined]
        request = table_pb2.SubmitCommandRequest(
            table_id=self.table_id,
            command_id=uuid.uuid4().hex,
            seat_token=self.tokens[seat],
            command=command_to_proto(command),
            expected_seq=seq,
        )
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            reply = await self.stub.SubmitCommand(request, timeout=30)
            self.latencies.append(loop.time() - started)
            self.commands += 1
            self._apply(reply.events)
        except grpc.aio.AioRpcError as exc:
            if exc.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
                self.refused += 1  # the table moved on (a timer fired) before the command arrived
            else:
                raise
        finally:
            asyncio.get_running_loop().call_soon(self._maybe_act)


__all__ = ["BotTable", "connect"]
