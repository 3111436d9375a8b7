"""Client helpers for the matchmaking service: register players, queue them (alone or as a
party), wait for the match and its seat tokens; host and join custom tables.

    async with MatchmakingClient(target) as mm:
        players = [await mm.register(f"p{i}") for i in range(4)]
        seats = await mm.queue_and_wait(players, "classic")
        # seats[i].table_id, seats[i].seat, seats[i].seat_token: SubmitCommand with the token
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType

import grpc

from monopoly.v1 import matchmaking_pb2 as pb
from monopoly.v1 import matchmaking_pb2_grpc

from .channels import platform_channel

#: How long `wait_match` waits by default (seconds); reconnects to WatchQueue meanwhile.
WAIT_S = 120.0


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    token: str
    display_name: str


@dataclass(frozen=True, slots=True)
class SeatTicket:
    """A player's place at a formed table."""

    player: Player
    table_id: str
    seat: int
    seat_token: str
    match: pb.MatchView


class MatchmakingClient:
    def __init__(self, target: str) -> None:
        self.channel = platform_channel(target)
        self.stub = matchmaking_pb2_grpc.MatchmakingServiceStub(self.channel)

    async def __aenter__(self) -> MatchmakingClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self.channel.close()

    async def register(self, display_name: str, is_bot: bool = False) -> Player:
        reply = await self.stub.RegisterPlayer(
            pb.RegisterPlayerRequest(display_name=display_name, is_bot=is_bot), timeout=10
        )
        return Player(reply.player_id, reply.player_token, display_name)

    async def enqueue(
        self, player: Player, mode: str, party_id: str = "", party_size: int = 0, bot_fill: bool = False
    ) -> pb.QueueStatus:
        request = pb.EnqueueRequest(
            player_token=player.token, mode=mode, party_id=party_id, party_size=party_size, bot_fill=bot_fill
        )
        reply: pb.QueueStatus = await self.stub.Enqueue(request, timeout=10)
        return reply

    async def cancel(self, player: Player) -> pb.QueueStatus:
        reply: pb.QueueStatus = await self.stub.Cancel(pb.CancelRequest(player_token=player.token), timeout=10)
        return reply

    async def wait_match(self, player: Player, timeout: float = WAIT_S) -> SeatTicket:
        """Watch the player's ticket until it is matched (reconnecting if the service restarts)."""

        async def watch() -> SeatTicket:
            while True:
                try:
                    async for status in self.stub.WatchQueue(pb.WatchQueueRequest(player_token=player.token)):
                        if status.status == "matched":
                            m = status.match
                            return SeatTicket(player, m.table_id, m.seat, m.seat_token, m)
                        if status.status == "cancelled":
                            raise RuntimeError(f"{player.display_name}'s ticket was cancelled")
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                        raise
                await asyncio.sleep(0.2)

        return await asyncio.wait_for(watch(), timeout)

    async def queue_and_wait(
        self, players: Sequence[Player], mode: str, party: bool = False, bot_fill: bool = False, timeout: float = WAIT_S
    ) -> list[SeatTicket]:
        """Enqueue `players` (as one party when `party`) and wait until each is seated."""
        groups = [list(players)] if party else [[p] for p in players]
        return await self.queue_groups_and_wait(groups, mode, bot_fill, timeout)

    async def queue_groups_and_wait(
        self, groups: Sequence[Sequence[Player]], mode: str, bot_fill: bool = False, timeout: float = WAIT_S
    ) -> list[SeatTicket]:
        """Enqueue each group as a party (a group of one alone) and wait until every player is seated."""
        for group in groups:
            party_id = uuid.uuid4().hex if len(group) > 1 else ""
            for p in group:
                await self.enqueue(p, mode, party_id, len(group) if party_id else 0, bot_fill)
        players = [p for group in groups for p in group]
        return list(await asyncio.gather(*(self.wait_match(p, timeout) for p in players)))

    async def host_custom(self, host: Player, settings_json: str = "", seats: int = 0) -> pb.LobbyView:
        request = pb.CreateCustomTableRequest(host_token=host.token, settings_json=settings_json, seats=seats)
        reply: pb.LobbyView = await self.stub.CreateCustomTable(request, timeout=10)
        return reply

    async def join_custom(self, player: Player, lobby_id: str) -> pb.LobbyView:
        request = pb.JoinCustomTableRequest(player_token=player.token, lobby_id=lobby_id)
        reply: pb.LobbyView = await self.stub.JoinCustomTable(request, timeout=10)
        return reply

    async def start_custom(self, host: Player, lobby_id: str, bot_fill: bool = False) -> pb.LobbyView:
        request = pb.StartCustomTableRequest(host_token=host.token, lobby_id=lobby_id, bot_fill=bot_fill)
        reply: pb.LobbyView = await self.stub.StartCustomTable(request, timeout=10)
        return reply

    async def my_seat(self, player: Player) -> SeatTicket:
        """The player's live table and seat token (after a custom table started, say)."""
        m = await self.stub.GetMyMatch(pb.GetMyMatchRequest(player_token=player.token), timeout=10)
        return SeatTicket(player, m.table_id, m.seat, m.seat_token, m)

    async def list_tables(self) -> pb.ListTablesResponse:
        reply: pb.ListTablesResponse = await self.stub.ListTables(pb.ListTablesRequest(), timeout=10)
        return reply


__all__ = ["MatchmakingClient", "Player", "SeatTicket"]
