"""The matchmaking service's gRPC API (proto/monopoly/v1/matchmaking.proto)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from monopoly.v1 import matchmaking_pb2 as pb
from monopoly.v1 import matchmaking_pb2_grpc
from servicekit import auth
from servicekit.errors import BadRequest
from servicekit.grpcserver import Registration

from .matcher import Matchmaker
from .snapshot import QueueView, Watch

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["MatchmakingService"].full_name
#: A watcher looks at its ticket again after this long even if not woken (its queue is read every
#: `QueueView.poll_s` while watched, and watchers are woken after reads: this is the fallback).
WATCH_IDLE_S = 5.0
#: A watcher's status comes from a snapshot of its queue at most this old.
WATCH_MAX_AGE_S = 1.0


def _lobby_id(value: str) -> str:
    if not value or len(value) > 64:
        raise BadRequest("lobby_id is required")
    return value


class MatchmakingService(matchmaking_pb2_grpc.MatchmakingServiceServicer):
    def __init__(self, mm: Matchmaker) -> None:
        self.mm = mm

    async def RegisterPlayer(
        self, request: pb.RegisterPlayerRequest, context: grpc.aio.ServicerContext
    ) -> pb.RegisterPlayerResponse:
        player_id, token = await self.mm.register(request.display_name, request.is_bot)
        return pb.RegisterPlayerResponse(player_id=player_id, player_token=token)

    async def Enqueue(self, request: pb.EnqueueRequest, context: grpc.aio.ServicerContext) -> pb.QueueStatus:
        player = self.mm.player_of(auth.current_claims())
        return await self.mm.enqueue(player, request.mode, request.party_id, request.party_size, request.bot_fill)

    async def Cancel(self, request: pb.CancelRequest, context: grpc.aio.ServicerContext) -> pb.QueueStatus:
        return await self.mm.cancel(self.mm.player_of(auth.current_claims()))

    async def WatchQueue(
        self, request: pb.WatchQueueRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.QueueStatus]:
        player = self.mm.player_of(auth.current_claims())
        last: pb.QueueStatus | None = None
        status = await self.mm.status(player)  # the first message: the ticket as of this call
        watch: tuple[QueueView, Watch] | None = None
        try:
            while True:
                comparable = pb.QueueStatus()
                comparable.CopyFrom(status)
                comparable.waited_ms = 0
                comparable.estimated_wait_ms = status.estimated_wait_ms // 1000  # a change of a second or more
                if comparable != last:
                    yield status
                    last = comparable
                if status.status != "waiting":
                    return
                if watch is None or watch[1].ticket_id != status.ticket_id:  # (queued again meanwhile)
                    if watch is not None:
                        watch[0].unwatch(watch[1])
                    view = self.mm.queue_view(status.mode)
                    watch = view, view.watch(status.ticket_id)
                # Woken when the ticket left the queue, or its line moved (at a bounded rate, by one
                # read of the queue shared by every watcher).
                await watch[1].wait(WATCH_IDLE_S)
                status = await self.mm.watch_status(player, status, WATCH_MAX_AGE_S)
        finally:
            if watch is not None:
                watch[0].unwatch(watch[1])

    async def GetMyMatch(self, request: pb.GetMyMatchRequest, context: grpc.aio.ServicerContext) -> pb.MatchView:
        return await self.mm.my_match(self.mm.player_of(auth.current_claims()))

    async def CreateCustomTable(
        self, request: pb.CreateCustomTableRequest, context: grpc.aio.ServicerContext
    ) -> pb.LobbyView:
        host = self.mm.player_of(auth.current_claims())
        return await self.mm.create_lobby(host, request.settings_json, request.seats)

    async def JoinCustomTable(
        self, request: pb.JoinCustomTableRequest, context: grpc.aio.ServicerContext
    ) -> pb.LobbyView:
        player = self.mm.player_of(auth.current_claims())
        return await self.mm.join_lobby(player, _lobby_id(request.lobby_id))

    async def GetLobby(self, request: pb.GetLobbyRequest, context: grpc.aio.ServicerContext) -> pb.LobbyView:
        player = self.mm.player_of(auth.current_claims())
        return await self.mm.get_lobby(player, _lobby_id(request.lobby_id))

    async def StartCustomTable(
        self, request: pb.StartCustomTableRequest, context: grpc.aio.ServicerContext
    ) -> pb.LobbyView:
        host = self.mm.player_of(auth.current_claims())
        return await self.mm.start_lobby(host, _lobby_id(request.lobby_id), request.bot_fill)

    async def ListTables(
        self, request: pb.ListTablesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListTablesResponse:
        return await self.mm.list_tables()


def register(service: MatchmakingService) -> list[Registration]:
    return [lambda server: matchmaking_pb2_grpc.add_MatchmakingServiceServicer_to_server(service, server)]


__all__ = ["SERVICE_NAME", "MatchmakingService", "register"]
