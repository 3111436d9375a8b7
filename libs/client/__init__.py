"""Client SDK: talk to the platform's services, and let bots play tables through them.

`BotTable` keeps a local replica of a table's engine state from the
`WatchTable` stream (a snapshot, then every event) and submits its bots'
commands whenever one of their seats must act, exactly as a player's client
would: the server stays the authority, the replica only decides.

With sub-protocols delegated to services (`external`), bids go to the
auction service (whose view of the running auction the bots read), bets to
the casino service and trade proposals and answers to the trade service;
the table's stream then shows their results.

On a table whose rules let players act outside their turn (hasbro: P10
building, T6 trades), the bots of the seats not to act are asked too
(`any_time`), one command at a time like every other, each carrying the
seq it was decided on.

A move that fails is never left in a task nobody awaits: an auction, bet or
trade the table has moved past is the normal case and ends the move quietly;
any other error is logged (logger "client.bots", with the table, seat and
seq) and the bots decide again after a short pause.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import secrets
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from bots import Bot, make_bot
from engine import (
    AcceptTrade,
    Bid,
    Command,
    DeclineBet,
    Event,
    Leave,
    PassBid,
    Phase,
    PlaceBet,
    ProposeTrade,
    TableState,
    codec,
    evolve,
)
from engine.rng import draw
from engine.state import TradeOffer
from monopoly.v1 import (
    auction_pb2,
    auction_pb2_grpc,
    casino_pb2,
    casino_pb2_grpc,
    common_pb2,
    table_pb2,
    table_pb2_grpc,
    trade_pb2,
    trade_pb2_grpc,
)
from servicekit import auth
from servicekit.routing import RoutedTableStub, retry_after_s, retry_hint_ms
from servicekit.settings import token_secret
from servicekit.wire import command_to_proto, event_from_proto, trade_terms

from .channels import operator_token, platform_channel

log = logging.getLogger("client.bots")

#: How often `BotTable.resign` reads a table it waits on (another seat's turn, a service's auction).
RESIGN_POLL_S = 0.5
#: How soon a bot looks again at a sub-protocol service that has not caught up with the table yet (an
#: auction not yet opened there, or settled there and not yet at the table); each further look waits
#: twice as long, up to POLL_MAX_S, so a platform that lags under load is not read ever faster.
POLL_S = 0.05
POLL_MAX_S = 1.0
#: How often the driver looks whether the table's stream brought a service's result to the replica.
CATCH_UP_S = 0.002
#: A watch stream silent this long is checked against the table (`BotTable._watch_for_silence`).
WATCH_SILENCE_S = 5.0
#: How long a bot waits before trying a service that did not answer (UNAVAILABLE: restarting).
RETRY_S = 0.25
#: How many times a driver asks for a seat's token (`BotTable._join`) before it gives up.
JOIN_ATTEMPTS = 5
#: Codes after which a call is tried again (after the server's `retry-after-ms`, else RETRY_S): the
#: service or its database was away, or the call ran past its deadline (the service stalled).
RETRIED = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,  # a quota: wait as told (retry-after-ms)
    }
)


def retry_after(exc: grpc.aio.AioRpcError) -> float:
    """Seconds to wait before retrying: the server's `retry-after-ms` hint, else RETRY_S (capped at 5 s)."""
    return retry_after_s(exc, RETRY_S)


def bot_service_token() -> str:
    """The token the platform's own bot drivers join and watch tables with (role "service", name "bots").

    Signed with TOKEN_SECRET / TOKEN_SECRETS (no default: the launcher sets it), the key the services verify with.
    """
    return auth.service_token(token_secret(), "bots")


def connect(target: str, token: str | None = None) -> tuple[grpc.aio.Channel, table_pb2_grpc.TableServiceStub]:
    """A table service stub whose calls carry `token` (default: the platform's operator token) and
    follow the service's redirects to the instance that runs each table (`servicekit.routing`)."""
    channel = platform_channel(target, token)
    return channel, RoutedTableStub(channel, lambda address: platform_channel(address, token))


class Poller:
    """Waits between reads of a service that has not caught up with the table: POLL_S, then twice as
    long each time up to POLL_MAX_S (reset once it has), each wait counted on its driver."""

    __slots__ = ("delay", "driver")

    def __init__(self, driver: BotTable) -> None:
        self.driver = driver
        self.delay = POLL_S

    async def wait(self) -> None:
        self.driver.service_polls += 1
        await asyncio.sleep(self.delay)
        self.delay = min(self.delay * 2, POLL_MAX_S)

    def reset(self) -> None:
        self.delay = POLL_S


@dataclass
class SubProtocolStubs:
    """Stubs of the sub-protocol services a platform runs (None: that one is not delegated)."""

    auction: auction_pb2_grpc.AuctionServiceStub | None = None
    trade: trade_pb2_grpc.TradeServiceStub | None = None
    casino: casino_pb2_grpc.CasinoServiceStub | None = None
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    @classmethod
    def connect(cls, targets: dict[str, str]) -> SubProtocolStubs:
        stubs = cls()
        for name, stub_type in (
            ("auction", auction_pb2_grpc.AuctionServiceStub),
            ("trade", trade_pb2_grpc.TradeServiceStub),
            ("casino", casino_pb2_grpc.CasinoServiceStub),
        ):
            if name in targets:
                channel = platform_channel(targets[name])
                stubs.channels.append(channel)
                setattr(stubs, name, stub_type(channel))
        return stubs

    @property
    def external(self) -> tuple[str, ...]:
        return tuple(name for name in ("auction", "trade", "casino") if getattr(self, name) is not None)

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


@dataclass
class BotTable:
    """One table played to its end by bots through the real API.

    The bots' driver is a trusted service of the platform: it joins its seats (JoinTable
    needs a service token; players get their seat tokens from matchmaking) and watches the
    table with `service_token`.
    """

    stub: table_pb2_grpc.TableServiceStub
    mode: str = "classic"
    #: What the host sets on top of the preset (`CreateTableRequest.custom_settings_json`).
    settings: dict[str, object] = field(default_factory=dict)
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
    #: Calls a sub-protocol service could not take (it was down or restarting); each was tried again.
    unavailable: int = 0
    #: Of the table's UNAVAILABLE answers, those that told how long to wait (`retry-after-ms`).
    hinted: int = 0
    #: The table's answers to this driver's commands other than OK, by gRPC status code name.
    status_codes: Counter[str] = field(default_factory=Counter)
    #: Every other call's answers other than OK that the driver got over (created or joined again, a
    #: watch stream reopened, a move at a sub-protocol service refused or tried again), as "where CODE".
    other_codes: Counter[str] = field(default_factory=Counter)
    #: Reads of a sub-protocol service that had not caught up with the table yet (`POLL_S`).
    service_polls: int = 0
    #: Moves that failed for a reason the rules do not explain (each logged, then decided again).
    errors: int = 0
    #: Watch streams that fell silent while the table moved on (each logged, then opened again).
    stale_watches: int = 0
    #: Every command's time from sent to answered, refusals and time-outs included (a command that got
    #: no answer in `deadline_s` counts that long: what its player waited).
    latencies: list[float] = field(default_factory=list)
    #: The clock scale the table runs at, as its events tell (0 until one arrived).
    table_clock_scale: int = 0
    #: Called with (table, event) for every event the replica applies.
    on_event: Callable[[BotTable, Event], None] | None = None
    #: Called with the table each time one of its commands committed (its latency just recorded), or a
    #: sub-protocol service took one of its moves (a bid, a bet, a trade's proposal or answer).
    on_commit: Callable[[BotTable], None] | None = None
    #: Called with the table each time one of its commands was refused or got no answer (its latency
    #: just recorded too): the table did not move on.
    on_failed_command: Callable[[BotTable], None] | None = None
    #: The services that run this table's sub-protocols (the table is created delegating them).
    services: SubProtocolStubs = field(default_factory=SubProtocolStubs)
    #: Events the replica applied, by type name.
    event_counts: Counter[str] = field(default_factory=Counter)
    #: Moves sent to each sub-protocol service: bids and passes, bets, proposals and answers.
    service_moves: dict[str, int] = field(default_factory=lambda: {"auction": 0, "trade": 0, "casino": 0})
    #: Moves bots made outside their seat's turn (hasbro: P10, T6), by command type.
    any_time_moves: Counter[str] = field(default_factory=Counter)
    #: Commands go on one `Play` stream per table (far cheaper per command than unary calls);
    #: False: one `SubmitCommand` call each.
    stream_commands: bool = True
    #: How long a command may wait for its answer before it is given up (and the table re-read).
    deadline_s: float = 30.0
    _play: grpc.aio.StreamStreamCall | None = field(default=None, repr=False)  # the open Play call
    #: Set once the replica holds the table's state (its watch stream's first view came): the table is
    #: open, its calls taken by the service (`monopoly load` frees its opening slot then).
    opened: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    #: This driver's command ids start with it, and its watch stream leaves their batches out
    #: (`WatchTableRequest.leave_out_commands`): the answers bring those events, once.
    command_prefix: str = field(default_factory=lambda: secrets.token_hex(6) + "-")
    #: Events come on two streams (the answers, the watch) in no order between them: those past the
    #: replica's next seq wait here for the ones before them.
    _ahead: dict[int, common_pb2.Envelope] = field(default_factory=dict, repr=False)
    #: A service token (`auth.service_token`): JoinTable and WatchTable take it.
    service_token: str = field(default_factory=bot_service_token)

    async def create(self) -> str:
        """Open the table: one CreateTable, which gives the seats' tokens too. Its request id makes it
        safe to ask again, so a call that did not get through (RETRIED: CANCELLED is a call the
        service's gRPC core gave up on before a handler took it) is made again, up to JOIN_ATTEMPTS
        times, each wait twice the last, and never makes a second table."""
        names = [f"{self.bots}-{i}" for i in range(self.players)]
        request = table_pb2.CreateTableRequest(
            mode=self.mode,
            players=names,
            custom_settings_json=json.dumps(self.settings) if self.settings else "",
            seed=self.seed,
            clock_scale=self.clock_scale,
            external=list(self.services.external),
            seat_tokens=True,  # one call opens the table: no JoinTable per seat
            request_id=secrets.token_hex(12),
        )
        metadata = (("authorization", f"Bearer {self.service_token}"),)  # the seats' tokens are a service's to ask
        reply = await self._asked_again(
            lambda: self.stub.CreateTable(request, timeout=self.deadline_s, metadata=metadata)
        )
        self.table_id = reply.table_id
        for seat, token in enumerate(reply.seat_tokens):
            self.tokens[seat] = token
        for seat in range(len(reply.seat_tokens), self.players):  # a table service from before seat_tokens
            self.tokens[seat] = await self._join(seat)
        return self.table_id

    async def _join(self, seat: int) -> str:
        """A seat's token. JoinTable gives the same token every time, so a call that did not get
        through (RETRIED: thousands of tables forming at once saw calls end CANCELLED before the
        service handled them) is made again, up to JOIN_ATTEMPTS times, each wait twice the last."""
        request = table_pb2.JoinTableRequest(table_id=self.table_id, seat=seat, service_token=self.service_token)
        joined = await self._asked_again(lambda: self.stub.JoinTable(request, timeout=self.deadline_s))
        return str(joined.seat_token)

    async def _asked_again(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """`call`'s answer; a call that did not get through (RETRIED) made again, up to JOIN_ATTEMPTS
        times in all. Only for calls that give the same answer every time (JoinTable, CreateTable with
        its request id)."""
        attempts = 1
        while True:
            try:
                return await call()
            except grpc.aio.AioRpcError as exc:
                self.other_codes[f"opening {exc.code().name}"] += 1
                if exc.code() not in RETRIED or attempts >= JOIN_ATTEMPTS:
                    raise
                self.unavailable += 1
                await asyncio.sleep(retry_after(exc) * 2 ** (attempts - 1))  # 0.25 s, then twice as long each time
                attempts += 1

    async def play(self) -> TableState:
        """Follow the table and act for its seats until the game ends."""
        self._stopped = False
        self._bots = {s: make_bot(self.bots, draw(self.seed or 1, 1000 + s)) for s in self.tokens}
        self._acting: asyncio.Task[None] | None = None
        self._heard = asyncio.get_running_loop().time()  # when the watch stream last brought something
        self._stale = False  # the watchdog cancelled the current stream (`_watch_for_silence`)
        stream: Any = None
        watchdog = asyncio.create_task(self._watch_for_silence(lambda: stream))
        watches = 0
        try:
            while self.state is None or not self.state.finished:
                if watches:
                    await asyncio.sleep(POLL_S)  # a stream that ended early is opened again, not in a spin
                watches += 1
                self._stale = False
                # From the replica's seq on: a stream the service dropped (restart, outage) resumes there.
                stream = self.stub.WatchTable(
                    table_pb2.WatchTableRequest(
                        table_id=self.table_id,
                        seat_token=self.service_token,
                        from_seq=self.state.seq if self.state is not None else 0,
                        leave_out_commands=self.command_prefix,  # their answers bring them
                    )
                )
                items = aiter(stream)
                try:
                    async for item in items:
                        self._heard = asyncio.get_running_loop().time()
                        if item.HasField("snapshot"):
                            self._adopt(codec.state_from_data(json.loads(item.snapshot.state_json)))
                            self.opened.set()
                        elif item.HasField("batch"):
                            self._apply(item.batch.events)
                        else:
                            self._apply([item.event])
                        if self.state is not None and self.state.finished:
                            break
                        self._maybe_act()
                except grpc.aio.AioRpcError as exc:
                    self.other_codes[f"watch {exc.code().name}"] += 1
                    if exc.code() not in RETRIED:
                        raise
                    self.unavailable += 1
                    await asyncio.sleep(retry_after(exc))
                    await self._resync()
                    self._maybe_act()
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if not self._stale or (task is not None and task.cancelling()):
                        raise  # this driver was cancelled, not just the silent stream
                    self._stale = False
                finally:
                    if isinstance(items, AsyncGenerator):  # a routed stream's generator: closed here, not by the GC
                        await items.aclose()
        finally:
            self._stopped = True  # first: a decision scheduled meanwhile must not start another move
            watchdog.cancel()
            if stream is not None:
                stream.cancel()
            if self._acting is not None:
                self._acting.cancel()
                with contextlib.suppress(BaseException):
                    await self._acting
            if self._play is not None:
                self._play.cancel()
                self._play = None
            with contextlib.suppress(BaseException):
                await watchdog
        assert self.state is not None
        return self.state

    async def resign(self, patience_s: float = 20.0) -> bool:
        """Leave the game with every seat of this driver still playing (R3: at any time, in any
        phase, bankrupt to the bank), so a table left behind (a load run stopped at its duration)
        ends instead of running on by time-outs; whether it has ended within `patience_s` (the
        seats of another driver may play on). Call it once `play` has returned or been cancelled."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + patience_s
        request = table_pb2.GetTableRequest(table_id=self.table_id)
        while True:
            view = await self.stub.GetTable(request, timeout=self.deadline_s)
            if view.finished:
                return True
            state = codec.state_from_data(json.loads(view.state_json))
            for seat in [s for s in self.tokens if not state.players[s].bankrupt]:
                try:
                    reply = await self.stub.SubmitCommand(
                        table_pb2.SubmitCommandRequest(
                            table_id=self.table_id,
                            command_id=uuid.uuid4().hex,
                            seat_token=self.tokens[seat],
                            command=command_to_proto(Leave(seat)),
                        ),
                        timeout=self.deadline_s,
                    )
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED):
                        raise
                    continue  # the game ended meanwhile, or the seat is out already: read again
                if any(e.type == "GameEnded" for e in reply.events):
                    return True
            if loop.time() >= give_up:
                return False
            await asyncio.sleep(RESIGN_POLL_S)

    async def _watch_for_silence(self, current: Callable[[], Any]) -> None:
        """Reopen a watch stream that fell silent while the table moved on (its server lost track of it,
        or a connection died unnoticed): every WATCH_SILENCE_S without an item (or an answer), the
        table's seq is read (GetTable); ahead of the replica's, the stream is cancelled and `play`
        opens it again. Events that waited a whole period for one before them make it re-read the
        table (`_resync`)."""
        loop = asyncio.get_running_loop()
        gap: int | None = None  # the first seq waiting ahead of the replica at the last look
        while True:
            await asyncio.sleep(WATCH_SILENCE_S)
            if self.state is not None and self._ahead and min(self._ahead) == gap:
                # The same events waited a whole period for one before them (an answer lost with its
                # stream, its batch left out of the watch): read the table.
                await self._resync()
                self._maybe_act()
            gap = min(self._ahead) if self._ahead else None
            if self.state is None or loop.time() - self._heard < WATCH_SILENCE_S:
                continue
            try:
                request = table_pb2.GetTableRequest(table_id=self.table_id, without_state=True)  # its seq only
                view = await self.stub.GetTable(request, timeout=self.deadline_s)
            except grpc.aio.AioRpcError:
                continue
            stream = current()
            if view.seq > self.state.seq and loop.time() - self._heard >= WATCH_SILENCE_S and stream is not None:
                self.stale_watches += 1
                log.warning(
                    "table %s: the watch stream was silent %.0f s while the table went from seq %d to %d; "
                    "opening it again",
                    self.table_id,
                    loop.time() - self._heard,
                    self.state.seq,
                    view.seq,
                )
                self._stale = True
                self._heard = loop.time()
                stream.cancel()

    def _apply(self, envelopes: Sequence[common_pb2.Envelope]) -> None:
        """Bring the replica up to date, in seq order: events it already has are skipped, and one
        that came before those ahead of it (the watch stream is ahead of an answer still on its
        way) waits for them. A gap that never fills (an answer lost with its stream) is closed by
        the re-read that the lost answer causes (`_resync`)."""
        state = self.state
        assert state is not None
        ahead = self._ahead
        for env in envelopes:
            if env.seq > state.seq:
                ahead[env.seq] = env
        while state.seq + 1 in ahead:
            env = ahead.pop(state.seq + 1)
            if env.occurred_at.clock_scale:
                self.table_clock_scale = env.occurred_at.clock_scale
            event = event_from_proto(env.payload)
            evolve(state, event)
            self.event_counts[type(event).__name__] += 1
            if self.on_event is not None:
                self.on_event(self, event)

    def _adopt(self, state: TableState) -> None:
        """Take the table's state as read (a first view, a re-read): what waited for it is applied,
        what it already holds dropped."""
        self.state = state
        self._ahead = {seq: env for seq, env in self._ahead.items() if seq > state.seq}
        self._apply(())

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
        if state.phase is Phase.AUCTION and "auction" in state.config.external:
            assert state.auction is not None
            move = functools.partial(self._bid_at_service, state.auction.auction_id, state.seq)
            self._spawn(move, "a bid", seat, state.seq)
        elif (command := self._any_time_move(state)) is not None:
            self._spawn(
                functools.partial(self._act_any_time, command, state.seq),
                type(command).__name__,
                command.seat,
                state.seq,
            )
        elif seat in self._bots:
            self._spawn(functools.partial(self._act, self._bots[seat], seat, state.seq), "a move", seat, state.seq)

    def _spawn(self, move: Callable[[], Coroutine[Any, Any, None]], what: str, seat: int, seq: int) -> None:
        """Run a bot's move as the one acting task, its errors handled there (`_guarded`). The move's
        coroutine is made inside the task: a task cancelled before it ran leaves none never awaited."""
        self._acting = asyncio.create_task(self._guarded(move, what, seat, seq))

    async def _guarded(self, move: Callable[[], Coroutine[Any, Any, None]], what: str, seat: int, seq: int) -> None:
        """Await a move; an error the rules do not explain is logged with its context, counted, and
        followed by a pause before the bots decide again (no task is left with an unseen exception)."""
        try:
            await move()
        except asyncio.CancelledError:
            raise
        except Exception:
            self.errors += 1
            log.exception("table %s: %s for seat %d at seq %d failed; deciding again", self.table_id, what, seat, seq)
            await asyncio.sleep(RETRY_S)
        if not self._stopped:
            asyncio.get_running_loop().call_soon(self._maybe_act)

    def _any_time_move(self, state: TableState) -> Command | None:
        """P10, T6 (hasbro): the first move a bot of a seat not to act wants to make now, if any."""
        cfg = state.config
        if not (cfg.manage_any_time or cfg.trade.any_time):
            return None
        for seat, bot in self._bots.items():
            if seat == state.actor:
                continue
            any_time = getattr(bot, "any_time", None)  # a bot that acts only on its turn has none
            command = any_time(state, seat) if any_time is not None else None
            if command is not None:
                return command  # type: ignore[no-any-return]
        return None

    async def _act_any_time(self, command: Command, seq: int) -> None:
        """Send a move made outside the seat's turn: to the trade service (T6) or the table."""
        assert self.state is not None
        if self.think_s:
            await asyncio.sleep(self.think_s)
            if self.state.seq != seq:
                asyncio.get_running_loop().call_soon(self._maybe_act)
                return  # the table moved on: decide again
        self.any_time_moves[type(command).__name__] += 1
        if isinstance(command, ProposeTrade) and "trade" in self.state.config.external:
            await self._at_service(self._trade_at_service(command))
        else:
            await self._submit(command, command.seat, seq)

    async def _act(self, bot: Bot, seat: int, seq: int) -> None:
        assert self.state is not None
        if self.think_s:
            await asyncio.sleep(self.think_s)
            if self.state.seq != seq:
                asyncio.get_running_loop().call_soon(self._maybe_act)
                return  # the table moved on while the bot thought: decide again
        command = bot.choose(self.state, seat)
        external = self.state.config.external
        if isinstance(command, (PlaceBet, DeclineBet)) and "casino" in external:
            await self._at_service(self._bet_at_service(command, seq))
        elif isinstance(command, ProposeTrade) and "trade" in external:
            await self._at_service(self._trade_at_service(command))
        else:
            await self._submit(command, seat, seq)

    async def _at_service(self, move: Awaitable[None]) -> None:
        try:
            await move
        except grpc.aio.AioRpcError as exc:
            self.other_codes[f"service {exc.code().name}"] += 1
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                self.unavailable += 1  # the service is restarting: try again shortly
                await asyncio.sleep(RETRY_S)
            elif exc.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
                self.refused += 1  # refused by the rules there (a stale trade, a bet that timed out)
            else:
                raise
        finally:
            asyncio.get_running_loop().call_soon(self._maybe_act)

    async def _send(self, request: table_pb2.SubmitCommandRequest) -> table_pb2.SubmitCommandResponse:
        """SubmitCommand, on the table's `Play` stream (opened on first use) unless `stream_commands`
        is off. A refusal raises the `AioRpcError` the unary call would have (code, details, the
        rule ID in the trailing metadata), so callers handle both alike."""
        if not self.stream_commands:
            answer: table_pb2.SubmitCommandResponse = await self.stub.SubmitCommand(request, timeout=self.deadline_s)
            return answer
        if self._play is None:
            self._play = self.stub.Play()
        try:
            await self._play.write(request)
            reply: table_pb2.PlayResponse = await asyncio.wait_for(self._play.read(), self.deadline_s)
        except BaseException:
            self._play.cancel()  # a stream in an unknown state: the next command opens a new one
            self._play = None
            raise
        if reply is grpc.aio.EOF:
            self._play = None
            raise ConnectionError(f"table {self.table_id}: the Play stream ended")
        if reply.HasField("refused"):
            refusal = reply.refused
            trailing = grpc.aio.Metadata()
            if refusal.rule_id:
                trailing.add("rule-id", refusal.rule_id)
            if refusal.retry_after_ms:
                trailing.add("retry-after-ms", str(refusal.retry_after_ms))  # what retry_after() reads
            raise grpc.aio.AioRpcError(
                grpc.StatusCode[refusal.code], grpc.aio.Metadata(), trailing, details=refusal.message
            )
        return reply.answer

    async def _submit(self, command: Command, seat: int, seq: int) -> None:
        request = table_pb2.SubmitCommandRequest(
            table_id=self.table_id,
            command_id=self.command_prefix + uuid.uuid4().hex,
            seat_token=self.tokens[seat],
            command=command_to_proto(command),
            expected_seq=seq,
        )
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            reply = await self._send(request)
            self.latencies.append(loop.time() - started)
            self.commands += 1
            if self.on_commit is not None:
                self.on_commit(self)
            self._heard = loop.time()  # the table is heard from: its watch stream may be quiet meanwhile
            self._apply(reply.events)
        except grpc.aio.AioRpcError as exc:
            self._failed_command(loop.time() - started)
            self.status_codes[exc.code().name] += 1
            if exc.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
                self.refused += 1  # the table moved on (a timer fired) before the command arrived
                if exc.code() == grpc.StatusCode.ABORTED and self.state is not None and self.state.seq == seq:
                    await self._resync()  # the replica is not where the table is: read it, decide again
            elif exc.code() in RETRIED:
                self.unavailable += 1  # Postgres or the service away: wait as told, re-read, decide again
                if retry_hint_ms(exc) is not None:
                    self.hinted += 1
                await asyncio.sleep(retry_after(exc))
                await self._resync()
            else:
                raise
        except (TimeoutError, ConnectionError) as exc:  # no answer in time (the service stalled) or the stream ended
            self._failed_command(loop.time() - started)
            self.status_codes["DEADLINE_EXCEEDED" if isinstance(exc, TimeoutError) else "STREAM_ENDED"] += 1
            self.unavailable += 1
            await self._resync()
        finally:
            asyncio.get_running_loop().call_soon(self._maybe_act)

    def _moved_at_service(self, service: str) -> None:
        """A move taken by a sub-protocol service: the table's game moves on there (`on_commit`)."""
        self.service_moves[service] += 1
        if self.on_commit is not None:
            self.on_commit(self)

    def _failed_command(self, seconds: float) -> None:
        self.latencies.append(seconds)
        if self.on_failed_command is not None:
            self.on_failed_command(self)

    async def _resync(self) -> None:
        """Take the table's state from GetTable when the replica is not at the same seq (best effort:
        the watch stream brings it up to date otherwise)."""
        try:
            view = await self.stub.GetTable(table_pb2.GetTableRequest(table_id=self.table_id), timeout=self.deadline_s)
        except grpc.aio.AioRpcError:
            return
        if self.state is None or view.seq != self.state.seq:
            self._adopt(codec.state_from_data(json.loads(view.state_json)))

    # -- sub-protocols run by services ---------------------------------------------

    async def _bid_at_service(self, auction_id: int, seq: int) -> None:
        """Bid for whichever bot seat the auction service waits for, until the auction is settled there."""
        try:
            await self._bid_until_settled(auction_id, seq)
        finally:
            asyncio.get_running_loop().call_soon(self._maybe_act)

    async def _bid_until_settled(self, auction_id: int, seq: int) -> None:
        stub = self.services.auction
        assert stub is not None and self.state is not None
        request = auction_pb2.GetAuctionRequest(table_id=self.table_id, auction_id=auction_id)
        view: auction_pb2.AuctionView | None = None  # the auction as the last answer showed it
        poll = Poller(self)
        while not self._stopped and self.state.seq == seq:
            try:
                if view is None:
                    view = await stub.GetAuction(request, timeout=30)
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.UNAVAILABLE:  # restarting
                    self.other_codes["auction UNAVAILABLE"] += 1
                    self.unavailable += 1
                    await asyncio.sleep(RETRY_S)
                    continue
                if exc.code() != grpc.StatusCode.NOT_FOUND:  # NOT_FOUND: the service has not opened it yet
                    raise
                await poll.wait()
                continue
            if view.status != "open" or view.bidder not in self._bots:
                view = None
                await poll.wait()  # settled there (the table's events follow), or not our bidder
                continue
            poll.reset()
            seat = view.bidder
            if self.think_s:
                await asyncio.sleep(self.think_s)
            local = self.state.copy()
            auction = local.auction
            if self._stopped or self.state.seq != seq or auction is None or auction.auction_id != auction_id:
                return  # settled meanwhile (or the service restarted it): the table's events say what follows
            auction.turn = list(view.bidders).index(seat)
            auction.out = list(view.passed)
            auction.high_bid, auction.high_bidder = view.high_bid, view.high_bidder
            move = self._bots[seat].choose(local, seat)
            try:
                if isinstance(move, Bid):
                    bid = auction_pb2.PlaceBidRequest(
                        table_id=self.table_id,
                        auction_id=auction_id,
                        seat=seat,
                        amount=move.amount,
                        seat_token=self.tokens[seat],
                    )
                    view = await stub.PlaceBid(bid, timeout=30)
                else:
                    assert isinstance(move, PassBid), move
                    passing = auction_pb2.PassRequest(
                        table_id=self.table_id, auction_id=auction_id, seat=seat, seat_token=self.tokens[seat]
                    )
                    view = await stub.Pass(passing, timeout=30)
                self._moved_at_service("auction")
            except grpc.aio.AioRpcError as exc:
                view = None
                self.other_codes[f"auction {exc.code().name}"] += 1
                if exc.code() == grpc.StatusCode.UNAVAILABLE:
                    self.unavailable += 1
                    await asyncio.sleep(RETRY_S)
                elif exc.code() == grpc.StatusCode.FAILED_PRECONDITION:  # a time-out passed for the bidder first
                    self.refused += 1
                else:
                    raise

    async def _bet_at_service(self, command: PlaceBet | DeclineBet, seq: int) -> None:
        stub = self.services.casino
        assert stub is not None and self.state is not None
        seat = command.seat
        poll = Poller(self)
        while True:  # until the casino service has opened the bet the table announced
            if self._stopped or self.state.seq != seq:
                return  # the table moved on (the bet was settled)
            try:
                bet = await stub.GetBet(casino_pb2.GetBetRequest(table_id=self.table_id), timeout=30)
                if bet.status == "open" and bet.seat == seat:
                    break
            except grpc.aio.AioRpcError as exc:
                if exc.code() not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE):
                    raise
            await poll.wait()
        if isinstance(command, PlaceBet):
            request = casino_pb2.PlaceBetRequest(
                table_id=self.table_id,
                seat=seat,
                numbers=list(command.numbers),
                seat_token=self.tokens[seat],
                bet_id=bet.bet_id,
            )
            await stub.PlaceBet(request, timeout=30)
        else:
            decline = casino_pb2.DeclineBetRequest(
                table_id=self.table_id, seat=seat, seat_token=self.tokens[seat], bet_id=bet.bet_id
            )
            await stub.Decline(decline, timeout=30)
        self._moved_at_service("casino")

    async def _trade_at_service(self, command: ProposeTrade) -> None:
        """Propose at the trade service, then let the counterparty's bot answer there.

        The table learns of a trade only when it executes, so the replica counts this
        turn's proposal itself (T1) and shows the counterparty the offer as the table
        would have.
        """
        stub = self.services.trade
        assert stub is not None and self.state is not None
        state = self.state
        state.proposals += 1  # T1, as the trade service counts it
        terms = trade_terms(command)
        proposal = trade_pb2.ProposeTradeRequest(
            table_id=self.table_id, seat=command.seat, seat_token=self.tokens[command.seat], terms=terms
        )
        view = await stub.ProposeTrade(proposal, timeout=30)
        self._moved_at_service("trade")
        other = command.counterparty
        if other not in self._bots:
            return
        local = state.copy()
        local.trade = TradeOffer(
            int(view.trade_id),
            command.seat,
            other,
            command.give_cash,
            tuple(command.give_squares),
            command.take_cash,
            tuple(command.take_squares),
            tuple(command.give_cards),
            tuple(command.take_cards),
        )
        answer = self._bots[other].choose(local, other)
        action = trade_pb2.TradeActionRequest(
            table_id=self.table_id, trade_id=view.trade_id, seat=other, seat_token=self.tokens[other]
        )
        if isinstance(answer, AcceptTrade):
            executed = self.event_counts["TradeExecuted"]
            done = await stub.AcceptTrade(action, timeout=30)
            self._moved_at_service("trade")
            if done.status == "executed":  # decide the next move on the state after the trade
                await self._until(lambda: self.event_counts["TradeExecuted"] > executed)
            return
        await stub.DeclineTrade(action, timeout=30)
        self._moved_at_service("trade")

    async def _until(self, seen: Callable[[], bool], timeout: float = 10.0) -> None:
        """Wait until the replica shows what a service just did at the table (its events come by the
        stream, not in the service's answer): a move decided before would be stale."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not seen() and not self._stopped and loop.time() < deadline:
            await asyncio.sleep(CATCH_UP_S)


__all__ = ["BotTable", "SubProtocolStubs", "bot_service_token", "connect", "operator_token", "platform_channel"]
