"""The tables this process runs: one asyncio actor per table serialises its commands.

A command is applied to the table's state, then its events, the table's
progress, the command's answer and the outbox rows (its events, and its
signals for other services) are committed in one transaction; only then is
it answered and shown to watchers. The clock is fed as `Tick`s: before every
command (game time = wall time since the table's epoch x its scale) and when
the next deadline in the state comes due.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from prometheus_client import Counter, Gauge, Histogram

from engine import (
    EXTERNAL_COMMANDS,
    SUB_PROTOCOLS,
    SYSTEM_COMMANDS,
    Command,
    Event,
    RuleViolation,
    TableState,
    Tick,
    apply,
    codec,
    evolve,
    new_game,
    next_deadline,
    preset,
    replay,
)
from engine.config import PRESET_SETTINGS, rule_card
from monopoly.v1 import common_pb2, table_pb2
from servicekit import auth, bus, signals
from servicekit.errors import BadRequest, Forbidden, NotFound, Unavailable
from servicekit.wire import envelope

from . import store

log = logging.getLogger(__name__)

COMMANDS = Counter("table_commands_total", "Commands by type and outcome", ["type", "outcome"])
COMMAND_SECONDS = Histogram(
    "table_command_seconds",
    "SubmitCommand latency, decided and committed",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)
EVENTS = Counter("table_events_total", "Events committed")
ACTIVE_TABLES = Gauge("table_active_tables", "Tables loaded and not finished")

#: A command moves the table's clock only when it is this much (real ms) behind: a ClockAdvanced
#: event per command would double the events for nothing; timers still fire on time.
CLOCK_RESOLUTION_MS = 250
#: Answers kept in memory per table for retried command ids (older ones are read from Postgres).
RECENT_ANSWERS = 64


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(eq=False)
class TableActor:
    tables: Tables
    table_id: str
    state: TableState
    epoch_ms: int
    scale: int
    snapshot_seq: int
    queue: asyncio.Queue[tuple[Any, ...] | None] = field(default_factory=asyncio.Queue)
    watchers: set[asyncio.Queue[list[common_pb2.Envelope] | None]] = field(default_factory=set)
    recent: OrderedDict[str, bytes] = field(default_factory=OrderedDict)
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"table-{self.table_id}")
        self._arm()

    async def stop(self) -> None:
        if self.timer:
            self.timer.cancel()
        self.queue.put_nowait(None)
        if self.task:
            await self.task

    def game_now(self) -> int:
        return max(self.state.clock, (wall_ms() - self.epoch_ms) * self.scale)

    async def submit(self, command: Command | None, command_id: str = "", seat: int | None = None) -> bytes:
        """Queue a command (None: just the clock) and wait for its committed answer."""
        done: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((command, command_id, seat, done))
        return await done

    def subscribe(self) -> asyncio.Queue[list[common_pb2.Envelope] | None]:
        q: asyncio.Queue[list[common_pb2.Envelope] | None] = asyncio.Queue()
        self.watchers.add(q)
        return q

    def unsubscribe(self, q: asyncio.Queue[list[common_pb2.Envelope] | None]) -> None:
        self.watchers.discard(q)

    async def _run(self) -> None:
        while (item := await self.queue.get()) is not None:
            command, command_id, seat, done = item
            try:
                answer = await self._handle(command, command_id, seat)
            except Exception as exc:  # answered to the caller; the actor goes on
                if done is not None and not done.done():
                    done.set_exception(exc)
            else:
                if done is not None and not done.done():
                    done.set_result(answer)
            self._arm()

    def _arm(self) -> None:
        """Wake the actor when the state's next deadline comes due (E1, E2, E5)."""
        if self.timer:
            self.timer.cancel()
            self.timer = None
        due = None if self.state.finished else next_deadline(self.state)
        if due is None:
            return
        wall_due_ms = self.epoch_ms + due / self.scale
        delay = max(0.0, (wall_due_ms - wall_ms()) / 1000) + 0.002
        self.timer = asyncio.get_running_loop().call_later(delay, self.queue.put_nowait, (None, "", None, None))

    async def _handle(self, command: Command | None, command_id: str, seat: int | None) -> bytes:
        kind = type(command).__name__ if command is not None else "Tick"
        started = time.perf_counter()
        if command_id and (cached := self.recent.get(command_id)) is not None:
            COMMANDS.labels(kind, "retried").inc()
            return cached
        if command is not None and seat is not None and command.seat != seat:  # seat None: the platform
            COMMANDS.labels(kind, "forbidden").inc()
            raise Forbidden(f"this token acts for seat {seat}, not seat {command.seat}")
        state = self.state
        first_seq = state.seq + 1
        events: list[Event] = []
        now = self.game_now()
        due = next_deadline(state)
        if now - state.clock >= CLOCK_RESOLUTION_MS * self.scale or (due is not None and due <= now):
            events += apply(state, Tick(now))
        violation: RuleViolation | None = None
        if command is not None:
            try:
                events += apply(state, command)
            except RuleViolation as exc:
                violation = exc
        answer = b""
        if events:
            try:
                answer = await self._commit(first_seq, events, "" if violation else command_id)
            except asyncpg.UniqueViolationError:
                # A retry of a command answered before this process's memory: undo and answer as then.
                self.state = await self.tables.load_state(self.table_id)
                async with self.tables.pool.acquire() as conn:
                    first = await store.answered(conn, self.table_id, command_id)
                if first is None:
                    raise
                COMMANDS.labels(kind, "retried").inc()
                return first
        if violation is not None:
            if command_id:  # a retry from before this process's memory is answered as the first time
                async with self.tables.pool.acquire() as conn:
                    first = await store.answered(conn, self.table_id, command_id)
                if first is not None:
                    COMMANDS.labels(kind, "retried").inc()
                    return first
            COMMANDS.labels(kind, "refused").inc()
            raise violation
        COMMANDS.labels(kind, "ok").inc()
        COMMAND_SECONDS.observe(time.perf_counter() - started)
        return answer

    async def _commit(self, first_seq: int, events: list[Event], command_id: str) -> bytes:
        state = self.state
        now_wall = wall_ms()
        envelopes = [
            envelope(self.table_id, first_seq + i, e, state.clock, self.scale, now_wall) for i, e in enumerate(events)
        ]
        answer = table_pb2.SubmitCommandResponse(
            first_seq=first_seq, last_seq=state.seq, events=envelopes
        ).SerializeToString()
        batch = common_pb2.EventBatch(events=envelopes).SerializeToString()
        # every event for watchers and analytics, then what other services act on (servicekit.signals)
        outbox = [(bus.table_subject(self.table_id), f"{self.table_id}:{first_seq}", batch), *signals.split(envelopes)]
        snapshot = state.finished or state.seq - self.snapshot_seq >= self.tables.snapshot_every
        try:
            async with self.tables.pool.acquire() as conn:
                await store.append(
                    conn,
                    self.table_id,
                    first_seq,
                    events,
                    state.clock,
                    state,
                    snapshot,
                    outbox,
                    command_id or None,
                    answer if command_id else None,
                )
        except asyncpg.UniqueViolationError:
            raise
        except (OSError, asyncpg.PostgresError) as exc:
            log.exception("table %s: commit failed; reloading from Postgres", self.table_id)
            self.state = await self.tables.load_state(self.table_id)
            raise Unavailable(f"the table could not be saved ({type(exc).__name__}); nothing changed") from exc
        if snapshot:
            self.snapshot_seq = state.seq
        EVENTS.inc(len(events))
        if command_id:
            self.recent[command_id] = answer
            if len(self.recent) > RECENT_ANSWERS:
                self.recent.popitem(last=False)
        for q in self.watchers:
            q.put_nowait(envelopes)
        self.tables.relay_wake()
        if state.finished:
            for q in self.watchers:
                q.put_nowait(None)
            ACTIVE_TABLES.dec()
        return answer


class Tables:
    """Every table this process owns, loaded on demand and recovered at start."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        snapshot_every: int = 500,
        default_scale: int = 1,
        token_secret: str = auth.DEV_TOKEN_SECRET,
    ) -> None:
        self.pool = pool
        self.token_secret = token_secret
        self.snapshot_every = snapshot_every
        self.default_scale = default_scale
        self.actors: dict[str, TableActor] = {}
        self._loading: dict[str, asyncio.Task[TableActor]] = {}
        self.relay_wake = lambda: None

    async def create(
        self,
        mode: str,
        players: list[str],
        seed: int,
        settings: dict[str, Any],
        scale: int,
        external: tuple[str, ...] = (),
    ) -> tuple[str, int, str]:
        allowed = PRESET_SETTINGS.get(mode, frozenset())
        if settings and not allowed:
            with_settings = ", ".join(sorted(PRESET_SETTINGS))
            raise BadRequest(f"settings are for {with_settings} tables only, not {mode!r}")
        unknown = sorted(set(settings) - allowed)
        if unknown:
            raise BadRequest(
                f"unknown {mode} setting(s): {', '.join(unknown)}; a host sets {', '.join(sorted(allowed))}"
            )
        unknown = sorted(set(external) - set(SUB_PROTOCOLS))
        if unknown:
            raise BadRequest(
                f"external: unknown sub-protocol(s) {', '.join(unknown)}; one of {', '.join(SUB_PROTOCOLS)}"
            )
        try:
            config = preset(mode, **settings)
        except (TypeError, ValueError) as exc:
            raise BadRequest(str(exc)) from None
        if external:
            config = config.with_changes(external=tuple(p for p in SUB_PROTOCOLS if p in external))
        if not players or any(not isinstance(p, str) or not p.strip() or len(p) > 64 for p in players):
            raise BadRequest("players: one non-empty name (at most 64 characters) per seat")
        if scale < 0:
            raise BadRequest("clock_scale must be positive")
        seed = seed or secrets.randbits(63)
        try:
            state, events = new_game(config, players, seed)
        except RuleViolation as exc:
            raise BadRequest(str(exc)) from None
        table_id = secrets.token_hex(8)
        epoch = wall_ms()
        scale = scale or self.default_scale
        actor = TableActor(self, table_id, state, epoch, scale, snapshot_seq=0)
        async with self.pool.acquire() as conn, conn.transaction():
            await store.create_table(conn, table_id, mode, players, seed, epoch, scale)
        await actor._commit(1, events, "")
        self.actors[table_id] = actor
        ACTIVE_TABLES.inc()
        actor.start()
        return table_id, state.seq, rule_card(config)

    async def get(self, table_id: str) -> TableActor:
        actor = self.actors.get(table_id)
        if actor is not None:
            return actor
        task = self._loading.get(table_id)
        if task is None:
            task = self._loading[table_id] = asyncio.create_task(self._load(table_id))
        try:
            return await task
        finally:
            self._loading.pop(table_id, None)

    async def _load(self, table_id: str) -> TableActor:
        async with self.pool.acquire() as conn:
            row = await store.table(conn, table_id)
        if row is None:
            raise NotFound(f"no table {table_id!r}")
        state = await self.load_state(table_id, row)
        actor = TableActor(self, table_id, state, row.clock_epoch_ms, row.clock_scale, row.snapshot_seq)
        self.actors[table_id] = actor
        if not state.finished:
            ACTIVE_TABLES.inc()
        actor.start()
        return actor

    async def load_state(self, table_id: str, row: store.TableRow | None = None) -> TableState:
        """The table's state from its latest snapshot and the events after it."""
        async with self.pool.acquire() as conn:
            if row is None:
                row = await store.table(conn, table_id)
                if row is None:
                    raise NotFound(f"no table {table_id!r}")
            events = await store.events_after(conn, table_id, row.snapshot_seq if row.snapshot else 0)
        if row.snapshot is None:
            return replay(events)
        state = codec.state_from_data(row.snapshot)
        for event in events:
            evolve(state, event)
        return state

    async def recover(self) -> int:
        """Load every unfinished table and re-arm its timers (after a crash or a restart)."""
        async with self.pool.acquire() as conn:
            rows = await store.unfinished(conn)
        resumed = 0
        for row in rows:
            if row.table_id in self.actors:
                continue
            try:
                await self.get(row.table_id)
            except Exception:  # one unreadable table must not keep the others from running
                log.exception("table %s could not be resumed; it stays in Postgres untouched", row.table_id)
                continue
            resumed += 1
        return resumed

    async def stop(self) -> None:
        for actor in list(self.actors.values()):
            await actor.stop()

    async def join(self, table_id: str, seat: int) -> str:
        """A signed token for `seat`: the same token every time (its expiry counts from the table's creation)."""
        actor = await self.get(table_id)
        if not 0 <= seat < len(actor.state.players):
            raise BadRequest(f"seat must be 0 to {len(actor.state.players) - 1}")
        name = actor.state.players[seat].name
        return auth.issue(self.token_secret, table_id, seat, name, now=actor.epoch_ms // 1000)

    def authorize(self, actor: TableActor, claims: auth.Claims, command: Command) -> int | None:
        """The seat a command may act for (None: a service's result), or refuse it.

        `claims` are the call's token, already verified (`auth.current_claims()`). A player's
        token acts for its seat; the results of sub-protocols run by services
        (`SYSTEM_COMMANDS`) come only with a service token; a bid, bet or proposal for a
        sub-protocol this table delegates goes to that service, not here.
        """
        claims.require_table(actor.table_id)
        kind = type(command)
        if kind in SYSTEM_COMMANDS:
            claims.require_service()
            return None
        if claims.role != "player":
            raise Forbidden(f"a {claims.role} token cannot act for a seat")
        for sub_protocol in actor.state.config.external:
            if kind in EXTERNAL_COMMANDS[sub_protocol]:
                rule = {"auction": "A1", "trade": "T1", "casino": "K1"}[sub_protocol]
                raise RuleViolation(
                    rule, f"this table's {sub_protocol} runs in the {sub_protocol} service: send it there"
                )
        return claims.seat
