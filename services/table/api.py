"""The table service's gRPC API (proto/monopoly/v1/table.proto)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

import grpc

from engine import RuleViolation, Tick, codec
from monopoly.v1 import common_pb2, table_pb2, table_pb2_grpc
from servicekit import access, auth, grpcserver, validate
from servicekit.errors import BadRequest, Elsewhere
from servicekit.grpcserver import Registration
from servicekit.wire import command_from_proto, envelope, public_envelope, stored_envelope, stored_event

from . import store
from .tables import TableActor, Tables

SERVICE_NAME = table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
PLAY_METHOD = f"/{SERVICE_NAME}/Play"
#: A Play stream's first request comes within this long, or the stream is closed (opening one needs no token).
PLAY_FIRST_REQUEST_S = 30.0


def _stored(table_id: str, row: Mapping[str, Any], scale: int) -> common_pb2.Envelope:
    """A stored event as watchers get it: the envelope JetStream got, less what G10 hides from clients
    (`wire.public_envelope`: TableCreated's seed, a pile's order); a row from before the envelopes were
    stored (migration 005) is wrapped anew, at its commit time."""
    if row["envelope"] is not None:
        return public_envelope(stored_envelope(row["envelope"]))
    wall = int(row["committed_at"].timestamp() * 1000)
    event = stored_event(None, row["payload"])
    return public_envelope(envelope(table_id, row["seq"], event, row["game_ms"], scale, wall))


def view(actor: TableActor, with_state: bool = True) -> table_pb2.TableView:
    """The table as its players and spectators see it: the state without the generator's seed and
    counter (G10), so nobody reads the next roll in advance; `with_state` False: its summary only."""
    s = actor.state
    return table_pb2.TableView(
        table_id=actor.table_id,
        seq=s.seq,
        phase=s.phase.value,
        actor=s.actor,
        finished=s.finished,
        winner=s.winner,
        state_json=codec.dumps(codec.public_state_data(s)) if with_state else "",  # G10: no seed, no counter
        mode=s.config.mode,
        game_ms=s.game_ms,
    )


_R = TypeVar("_R")


async def _first_in_time(requests: AsyncIterator[_R], within_s: float) -> AsyncIterator[_R]:
    """The stream's requests; none, and the stream ends, if the first does not come within `within_s`."""
    iterator = aiter(requests)
    try:
        first = await asyncio.wait_for(anext(iterator), within_s)
    except (StopAsyncIteration, TimeoutError):
        return
    yield first
    async for request in iterator:
        yield request


class TableService(table_pb2_grpc.TableServiceServicer):
    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    async def CreateTable(
        self, request: table_pb2.CreateTableRequest, context: grpc.aio.ServicerContext
    ) -> table_pb2.CreateTableResponse:
        settings = validate.json_object(request.custom_settings_json, "custom_settings_json")
        if request.seat_tokens:
            auth.current_claims().require_service()  # the seats' tokens, as JoinTable gives them
        made = await self.tables.create(
            request.mode or "classic",
            list(request.players),
            request.seed,
            settings,
            request.clock_scale,
            tuple(request.external),
            request.request_id,
        )
        tokens = []
        if request.seat_tokens:
            tokens = [self.tables.seat_token(made.table_id, s, n, made.epoch_ms) for s, n in enumerate(made.players)]
        return table_pb2.CreateTableResponse(
            table_id=made.table_id, seq=made.seq, rule_card=made.rule_card, seat_tokens=tokens
        )

    async def JoinTable(
        self, request: table_pb2.JoinTableRequest, context: grpc.aio.ServicerContext
    ) -> table_pb2.JoinTableResponse:
        auth.current_claims().require_service()  # players get their seat tokens from matchmaking
        token = await self.tables.join(validate.table_id(request.table_id), request.seat)
        return table_pb2.JoinTableResponse(seat_token=token, seat=request.seat)

    async def GetTable(
        self, request: table_pb2.GetTableRequest, context: grpc.aio.ServicerContext
    ) -> table_pb2.TableView:
        return view(await self.tables.get(validate.table_id(request.table_id)), with_state=not request.without_state)

    async def SubmitCommand(
        self, request: table_pb2.SubmitCommandRequest, context: grpc.aio.ServicerContext
    ) -> table_pb2.SubmitCommandResponse:
        table_id = validate.table_id(request.table_id)
        if len(request.command_id) > 128:
            raise BadRequest("command_id is at most 128 characters")
        if request.expected_seq < 0:
            raise BadRequest("expected_seq is a table's seq (0: not checked), never negative")
        command = command_from_proto(request.command)
        if isinstance(command, Tick):
            raise BadRequest("the clock is the table service's own: Tick is not a player's command")
        actor = await self.tables.get(table_id)
        seat = self.tables.authorize(actor, auth.current_claims(), command)
        # expected_seq is checked by the actor, after the command id: a retry of a command applied
        # meanwhile gets its first answer, not ABORTED
        answer = await actor.submit(command, request.command_id, seat, request.expected_seq)
        response: table_pb2.SubmitCommandResponse = table_pb2.SubmitCommandResponse.FromString(answer)
        return response

    @grpcserver.refusals_in_stream
    async def Play(
        self,
        requests: AsyncIterator[table_pb2.SubmitCommandRequest | grpcserver.RefusedRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[table_pb2.PlayResponse]:
        """SubmitCommand for each request of the stream, answered in order; a refused command is
        answered with its status (the stream stays open), anything else ends the stream.

        A stream is opened without a token (each request brings its own), so one that sends nothing
        for `PLAY_FIRST_REQUEST_S` is closed, and from its first admitted request on it holds one of
        that principal's open streams (`QuotaSettings.streams`), as a watch stream does."""
        verified: dict[str, auth.Claims] = {}  # the stream's tokens, each signature checked once
        with contextlib.ExitStack() as slot:
            counted = False
            async for request in _first_in_time(requests, PLAY_FIRST_REQUEST_S):
                if isinstance(request, grpcserver.RefusedRequest):  # malformed: refused, the stream goes on
                    decoded = request.request
                    yield table_pb2.PlayResponse(
                        command_id=decoded.command_id if decoded is not None else "",
                        refused=table_pb2.PlayRefusal(
                            code=grpc.StatusCode.INVALID_ARGUMENT.name, message=grpcserver.details_of(request.error)
                        ),
                    )
                    continue
                try:
                    claims, _ = await grpcserver.admit(
                        self.tables.token_secret, PLAY_METHOD, request, None, context.peer(), verified
                    )
                    if not counted and grpcserver.QUOTAS is not None:
                        key = access.quota_key(claims, context.peer())
                        if key is not None:
                            slot.enter_context(grpcserver.QUOTAS.streams.hold(key, "Play"))
                        counted = True
                    token = auth.set_current_claims(claims)
                    try:
                        answer = await self.SubmitCommand(request, context)
                    finally:
                        auth.reset_current_claims(token)
                except Exception as exc:
                    code = grpcserver.status_of(exc)
                    if code is None:
                        raise
                    rule = exc.rule if isinstance(exc, (RuleViolation, BadRequest)) else ""
                    hinted = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)
                    retry = grpcserver.retry_after_ms(exc) if code in hinted else 0
                    where = exc.address if isinstance(exc, Elsewhere) else ""  # the client sends it there
                    refusal = table_pb2.PlayRefusal(
                        code=code.name,
                        message=grpcserver.details_of(exc),
                        rule_id=rule,
                        retry_after_ms=retry,
                        served_by=where,
                    )
                    yield table_pb2.PlayResponse(command_id=request.command_id, refused=refusal)
                    continue
                yield table_pb2.PlayResponse(command_id=request.command_id, answer=answer)

    async def WatchTable(
        self, request: table_pb2.WatchTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        table_id = validate.table_id(request.table_id)
        auth.current_claims().require_table(table_id)  # a player or spectator of this table, or the platform
        if request.from_seq < 0:
            raise BadRequest("from_seq must be 0 or more")
        if len(request.leave_out_commands) > 64:
            raise BadRequest("leave_out_commands is at most 64 characters")
        actor = await self.tables.get(table_id)
        if request.from_seq > actor.state.seq:  # no client has seen a seq the table has not committed...
            async with self.tables.pool.acquire() as conn:
                committed = await store.seq_of(conn, table_id)
            if committed is not None and committed >= request.from_seq:
                # ...but Postgres has: this actor is behind (its partition moved while this instance was
                # frozen, or its last commit's outcome is being learnt); the owner, or a retry, serves it
                if self.tables.leases is not None:
                    self.tables.leases.nudge()  # a beat now: a lost partition is learnt at once
                raise await self.tables.elsewhere(table_id)
            raise BadRequest(f"from_seq {request.from_seq} is past the table's last seq ({actor.state.seq})")
        live = actor.subscribe(request.leave_out_commands)  # before reading the past: nothing falls in between
        try:
            last = request.from_seq
            if last == 0:
                snapshot = view(actor)
                last = snapshot.seq
                yield table_pb2.WatchTableResponse(snapshot=snapshot)
            else:
                async with self.tables.pool.acquire() as conn:
                    rows = await store.event_rows_after(conn, table_id, last)
                for page in range(0, len(rows), 200):
                    envelopes = [_stored(table_id, r, actor.scale) for r in rows[page : page + 200]]
                    yield table_pb2.WatchTableResponse(batch=common_pb2.EventBatch(events=envelopes))
                    last = envelopes[-1].seq
            if actor.state.finished and live.empty():
                return
            while (batch := await live.get()) is not None:
                fresh = [env for env in batch if env.seq > last]
                if fresh:
                    yield table_pb2.WatchTableResponse(batch=common_pb2.EventBatch(events=fresh))
                    last = fresh[-1].seq
            if actor.moved:  # another instance runs the table now: the client resumes there from `last`
                raise await self.tables.elsewhere(table_id)
        finally:
            actor.unsubscribe(live)

    async def ListInstances(
        self, request: table_pb2.ListInstancesRequest, context: grpc.aio.ServicerContext
    ) -> table_pb2.ListInstancesResponse:
        leases = self.tables.leases
        if leases is None:
            return table_pb2.ListInstancesResponse()
        async with self.tables.pool.acquire() as conn:
            rows = await leases.instances(conn)
        return table_pb2.ListInstancesResponse(
            instances=[
                table_pb2.InstanceView(
                    instance_id=r.instance_id,
                    address=r.address,
                    partitions=r.partitions,
                    tables=r.tables,
                    heartbeat_age_s=r.heartbeat_age_s,
                    live=r.live,
                )
                for r in rows
            ],
            partitions=leases.partitions,
            answered_by=leases.instance_id,
        )


def register(service: TableService) -> list[Registration]:
    return [lambda server: table_pb2_grpc.add_TableServiceServicer_to_server(service, server)]


__all__ = ["SERVICE_NAME", "TableService", "register", "view"]
