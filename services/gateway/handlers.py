"""One browser connection: its requests turned into calls of the platform's public gRPC APIs, and the
streams it follows (its queue ticket, the table it plays or watches) pushed back as they move.

Nothing here decides the game. A command is checked for shape (engine.codec), given the
seat of the browser's own seat token (never a seat the browser names) and sent to the
service that decides it: the table (on one `Play` stream per connection), or the auction,
trade or casino service when the table delegates that sub-protocol. A refusal comes back
with its gRPC status and rule ID.

The only state is per connection and rebuilt from the platform at will: the replica of the
watched table (a `WatchTable` snapshot, then its events), re-followed from its last seq
when the table service restarts; a browser that reconnects (to any replica of the gateway)
says the last seq it has and gets the events it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from engine import (
    AcceptTrade,
    Bid,
    Command,
    DeclineBet,
    DeclineTrade,
    PassBid,
    PlaceBet,
    ProposeTrade,
    RuleViolation,
    TableState,
    codec,
    evolve,
)
from monopoly.v1 import (
    auction_pb2,
    auction_pb2_grpc,
    casino_pb2,
    casino_pb2_grpc,
    matchmaking_pb2,
    matchmaking_pb2_grpc,
    table_pb2,
    table_pb2_grpc,
    trade_pb2,
    trade_pb2_grpc,
)
from servicekit import auth, credentials
from servicekit.errors import Unauthenticated
from servicekit.routing import RoutedTableStub, retry_after_s
from servicekit.settings import TLSSettings
from servicekit.wire import command_to_proto, event_from_proto, trade_terms

from . import api, views

log = logging.getLogger("gateway")
#: How long a call to the platform may take before the browser is told it failed.
CALL_TIMEOUT_S = 15.0
#: How long a move the sub-protocol service has not caught up with is sent again (`_service_behind`).
CATCH_UP_S = 3.0
#: Pause before following a stream again after its service went away (restarting).
RETRY_S = 0.5
#: At most one look at the trade service's open proposals per this many seconds per connection.
TRADES_EVERY_S = 0.3

Push = Callable[[dict[str, Any]], Awaitable[None]]


def to_dict(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return data


def rpc_error(exc: grpc.aio.AioRpcError) -> api.GatewayError:
    """The browser's form of a refusal: status name, message, and the rule ID from `rule-id`."""
    rule = ""
    for key, value in exc.trailing_metadata() or ():
        if key == "rule-id":
            rule = str(value)
    return api.GatewayError(exc.code().name, exc.details() or "", rule)


@dataclass
class Backends:
    """Stubs of the platform's services; a sub-protocol service is None when the platform runs none."""

    table: table_pb2_grpc.TableServiceStub
    matchmaking: matchmaking_pb2_grpc.MatchmakingServiceStub
    auction: auction_pb2_grpc.AuctionServiceStub | None = None
    trade: trade_pb2_grpc.TradeServiceStub | None = None
    casino: casino_pb2_grpc.CasinoServiceStub | None = None
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    @classmethod
    def connect(
        cls,
        table: str,
        matchmaking: str,
        auction: str = "",
        trade: str = "",
        casino: str = "",
        tls: TLSSettings | None = None,
        token: credentials.TokenSource = "",
    ) -> Backends:
        """Channels to the services (TLS as `tls` says; None: plaintext) whose calls carry `token`
        (the gateway's service token) unless a call sets its own (a browser's token)."""
        channels: dict[str, grpc.aio.Channel] = {}
        opened: list[grpc.aio.Channel] = []  # closed with the gateway, those the table stub opens later too

        def channel(target: str) -> grpc.aio.Channel:
            if target not in channels:
                channels[target] = credentials.channel(target, token, tls or TLSSettings())
                opened.append(channels[target])
            return channels[target]

        return cls(
            # follows the table service's redirects to the instance that runs each table (servicekit.routing)
            table=RoutedTableStub(channel(table), channel),
            matchmaking=matchmaking_pb2_grpc.MatchmakingServiceStub(channel(matchmaking)),
            auction=auction_pb2_grpc.AuctionServiceStub(channel(auction)) if auction else None,
            trade=trade_pb2_grpc.TradeServiceStub(channel(trade)) if trade else None,
            casino=casino_pb2_grpc.CasinoServiceStub(channel(casino)) if casino else None,
            channels=opened,
        )

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


class PlayStream:
    """Commands of one connection on one `TableService.Play` stream, each answered in order."""

    def __init__(self, stub: table_pb2_grpc.TableServiceStub) -> None:
        self.stub = stub
        self.call: grpc.aio.StreamStreamCall | None = None
        self.lock = asyncio.Lock()

    async def send(self, request: table_pb2.SubmitCommandRequest) -> table_pb2.SubmitCommandResponse:
        async with self.lock:
            if self.call is None:
                self.call = self.stub.Play()
            try:
                await self.call.write(request)
                reply = await asyncio.wait_for(self.call.read(), CALL_TIMEOUT_S)
            except BaseException:
                self.close()  # a stream in an unknown state: the next command opens another
                raise
            if reply is grpc.aio.EOF:
                self.close()
                raise api.GatewayError("UNAVAILABLE", "the table service closed the stream; send again")
            if reply.HasField("refused"):
                r = reply.refused
                raise api.GatewayError(r.code, r.message, r.rule_id)
            answer: table_pb2.SubmitCommandResponse = reply.answer
            return answer

    def close(self) -> None:
        if self.call is not None:
            self.call.cancel()
            self.call = None


@dataclass
class Clock:
    """The table's clock as the last event showed it, to turn game-time deadlines into wall time (E6)."""

    game_ms: int = 0
    wall_ms: int = 0
    scale: int = 1

    def wall_of(self, game_ms: int) -> int:
        return self.wall_ms + (game_ms - self.game_ms) // max(self.scale, 1)


class Session:
    """The requests and pushes of one browser connection."""

    def __init__(
        self, backends: Backends, secret: auth.Secret, push: Push, may_register: Callable[[], bool] = lambda: True
    ) -> None:
        self.backends = backends
        #: The client's registration quota (`api.ClientLimits`, by address over all its connections).
        self.may_register = may_register
        self.secret = secret
        self.push = push
        self.play = PlayStream(backends.table)
        self.tasks: dict[str, asyncio.Task[None]] = {}
        # The watched table: its id, the token it is watched with, the seat (-1: a spectator), the replica.
        self.table_id = ""
        self.seat = -1
        self.state: TableState | None = None
        self.clock = Clock()
        self._auction_followed = 0
        self._trades_seen: list[dict[str, Any]] | None = None
        self._trades_at = 0.0

    # -- requests ------------------------------------------------------------------------

    async def handle(self, request: Any) -> Any:
        """The result of one validated request; `api.GatewayError` when it is refused."""
        try:
            return await getattr(self, f"_op_{request.op}")(request)
        except grpc.aio.AioRpcError as exc:
            raise rpc_error(exc) from None
        except TimeoutError:
            raise api.GatewayError("DEADLINE_EXCEEDED", "the platform did not answer in time") from None

    async def _op_register(self, r: api.Register) -> Any:
        if not self.may_register():
            raise api.GatewayError("RESOURCE_EXHAUSTED", "too many registrations from this address: slow down")
        reply = await self.backends.matchmaking.RegisterPlayer(
            matchmaking_pb2.RegisterPlayerRequest(display_name=r.name), timeout=CALL_TIMEOUT_S
        )
        return {"player_id": reply.player_id, "player_token": reply.player_token, "name": r.name}

    async def _op_lobby(self, r: api.Lobby) -> Any:
        request = matchmaking_pb2.ListTablesRequest()
        if r.player_token:  # a signed-in player asks with its own token, and gets spectator tokens
            reply = await self.backends.matchmaking.ListTables(
                request, timeout=CALL_TIMEOUT_S, metadata=auth.metadata(r.player_token)
            )
        else:  # the gateway's own token; an anonymous browser sees the tables, never a spectator token
            reply = await self.backends.matchmaking.ListTables(request, timeout=CALL_TIMEOUT_S)
            for running in reply.running:
                running.spectator_token = ""
        return to_dict(reply)

    async def _op_enqueue(self, r: api.Enqueue) -> Any:
        status = await self.backends.matchmaking.Enqueue(
            matchmaking_pb2.EnqueueRequest(
                player_token=r.player_token,
                mode=r.mode,
                bot_fill=r.bot_fill,
                party_id=r.party_id,
                party_size=r.party_size,
            ),
            timeout=CALL_TIMEOUT_S,
        )
        self._start("queue", self._follow_queue(r.player_token))
        return to_dict(status)

    async def _op_cancel(self, r: api.Cancel) -> Any:
        status = await self.backends.matchmaking.Cancel(
            matchmaking_pb2.CancelRequest(player_token=r.player_token), timeout=CALL_TIMEOUT_S
        )
        return to_dict(status)

    async def _op_watch_queue(self, r: api.WatchQueue) -> Any:
        self._start("queue", self._follow_queue(r.player_token))
        return {}

    async def _op_my_match(self, r: api.MyMatch) -> Any:
        match = await self.backends.matchmaking.GetMyMatch(
            matchmaking_pb2.GetMyMatchRequest(player_token=r.player_token), timeout=CALL_TIMEOUT_S
        )
        return to_dict(match)

    async def _op_custom_create(self, r: api.CustomCreate) -> Any:
        lobby = await self.backends.matchmaking.CreateCustomTable(
            matchmaking_pb2.CreateCustomTableRequest(
                host_token=r.player_token, settings_json=json.dumps(r.settings) if r.settings else "", seats=r.seats
            ),
            timeout=CALL_TIMEOUT_S,
        )
        return to_dict(lobby)

    async def _op_custom_join(self, r: api.CustomJoin) -> Any:
        lobby = await self.backends.matchmaking.JoinCustomTable(
            matchmaking_pb2.JoinCustomTableRequest(player_token=r.player_token, lobby_id=r.lobby_id),
            timeout=CALL_TIMEOUT_S,
        )
        return to_dict(lobby)

    async def _op_custom_start(self, r: api.CustomStart) -> Any:
        lobby = await self.backends.matchmaking.StartCustomTable(
            matchmaking_pb2.StartCustomTableRequest(
                host_token=r.player_token, lobby_id=r.lobby_id, bot_fill=r.bot_fill
            ),
            timeout=CALL_TIMEOUT_S,
        )
        return to_dict(lobby)

    async def _op_watch(self, r: api.Watch) -> Any:
        claims = self._claims(r.token)
        if not claims.holds_for(r.table_id):  # a seat or spectator token of this table (an account token: none)
            raise api.GatewayError("PERMISSION_DENIED", "the token is for another table")
        self._stop("table")
        self._stop("auction")
        self.table_id, self.seat, self.state = r.table_id, claims.seat if claims.role == "player" else -1, None
        self._auction_followed, self._trades_seen = 0, None
        self._start("table", self._follow_table(r.table_id, r.token, r.from_seq))
        return {"table_id": r.table_id, "seat": self.seat, "role": claims.role}

    async def _op_unwatch(self, r: api.Unwatch) -> Any:
        self._stop("table")
        self._stop("auction")
        self.table_id, self.state = "", None
        return {}

    async def _op_command(self, r: api.SendCommand) -> Any:
        claims = self._claims(r.seat_token)
        if claims.role != "player" or claims.table_id != r.table_id:
            raise api.GatewayError("PERMISSION_DENIED", "commands need a player's seat token of this table")
        command = parse_command(r.command, claims.seat)
        command_id = r.command_id or uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CATCH_UP_S
        while True:
            try:
                return await self._route(r.table_id, r.seat_token, command, command_id)
            except grpc.aio.AioRpcError as exc:
                if not self._service_behind(command, exc) or loop.time() > deadline:
                    raise
            await asyncio.sleep(0.1)

    def _service_behind(self, command: Command, exc: grpc.aio.AioRpcError) -> bool:
        """A bet or bid the service refused because it has not yet opened what the table already did.

        The table announces a bet (K1) or an auction (A1) on its stream and the service opens it when
        its consumer reads that: a browser that acts at once can be quicker. Such a refusal changed
        nothing, so the move is sent again for a moment.
        """
        state = self.state
        if state is None or exc.code() not in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
            return False
        if isinstance(command, (PlaceBet, DeclineBet)):
            return state.casino and "no bet is open" in (exc.details() or "")
        if isinstance(command, (Bid, PassBid)):
            return state.auction is not None and exc.code() == grpc.StatusCode.NOT_FOUND
        return False

    def _claims(self, token: str) -> auth.Claims:
        try:
            return auth.verify(self.secret, token)
        except Unauthenticated as exc:
            raise api.GatewayError("UNAUTHENTICATED", str(exc)) from None

    async def _route(self, table_id: str, token: str, command: Command, command_id: str) -> Any:
        """Send `command` where the table's rules have it decided; the answer, or the refusal raised."""
        b = self.backends
        delegated = set(self.state.config.external) if self.state is not None and self.table_id == table_id else None

        def at(service: str, stub: object) -> bool:
            return stub is not None and (delegated is None or service in delegated)

        if isinstance(command, (Bid, PassBid)) and b.auction is not None and at("auction", b.auction):
            auction_id = self.state.auction.auction_id if self.state is not None and self.state.auction else 0
            if isinstance(command, Bid):
                bid = auction_pb2.PlaceBidRequest(
                    table_id=table_id, auction_id=auction_id, seat=command.seat, amount=command.amount, seat_token=token
                )
                view = await b.auction.PlaceBid(bid, timeout=CALL_TIMEOUT_S)
            else:
                passing = auction_pb2.PassRequest(
                    table_id=table_id, auction_id=auction_id, seat=command.seat, seat_token=token
                )
                view = await b.auction.Pass(passing, timeout=CALL_TIMEOUT_S)
            return {"auction": to_dict(view)}
        if isinstance(command, (PlaceBet, DeclineBet)) and b.casino is not None and at("casino", b.casino):
            if isinstance(command, PlaceBet):
                request = casino_pb2.PlaceBetRequest(
                    table_id=table_id, seat=command.seat, numbers=list(command.numbers), seat_token=token
                )
                bet = await b.casino.PlaceBet(request, timeout=CALL_TIMEOUT_S)
            else:
                decline = casino_pb2.DeclineBetRequest(table_id=table_id, seat=command.seat, seat_token=token)
                bet = await b.casino.Decline(decline, timeout=CALL_TIMEOUT_S)
            return {"bet": to_dict(bet)}
        trade_move = isinstance(command, (ProposeTrade, AcceptTrade, DeclineTrade))
        if trade_move and b.trade is not None and at("trade", b.trade):
            if isinstance(command, ProposeTrade):
                terms = trade_terms(command)
                proposal = trade_pb2.ProposeTradeRequest(
                    table_id=table_id, seat=command.seat, seat_token=token, terms=terms
                )
                view = await b.trade.ProposeTrade(proposal, timeout=CALL_TIMEOUT_S)
            else:
                assert isinstance(command, (AcceptTrade, DeclineTrade))
                action = trade_pb2.TradeActionRequest(
                    table_id=table_id, trade_id=command.trade_id, seat=command.seat, seat_token=token
                )
                answer_call = b.trade.AcceptTrade if isinstance(command, AcceptTrade) else b.trade.DeclineTrade
                view = await answer_call(action, timeout=CALL_TIMEOUT_S)
            self._trades_at = 0.0  # look again at once
            asyncio.get_running_loop().call_soon(self._look_at_trades)
            return {"trade": to_dict(view)}
        answer = await self.play.send(
            table_pb2.SubmitCommandRequest(
                table_id=table_id, command_id=command_id, seat_token=token, command=command_to_proto(command)
            )
        )
        return {"first_seq": answer.first_seq, "last_seq": answer.last_seq}

    # -- what the connection follows --------------------------------------------------------

    def _start(self, name: str, work: Awaitable[None]) -> None:
        self._stop(name)
        self.tasks[name] = asyncio.ensure_future(work)

    def _stop(self, name: str) -> None:
        task = self.tasks.pop(name, None)
        if task is not None:
            task.cancel()

    async def _follow_queue(self, player_token: str) -> None:
        """WatchQueue's statuses, pushed until the match (or the cancellation); followed again after a restart."""
        while True:
            try:
                stream = self.backends.matchmaking.WatchQueue(
                    matchmaking_pb2.WatchQueueRequest(player_token=player_token)
                )
                async for status in stream:
                    await self.push({"type": "queue", "status": to_dict(status)})
                    if status.status in ("matched", "cancelled"):
                        return
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    await self.push({"type": "error", "error": rpc_error(exc).as_data()})
                    return
            await asyncio.sleep(RETRY_S)

    async def _follow_table(self, table_id: str, token: str, known_seq: int) -> None:
        """The table's snapshot, then its events, each pushed with the view and the seat's legal commands."""
        while True:
            from_seq = self.state.seq if self.state is not None else 0
            try:
                stream = self.backends.table.WatchTable(
                    table_pb2.WatchTableRequest(table_id=table_id, from_seq=from_seq, seat_token=token)
                )
                async for item in stream:
                    if item.HasField("snapshot"):
                        snap = item.snapshot
                        self.state = codec.state_from_data(json.loads(snap.state_json))
                        # E6: deadlines are on the table's clock (pauses included), at the table's scale
                        # (its config records it); its clock stood at `state.clock` when last moved
                        scale = self.state.config.clock.scale or 1
                        self.clock = Clock(self.state.clock, int(time.time() * 1000), scale)
                        missed: list[dict[str, Any]] = []
                        if 0 < known_seq < self.state.seq:
                            missed = await self._missed(table_id, token, known_seq, self.state.seq)
                        await self._push_table(missed, snapshot=True)
                    else:
                        batch = item.batch.events if item.HasField("batch") else [item.event]
                        await self._push_table(self._apply(batch))
                    if self.state is not None and self.state.finished:
                        return
                if self.state is not None and self.state.finished:
                    return
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:  # a quota (many watchers reconnecting)
                    await self.push({"type": "notice", "message": "the table is busy; following again"})
                    await asyncio.sleep(retry_after_s(exc, RETRY_S))
                    continue
                if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                    await self.push({"type": "error", "table_id": table_id, "error": rpc_error(exc).as_data()})
                    return
            await self.push({"type": "notice", "message": "the table service is away; following again"})
            await asyncio.sleep(RETRY_S)

    async def _missed(self, table_id: str, token: str, after: int, until: int) -> list[dict[str, Any]]:
        """The events after the browser's last seq up to the snapshot's (a reconnect's log)."""
        out: list[dict[str, Any]] = []
        stream = self.backends.table.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id, from_seq=after, seat_token=token)
        )
        try:
            async for item in stream:
                for env in item.batch.events:
                    if env.seq <= until:
                        out.append(views.event_data(env.seq, event_from_proto(env.payload)))
                if not out or out[-1]["seq"] >= until:
                    break
        finally:
            stream.cancel()
        return out

    def _apply(self, envelopes: Any) -> list[dict[str, Any]]:
        state = self.state
        assert state is not None
        out = []
        for env in envelopes:
            if env.seq != state.seq + 1:
                continue  # already applied (a resumed stream repeats nothing, but be sure)
            event = event_from_proto(env.payload)
            evolve(state, event)
            at = env.occurred_at
            self.clock = Clock(at.game_ms, at.wall_unix_ms, at.clock_scale or 1)
            out.append(views.event_data(env.seq, event))
        return out

    async def _push_table(self, events: list[dict[str, Any]], snapshot: bool = False) -> None:
        state = self.state
        assert state is not None
        deadline = self.clock.wall_of(state.turn_deadline) if state.turn_deadline and not state.finished else 0
        message: dict[str, Any] = {
            "type": "table",
            "table_id": self.table_id,
            "seat": self.seat,
            "snapshot": snapshot,
            "events": events,
            "view": views.table_view(state),
            "legal": views.legal(state, self.seat),
            "deadline_unix_ms": deadline,
        }
        if snapshot:
            message["board"] = views.board(state)
        await self.push(message)
        external = state.config.external
        auction = state.auction
        if (
            auction is not None
            and "auction" in external
            and self.backends.auction is not None
            and auction.auction_id != self._auction_followed
        ):
            self._auction_followed = auction.auction_id
            self._start("auction", self._follow_auction(self.table_id, auction.auction_id))
        if "trade" in external and self.backends.trade is not None:
            self._look_at_trades()

    async def _follow_auction(self, table_id: str, auction_id: int) -> None:
        """The auction service's view of the table's running auction: whose bid, the high bid, the timer."""
        stub = self.backends.auction
        assert stub is not None
        while self.state is not None and self.state.auction is not None and self.state.auction.auction_id == auction_id:
            try:
                async for view in stub.WatchAuction(
                    auction_pb2.GetAuctionRequest(table_id=table_id, auction_id=auction_id)
                ):
                    await self.push({"type": "auction", "view": to_dict(view)})
                    if view.status != "open":
                        return
            except grpc.aio.AioRpcError as exc:
                if exc.code() not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE):
                    return  # not this connection's to fix: the table's events still show the auction
            await asyncio.sleep(0.1)  # not opened there yet, or the service is restarting

    def _look_at_trades(self) -> None:
        now = time.monotonic()
        if now - self._trades_at < TRADES_EVERY_S or ("trades" in self.tasks and not self.tasks["trades"].done()):
            return
        self._trades_at = now
        self.tasks["trades"] = asyncio.ensure_future(self._push_trades(self.table_id))

    async def _push_trades(self, table_id: str) -> None:
        """The open proposals at the trade service (a proposal reaches the table only once accepted)."""
        stub = self.backends.trade
        assert stub is not None
        with contextlib.suppress(grpc.aio.AioRpcError):
            reply = await stub.ListTrades(trade_pb2.ListTradesRequest(table_id=table_id, open_only=True), timeout=5)
            trades = [to_dict(t) for t in reply.trades]
            if trades != self._trades_seen:
                self._trades_seen = trades
                await self.push({"type": "trades", "table_id": table_id, "trades": trades})

    async def close(self) -> None:
        for name in list(self.tasks):
            self._stop(name)
        self.play.close()


def parse_command(data: dict[str, Any], seat: int) -> Command:
    """The engine command in `data` for the token's `seat`; INVALID_ARGUMENT when it is malformed.

    The browser never names a seat: a `seat` field is refused rather than overridden, so a
    client that tries to act for another seat is told so.
    """
    if "seat" in data:
        raise api.GatewayError("INVALID_ARGUMENT", "command.seat: the seat comes from the seat token; leave it out")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in views.PLAYER_COMMANDS:
        raise api.GatewayError("INVALID_ARGUMENT", f"command.type: not a player command: {str(kind)[:40]!r}")
    for key, value in data.items():
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and len(value) > 40:
            raise api.GatewayError("INVALID_ARGUMENT", f"command.{key}: at most 40 items")
        for v in values:
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 10**9:
                raise api.GatewayError("INVALID_ARGUMENT", f"command.{key}: out of range")
    try:
        return codec.command_from_data({**data, "seat": seat})
    except (ValueError, RuleViolation) as exc:
        raise api.GatewayError("INVALID_ARGUMENT", f"command: {exc}") from None


__all__ = ["Backends", "PlayStream", "Session", "parse_command", "rpc_error"]
