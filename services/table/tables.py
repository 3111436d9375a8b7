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
import dataclasses
import functools
import hashlib
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import asyncpg
from prometheus_client import Counter, Gauge, Histogram

from engine import (
    EXTERNAL_COMMANDS,
    SUB_PROTOCOLS,
    SYSTEM_COMMANDS,
    Command,
    Event,
    ExecuteTrade,
    RuleViolation,
    SettleAuction,
    SettleBet,
    TableConfig,
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
from servicekit import auth, bus, logs, settings, signals, validate
from servicekit.errors import (
    BadRequest,
    Conflict,
    Corrupt,
    Elsewhere,
    Exhausted,
    Forbidden,
    NotFound,
    Stale,
    Unavailable,
    unreachable,
)
from servicekit.wire import envelope, event_batch, public_envelope, repeated, stored_event

from . import store
from .commits import GroupCommitter, NotSent, OutcomeUnknown
from .idle import LOADED, Idle
from .leases import Leases, fenced

log = logging.getLogger(__name__)

#: The service whose token alone may send each sub-protocol's result (`auth.service_token(secret, name)`).
RESULT_SENDERS: dict[type, str] = {SettleAuction: "auction", SettleBet: "casino", ExecuteTrade: "trade"}
#: The token name a table instance sends a result on with (to the instance that runs the table).
FORWARDER = "table"

COMMANDS = Counter("table_commands_total", "Commands by type and outcome", ["type", "outcome"])
COMMAND_SECONDS = Histogram(
    "table_command_seconds",
    "SubmitCommand latency, decided and committed",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)
COMMIT_SECONDS = Histogram(
    "table_commit_seconds",
    "A command's Postgres transaction: events, progress, answer and outbox rows",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)
EVENTS = Counter("table_events_total", "Events committed")
ACTIVE_TABLES = Gauge("table_active_tables", "Tables loaded and not finished")
COMMIT_UNSURE = Counter("table_commit_unsure_total", "Commits whose connection was lost before Postgres answered")
STALLS = Counter(
    "table_stalls_total", "Stalls taken off the tables' clocks (E2): a commit or the event loop held up", ["kind"]
)
COMMITS_FENCED = Counter(
    "table_commits_fenced_total", "Commits refused because this instance no longer held the table's partition"
)

#: A command moves the table's clock only when it is this much game time (ms) behind: a ClockAdvanced
#: event per command would double the events for nothing. Timers set by the command start from the
#: table's clock, so this bounds how much of one a command can lose: game time, whatever the clock's
#: scale (in real ms it was 25 game seconds of a 20 s bid at scale 100).
CLOCK_RESOLUTION_MS = 250
#: Answers kept in memory per table for retried command ids (older ones are read from Postgres).
RECENT_ANSWERS = 64
#: E6: game seconds per real second at most (0: the service's default; the column is an integer).
MAX_CLOCK_SCALE = 1_000_000
MAX_SEAT_NAME = 64
#: Backoff of a table reading its state back while Postgres is away (doubling up to the maximum).
RESYNC_FIRST_DELAY_S = 0.05
RESYNC_MAX_DELAY_S = 1.0
#: E2: a commit that took longer than this (Postgres stalled: a frozen server, a full disk, a lock), or a
#: pause this long of the service's event loop (the process frozen: SIGSTOP, a VM paused, swapping), is
#: time nobody could act at the table: its clock stands still for it, so the deadlines move on by as much.
#: Shorter waits count as play (a player loses at most this much per command to a slow platform).
STALL_S = 2.0
#: How often the event loop's pauses are looked for (`Tables.watch_stalls`).
STALL_WATCH_S = 0.25


def request_digest(
    mode: str, players: list[str], seed: int, scale: int, external: tuple[str, ...], settings: dict[str, Any]
) -> str:
    """What a CreateTable's request_id is bound to: the request as asked (seed and scale 0: the
    service's choice, so a retry asks the same), canonical JSON, hashed."""
    asked = [mode, players, seed, scale, sorted(external), settings]
    text = json.dumps(asked, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def command_digest(command: Command | None, seat: int | None) -> str:
    """What a command id is bound to: who sent it (a seat, or the platform: None) and the command's content.

    Most commands are a few small numbers repeated all game (Roll(0), EndTurn(2)...): their digests
    are kept by value, since the canonical JSON and its hash cost more than the rest of the command.
    Only all-int commands are kept (`True == 1`, so a bool would share an int's entry)."""
    if command is None:
        return _digest(None, seat)
    cls = type(command)
    names = _COMMAND_FIELDS.get(cls)
    if names is None:
        names = _COMMAND_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    values = tuple(getattr(command, name) for name in names)
    if not all(type(v) is int for v in values):
        return _digest(command, seat)
    key = (cls, seat, values)
    known = _DIGESTS.get(key)
    if known is None:
        if len(_DIGESTS) >= _DIGESTS_KEPT:
            _DIGESTS.clear()
        known = _DIGESTS[key] = _digest(command, seat)
    return known


def _digest(command: Command | None, seat: int | None) -> str:
    who = "platform" if seat is None else f"seat:{seat}"
    body = codec.dumps(codec.command_to_data(command)) if command is not None else "clock"
    return hashlib.sha256(f"{who}\n{body}".encode()).hexdigest()


_COMMAND_FIELDS: dict[type, tuple[str, ...]] = {}
_DIGESTS: dict[tuple[Any, ...], str] = {}
_DIGESTS_KEPT = 4096


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class Prepared:
    """One command's commit before it is written: what the caller is answered, the envelopes, each of
    them serialized (the rows of `table_events`), the outbox rows built from those bytes, whether the
    state is snapshotted, and the envelopes as the watchers get them."""

    answer: bytes
    envelopes: list[common_pb2.Envelope]
    encoded: list[bytes]
    outbox: list[tuple[str, str, bytes]]
    snapshot: bool
    #: The envelopes as clients see them (G10: `wire.public_envelope`), for the watchers.
    public: list[common_pb2.Envelope]


@dataclass(frozen=True, slots=True)
class Request:
    """One item of a table actor's queue: a command (None: just the clock) and who waits for its answer."""

    command: Command | None
    command_id: str = ""
    #: The seat the caller's token acts for (None: the platform).
    seat: int | None = None
    #: Gets the committed answer or the refusal (None: a timer's tick, nobody waits).
    done: asyncio.Future[bytes] | None = None
    #: The seq the caller saw the table at (0: any): another is ABORTED, unless the command id was
    #: answered before (a retry gets its first answer, wherever the table is now).
    expected_seq: int = 0


#: What a timer puts on the queue when a deadline comes due.
CLOCK = Request(None)
#: What a counted stall puts on the queue (E2): saved with the table, nothing applied.
SAVE_STALLS = Request(None)


@dataclass(eq=False)
class TableActor:
    tables: Tables
    table_id: str
    state: TableState
    epoch_ms: int
    scale: int
    snapshot_seq: int
    queue: asyncio.Queue[Request | None] = field(default_factory=asyncio.Queue)
    #: Each watch stream's queue, and the command id prefix whose batches it leaves out ("": none).
    watchers: dict[asyncio.Queue[list[common_pb2.Envelope] | None], str] = field(default_factory=dict)
    #: The latest answers by command id, with the digest of the command each was (`command_digest`).
    recent: OrderedDict[str, tuple[bytes, str]] = field(default_factory=OrderedDict)
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task[None] | None = None
    #: A commit failed on a lost connection: Postgres may hold more than `state` until it is read back.
    unsure: bool = False
    #: When a caller last used the table (monotonic s; `idle`: evicted once idle long enough).
    used: float = float("-inf")
    #: A request is in hand (taken off the queue, not yet answered).
    busy: bool = False
    #: Evicted (`idle`): out of `Tables.actors`, its task ended; a caller holding it goes through `Tables.get`.
    evicted: bool = False
    #: The epoch of this instance's lease on the table's partition when it was loaded (None: no leases).
    lease_epoch: int | None = None
    #: Another instance runs the table now (its lease moved): this state is no longer authoritative.
    moved: bool = False
    #: Wall ms the table's clock has stood still, outages of Postgres while it could not be saved
    #: (`tables.clock_stopped_ms`): game time does not run while nobody can act.
    stopped_ms: int = 0
    #: When the current outage began (wall ms of the first commit that could not be saved, or of the
    #: clean stop of the instance that ran the table before; None: none).
    outage_since: int | None = None
    #: E2: up to when (monotonic s) stalls were counted into `stopped_ms` (`stalled`), and whether that
    #: count is not yet saved with the table.
    stalls_counted_to: float = float("-inf")
    stalls_unsaved: bool = False

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"table-{self.table_id}")
        self._arm()

    async def stop(self) -> None:
        if self.timer:
            self.timer.cancel()
        self.queue.put_nowait(None)
        if self.task:
            await self.task

    def retire(self) -> None:
        """Leave memory (`idle`): no timer, the task ends (nothing is queued or in hand)."""
        self.evicted = True
        if self.timer:
            self.timer.cancel()
            self.timer = None
        self.queue.put_nowait(None)
        if not self.state.finished:
            ACTIVE_TABLES.dec()

    def game_now(self) -> int:
        return max(self.state.clock, (wall_ms() - self.epoch_ms - self.stopped_ms) * self.scale)

    def wall_due_ms(self, due: int) -> float:
        """The wall time (unix ms) at which game time reaches `due`."""
        return self.epoch_ms + self.stopped_ms + due / self.scale

    async def submit(
        self, command: Command | None, command_id: str = "", seat: int | None = None, expected_seq: int = 0
    ) -> bytes:
        """Queue a command (None: just the clock) and wait for its committed answer."""
        if self.moved:
            raise await self.tables.elsewhere(self.table_id)
        if self.evicted:  # evicted since the caller got it: the table's current actor takes it
            return await (await self.tables.get(self.table_id)).submit(command, command_id, seat, expected_seq)
        self.used = time.monotonic()
        if self.unsure:
            if self.queue.empty():  # the actor reads Postgres back now: a table with no timer (its deadline
                self.queue.put_nowait(CLOCK)  # kept by a service) would otherwise refuse every caller for ever
            raise Unavailable("the table is waiting for Postgres; retry with the same command id")
        done: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(Request(command, command_id, seat, done, expected_seq))
        return await done

    def subscribe(self, leave_out: str = "") -> asyncio.Queue[list[common_pb2.Envelope] | None]:
        """A queue of every batch committed from now on, but those of commands whose id starts with
        `leave_out` (the watcher has them from its own answers)."""
        q: asyncio.Queue[list[common_pb2.Envelope] | None] = asyncio.Queue()
        self.used = time.monotonic()
        self.watchers[q] = leave_out
        return q

    def unsubscribe(self, q: asyncio.Queue[list[common_pb2.Envelope] | None]) -> None:
        self.used = time.monotonic()
        self.watchers.pop(q, None)

    async def _run(self) -> None:
        logs.bind(table_id=self.table_id)  # this task's lines name the table (servicekit.logs)
        while (item := await self.queue.get()) is not None:
            done = item.done
            logs.bind(seq=self.state.seq + 1, trace=item.command_id)
            if done is not None and done.done():  # its caller left (a deadline, a closed stream): not applied
                continue
            if item is SAVE_STALLS and not self.stalls_unsaved:
                continue  # saved meanwhile, with another item
            self.busy = True
            try:
                if self.moved:
                    raise await self.tables.elsewhere(self.table_id)
                if self.unsure:  # a commit's outcome is unknown: learn it before anything else
                    await self._resync()
                elif self.stalls_unsaved:  # E2: the clock as this table will be read next, saved first
                    await self._save_stalls()
                answer = (
                    b""
                    if item is SAVE_STALLS
                    else await self._handle(item.command, item.command_id, item.seat, item.expected_seq)
                )
            except Exception as exc:  # answered to the caller; the actor goes on
                if done is not None and not done.done():
                    done.set_exception(exc)
            else:
                if done is not None and not done.done():
                    done.set_result(answer)
            finally:
                self.busy = False
            self._arm()

    def _arm(self) -> None:
        """Wake the actor when the state's next deadline comes due (E1, E2, E5)."""
        if self.timer:
            self.timer.cancel()
            self.timer = None
        due = None if self.state.finished else next_deadline(self.state)
        if due is None:
            return
        delay = max(0.0, (self.wall_due_ms(due) - wall_ms()) / 1000) + 0.002
        self.timer = asyncio.get_running_loop().call_later(delay, self.wake)

    def wake(self) -> None:
        """Queue a tick of the clock (a deadline came due); nobody waits for its answer."""
        self.queue.put_nowait(CLOCK)

    async def _handle(self, command: Command | None, command_id: str, seat: int | None, expected_seq: int = 0) -> bytes:
        kind = type(command).__name__ if command is not None else "Tick"
        started = time.perf_counter()
        digest = command_digest(command, seat) if command_id else ""
        if command_id and (cached := self.recent.get(command_id)) is not None:
            return self._retried(kind, command_id, digest, cached)
        if expected_seq and expected_seq != self.state.seq:
            if command_id and (first := await self._answered(command_id)) is not None:
                return self._retried(kind, command_id, digest, first)  # applied before: its first answer
            COMMANDS.labels(kind, "stale").inc()
            raise Stale(f"the table is at seq {self.state.seq}, not {expected_seq}")
        if command is not None and seat is not None and command.seat != seat:  # seat None: the platform
            COMMANDS.labels(kind, "forbidden").inc()
            raise Forbidden(f"this token acts for seat {seat}, not seat {command.seat}")
        # Decided on a copy: `self.state` stays what Postgres holds until the events are committed.
        state = self.state.copy()
        first_seq = state.seq + 1
        events: list[Event] = []
        now = self.game_now()
        due = next_deadline(state)
        came_due = due is not None and due <= now
        if now - state.clock >= CLOCK_RESOLUTION_MS or came_due:
            events += apply(state, Tick(now))
        violation: RuleViolation | None = None
        if command is not None:
            try:
                events += apply(state, command)
            except RuleViolation as exc:
                violation = exc
                if not came_due:  # a refusal changes nothing: the clock's move alone waits for the next commit
                    events = []
        answer = b""
        if events:
            try:
                answer = await self._commit(state, first_seq, events, "" if violation else command_id, digest)
            except asyncpg.UniqueViolationError:
                # A retry of a command answered before this process's memory (or, never expected, a seq
                # Postgres already has): take Postgres's state and answer as the first time.
                await self._resync()
                first = await self._answered(command_id) if command_id else None
                if first is None:
                    raise Unavailable("the table moved on in Postgres meanwhile; nothing changed") from None
                return self._retried(kind, command_id, digest, first)
        if violation is not None:
            if command_id:  # a retry from before this process's memory is answered as the first time
                first = await self._answered(command_id)
                if first is not None:
                    return self._retried(kind, command_id, digest, first)
            COMMANDS.labels(kind, "refused").inc()
            raise violation
        COMMANDS.labels(kind, "ok").inc()
        COMMAND_SECONDS.observe(time.perf_counter() - started)
        return answer

    def _retried(self, kind: str, command_id: str, digest: str, first: tuple[bytes, str | None]) -> bytes:
        """The first answer to a retried command id, if the retry is the same command from the same
        seat; ALREADY_EXISTS otherwise (an id is bound to what it was first used for)."""
        answer, bound = first
        if bound is not None and bound != digest:
            COMMANDS.labels(kind, "conflict").inc()
            raise Conflict(
                f"command_id {command_id!r} was already used at this table for another command or by another "
                "seat; a retry repeats the same command with the same token, a new command takes a new id"
            )
        COMMANDS.labels(kind, "retried").inc()
        return answer

    async def _answered(self, command_id: str) -> tuple[bytes, str | None] | None:
        async with self.tables.pool.acquire() as conn:
            return await store.answered(conn, self.table_id, command_id)

    def _prepare(self, state: TableState, first_seq: int, events: list[Event], command_id: str) -> Prepared:
        """A commit's answer, envelopes, outbox rows and whether it snapshots the state: each envelope is
        serialized once, and those bytes make the answer, the outbox batches and the stored rows."""
        now_wall = wall_ms()
        envelopes = [
            envelope(self.table_id, first_seq + i, e, state.clock, self.scale, now_wall) for i, e in enumerate(events)
        ]
        encoded = [env.SerializeToString() for env in envelopes]
        # What the caller and the watchers get: the same bytes but for what G10 hides from clients (a
        # shuffled pile's order: a few events a game), which gets a copy of its own.
        public = [public_envelope(env) for env in envelopes]
        shown = [b if p is env else p.SerializeToString() for b, p, env in zip(encoded, public, envelopes, strict=True)]
        head: bytes = table_pb2.SubmitCommandResponse(first_seq=first_seq, last_seq=state.seq).SerializeToString()
        answer = head + repeated(table_pb2.SubmitCommandResponse.EVENTS_FIELD_NUMBER, shown)
        # every event for watchers and analytics, then what other services act on (servicekit.signals)
        outbox = [
            (bus.table_subject(self.table_id), f"{self.table_id}:{first_seq}", event_batch(encoded)),
            *signals.split(envelopes, encoded),
        ]
        snapshot = state.finished or state.seq - self.snapshot_seq >= self.tables.snapshot_every
        return Prepared(answer, envelopes, encoded, outbox, snapshot, public)

    async def _commit(
        self, state: TableState, first_seq: int, events: list[Event], command_id: str, digest: str = ""
    ) -> bytes:
        """Commit `events` (taking `state` from `self.state` to the new one), then adopt `state`.

        A connection refused before the statement was sent: nothing committed, the caller is told
        UNAVAILABLE. A connection lost while it ran: the outcome is unknown, so the actor reads the
        table back on a fresh connection (waiting with backoff while Postgres is away) and answers
        as Postgres decided; meanwhile nothing else is applied and new callers get UNAVAILABLE.
        """
        prepared = self._prepare(state, first_seq, events, command_id)
        answer, snapshot = prepared.answer, prepared.snapshot
        args = store.append_args(
            self.table_id,
            first_seq,
            events,
            prepared.encoded,
            state.clock,
            state,
            snapshot,
            prepared.outbox,
            command_id or None,
            answer if command_id else None,
            digest if command_id else None,
            self.tables.fence(self),
        )
        lost: BaseException | None = None
        started = time.monotonic()
        try:
            await self.tables.committer.append(args)  # with other tables' commits waiting meanwhile
        except NotSent as exc:
            self.unsure = True  # nothing was sent; the next command first waits for Postgres
            self._outage(started)
            raise Unavailable(f"the table could not be saved ({exc}); nothing changed") from exc
        except OutcomeUnknown as exc:
            lost = exc
            self._outage(started)
        except asyncpg.PostgresError as exc:
            if not fenced(exc):
                raise
            raise await self.tables.lost_lease(self) from exc
        if lost is None:
            ended = time.monotonic()
            COMMIT_SECONDS.observe(ended - started)
            if ended - started > STALL_S:  # E2: the table stood still while it waited
                STALLS.labels("commit").inc()
                self.stalled(started, ended)
        if lost is not None:
            log.warning(
                "table %s: connection lost committing seq %d-%d (%s); reading the outcome back",
                self.table_id,
                first_seq,
                state.seq,
                lost,
            )
            COMMIT_UNSURE.inc()
            self.unsure = True
            if not await self._resync(state.seq):
                raise Unavailable(f"the table could not be saved ({type(lost).__name__}); nothing changed") from lost
            state = self.state  # what Postgres holds, replayed: the decided state
        self._committed(state, len(events), prepared.public, command_id, answer, snapshot, digest)
        return answer

    def _committed(
        self,
        state: TableState,
        n_events: int,
        envelopes: list[common_pb2.Envelope],
        command_id: str,
        answer: bytes,
        snapshot: bool,
        digest: str = "",
    ) -> None:
        """After a commit: adopt the state, remember the answer, tell watchers and the relay."""
        self.state = state
        if snapshot:
            self.snapshot_seq = state.seq
        EVENTS.inc(n_events)
        if command_id:
            self.recent[command_id] = (answer, digest)
            if len(self.recent) > RECENT_ANSWERS:
                self.recent.popitem(last=False)
        for q, leave_out in self.watchers.items():
            if not leave_out or not command_id.startswith(leave_out):
                q.put_nowait(envelopes)
        self.tables.relay_wake()
        if state.finished:
            for q in self.watchers:
                q.put_nowait(None)
            ACTIVE_TABLES.dec()

    def _outage(self, since: float) -> None:
        """The table could not be saved: its clock stands still from the commit's start (`since`, monotonic
        s) until Postgres answers again."""
        if self.outage_since is None:
            self.outage_since = wall_ms() - round(max(0.0, time.monotonic() - since) * 1000)

    async def _resync(self, last_seq: int | None = None) -> bool:
        """Take the table's state from Postgres, retrying with backoff while it is away; True if
        Postgres holds seq `last_seq` (the uncertain commit went through). After an outage the time
        Postgres was away is first taken off the table's clock (`_stop_clock`)."""
        delay = RESYNC_FIRST_DELAY_S
        while True:
            try:
                row, state = await self.tables.read(self.table_id)
                kept = await self._stop_clock() if self.outage_since is not None else True
                break
            except Exception as exc:
                if not unreachable(exc):
                    raise
                log.warning("table %s: Postgres out of reach (%s); retrying in %.2f s", self.table_id, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RESYNC_MAX_DELAY_S)
        self.state = state
        self.snapshot_seq = row.snapshot_seq if row.snapshot is not None else 0
        self.unsure = False
        if not kept:  # another instance took the table's partition meanwhile
            raise await self.tables.lost_lease(self)
        return last_seq is not None and row.seq >= last_seq

    def stalled(self, start: float, end: float, save: bool = True) -> None:
        """E2: nobody could act at the table from `start` to `end` (monotonic s: a slow commit, a pause of
        the event loop): its clock stood still for what of it was not counted yet. Counted here at once
        (the deadlines move on), saved before the table's next command or tick (`_save_stalls`), and
        with `save` at once (else the caller saves it: `Tables.save_stalls`, many tables in one statement).
        During an outage of Postgres (`outage_since`) that whole time is counted when it ends."""
        if self.outage_since is not None:
            return
        counted = end - max(start, self.stalls_counted_to)
        if counted > 0:
            self.stopped_ms += round(counted * 1000)
            self.stalls_counted_to = end
            if not self.stalls_unsaved and save:
                self.queue.put_nowait(SAVE_STALLS)
            self.stalls_unsaved = True

    async def _save_stalls(self) -> None:
        """The stalls counted into `stopped_ms` (`stalled`), saved with the table (`tables.clock_stopped_ms`),
        so whoever runs it next reads the same clock; UNAVAILABLE while Postgres cannot take them (they
        stay counted and are saved at the next try)."""
        try:
            async with self.tables.pool.acquire() as conn:
                kept = await store.stop_clock(conn, self.table_id, self.stopped_ms, self.tables.fence(self))
        except Exception as exc:
            if not unreachable(exc):
                raise
            raise Unavailable(f"the table's clock could not be saved ({type(exc).__name__}); nothing changed") from exc
        if not kept:
            raise await self.tables.lost_lease(self)
        self.stalls_unsaved = False

    async def _stop_clock(self) -> bool:
        """E2 on the platform's side: a player is not timed out for the platform's outage. The wall
        time from the first commit that could not be saved until now is recorded as time the clock
        stood still, so the deadlines move on by as much, here and wherever the table is read next.
        False: this instance no longer holds the table's partition (nothing recorded)."""
        assert self.outage_since is not None
        stopped = self.stopped_ms + max(0, wall_ms() - self.outage_since)
        async with self.tables.pool.acquire() as conn:
            kept = await store.stop_clock(conn, self.table_id, stopped, self.tables.fence(self))
        if kept:
            log.info(
                "table %s: its clock stood still %.1f s while the table could not be saved or no service ran it",
                self.table_id,
                (stopped - self.stopped_ms) / 1000,
            )
            self.stopped_ms = stopped
            self.outage_since = None
        return kept


def stored_events(rows: Sequence[Mapping[str, Any]]) -> list[Event]:
    """The events of `table_events` rows: decoded from their envelopes, or from their JSON when committed
    before the envelopes were stored (migration 005)."""
    return [stored_event(r["envelope"], r["payload"]) for r in rows]


def rebuild(row: store.TableRow, rows: list[asyncpg.Record]) -> TableState:
    """A table's state from its row and its event rows after the snapshot (all of them without one),
    refusing a record that breaks its own invariants rather than running a state Postgres does not hold."""
    after = row.snapshot_seq if row.snapshot is not None else 0
    seqs = [r["seq"] for r in rows]
    if seqs != list(range(after + 1, row.seq + 1)):
        missing = sorted(set(range(after + 1, row.seq + 1)) - set(seqs))
        raise Corrupt(
            f"table {row.table_id}: events {after + 1}-{row.seq} expected, "
            f"{len(seqs)} found ({len(missing)} missing, first {missing[:3]})"
        )
    try:
        events = stored_events(rows)
        if row.snapshot is None:
            if not events:
                raise ValueError("no TableCreated event")
            state = replay(events)
        else:
            state = codec.state_from_data(row.snapshot)
            for event in events:
                evolve(state, event)
    except Exception as exc:  # an event that does not fit its state: the record is broken, not the request
        raise Corrupt(f"table {row.table_id} does not replay: {type(exc).__name__}: {exc}") from exc
    if state.seq != row.seq:
        raise Corrupt(f"table {row.table_id} replays to seq {state.seq}, its row says {row.seq}")
    return state


class Created(NamedTuple):
    """A table `Tables.create` made (or had made for the same request id)."""

    table_id: str
    seq: int
    rule_card: str
    players: tuple[str, ...]
    epoch_ms: int


def _config(mode: str, external: tuple[str, ...], scale: int = 1, **settings: Any) -> TableConfig:
    """A new table's config: `mode`'s preset with `settings`, its sub-protocols run by `external`, its
    clock running `scale` times real time (E6: recorded in the config, so `GameEnded.scale` says it)."""
    external = tuple(p for p in SUB_PROTOCOLS if p in external)
    if not settings:
        return _standard_config(mode, external, scale)
    return _with(preset(mode, **settings), external, scale)


@functools.lru_cache(maxsize=64)
def _standard_config(mode: str, external: tuple[str, ...], scale: int = 1) -> TableConfig:
    """One config object per standard mode, sub-protocols and scale, shared by its tables (configs are
    frozen): the wire encodes a config once per object (`servicekit.wire`), which was most of a
    CreateTable's encoding."""
    return _with(preset(mode), external, scale)


def _with(config: TableConfig, external: tuple[str, ...], scale: int) -> TableConfig:
    if external:
        config = config.with_changes(external=external)
    if scale != config.clock.scale:
        config = config.with_changes(clock=dataclasses.replace(config.clock, scale=scale))
    return config


class Tables:
    """Every table this process owns, loaded on demand and recovered at start."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        snapshot_every: int = 500,
        default_scale: int = 1,
        token_secret: auth.Secret | None = None,
        group_commit: int = 128,
        max_tables: int = 10_000,
        idle_evict_s: float = 300.0,
        finished_evict_s: float = 30.0,
    ) -> None:
        self.pool = pool
        #: Unfinished tables this instance holds at most (TABLE_MAX_TABLES), evicted ones included
        #: (`idle`): CreateTable past it is RESOURCE_EXHAUSTED.
        self.max_tables = max_tables
        #: Idle actors leave memory after TABLE_IDLE_EVICT_S (finished: TABLE_FINISHED_EVICT_S).
        self.idle = Idle(self, idle_evict_s, finished_evict_s)
        #: Commits of many tables written together (`group_commit` at most per group; 1: one by one).
        self.committer = GroupCommitter(pool, group_commit, order=self._commit_order)
        #: The keys seat tokens are signed and verified with (None: TOKEN_SECRET, `settings.token_secret`).
        self.token_secret = auth.Keyring.of(token_secret if token_secret is not None else settings.token_secret())
        self.snapshot_every = snapshot_every
        self.default_scale = default_scale
        self.actors: dict[str, TableActor] = {}
        self._loading: dict[str, asyncio.Task[TableActor]] = {}
        self.relay_wake: Callable[[], None] = lambda: None
        #: This instance's partition leases (None: it runs every table, unfenced: a `Tables` on its own).
        self.leases: Leases | None = None
        #: E2: evicted (dormant) tables' stalls of the event loop, in seconds: taken off their clocks when
        #: they are loaded again (`_load`).
        self.dormant_stalls: dict[str, float] = {}
        self._stall_watch: asyncio.TimerHandle | None = None
        self._saving: set[asyncio.Task[None]] = set()

    def watch_stalls(self, last: float | None = None) -> None:
        """E2: every STALL_WATCH_S, whether the event loop ran late by over STALL_S (the process was frozen
        or starved): then every table here stood still since the loop should have run, and is told so
        (`TableActor.stalled`). A plain timer callback, not a task: it runs in the same pass of the loop
        as the tables' overdue timers, before any actor acts on them."""
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        if last is not None and (late := now - last - STALL_WATCH_S) > STALL_S:
            log.warning("the event loop stood still %.1f s: so did the tables' clocks (E2)", late)
            STALLS.labels("loop").inc()
            start = now - late
            for actor in self.actors.values():
                if not actor.state.finished:
                    actor.stalled(start, now, save=False)
            for table_id in self.idle.dormant:
                self.dormant_stalls[table_id] = self.dormant_stalls.get(table_id, 0.0) + late
            task = asyncio.create_task(self.save_stalls(), name="save-stalls")
            self._saving.add(task)
            task.add_done_callback(self._saving.discard)
        self._stall_watch = loop.call_later(STALL_WATCH_S, self.watch_stalls, now)

    async def save_stalls(self) -> None:
        """The stalls counted and not yet saved, of every table here, in one statement: thousands of tables
        after a freeze are one round trip, not one each. A table not written (Postgres away, its lease
        moved) saves its own before its next command (`TableActor._save_stalls`)."""
        unsaved = [a for a in self.actors.values() if a.stalls_unsaved and a.outage_since is None]
        if not unsaved:
            return
        owner = self.leases.instance_id if self.leases is not None else None
        clocks = [(a.table_id, a.stopped_ms, a.lease_epoch) for a in unsaved]
        try:
            async with self.pool.acquire() as conn:
                saved = await store.save_clocks(conn, clocks, owner)
        except Exception as exc:
            log.warning("stalled tables' clocks not saved (%s: %s); each saves its own", type(exc).__name__, exc)
            return
        for actor, (table_id, written, _) in zip(unsaved, clocks, strict=True):
            if table_id in saved and actor.stopped_ms == written:  # (not stalled again meanwhile)
                actor.stalls_unsaved = False

    def _commit_order(self, args: store.AppendArgs) -> int:
        """Where a commit goes in its group: its table's partition (`GroupCommitter.order`)."""
        return self.leases.partition(args.table_id) if self.leases is not None else 0

    def fence(self, actor: TableActor) -> tuple[str, int] | None:
        """What an actor's commits are fenced with: this instance and its lease epoch when it loaded the table."""
        if self.leases is None or actor.lease_epoch is None:
            return None
        return self.leases.instance_id, actor.lease_epoch

    def _owned(self, table_id: str) -> int | None:
        """The epoch this instance holds the table's partition at; `Elsewhere` when it does not hold it."""
        if self.leases is None:
            return None
        epoch = self.leases.epoch_of(table_id)
        if epoch is None:
            raise Elsewhere(f"table {table_id} is run by another instance")  # its address: `elsewhere`
        return epoch

    async def elsewhere(self, table_id: str) -> Elsewhere:
        """The refusal of a call for a table this instance does not run, naming the owner's address when
        one holds the table's partition now (else the client retries shortly)."""
        address = ""
        if self.leases is not None:
            try:
                address = await self.leases.owner_address(table_id) or ""
            except Exception as exc:  # Postgres away: no owner to name
                log.warning("owner of table %s not found (%s)", table_id, exc)
        if address == (self.leases.address if self.leases is not None else ""):
            address = ""  # this instance is about to take it (or just gave it up): retry here shortly
        where = f"instance at {address}" if address else "no instance right now; retry shortly"
        return Elsewhere(f"table {table_id} is run by another instance ({where})", address)

    async def lost_lease(self, actor: TableActor) -> Elsewhere:
        """A commit was fenced: this instance lost the table's partition. The actor stops (its state is
        no longer authoritative); its callers are told where the table runs now."""
        COMMITS_FENCED.inc()
        log.warning("table %s: commit refused by the fence (the partition moved); stopping its actor", actor.table_id)
        self._moved(actor)
        if self.leases is not None:
            self.leases.nudge()
        return await self.elsewhere(actor.table_id)

    def _moved(self, actor: TableActor) -> None:
        if actor.moved:
            return
        actor.moved = True
        if self.actors.get(actor.table_id) is actor:
            del self.actors[actor.table_id]
            LOADED.dec()
            if not actor.state.finished:
                ACTIVE_TABLES.dec()
        if actor.timer:
            actor.timer.cancel()
        actor.queue.put_nowait(None)  # what is queued behind is refused with Elsewhere
        for q in actor.watchers:
            q.put_nowait(None)  # their streams end with Elsewhere (api.WatchTable)

    async def drop(self, partitions: list[int]) -> None:
        """Partitions this instance no longer holds: their actors finish what they were doing, then stop."""
        assert self.leases is not None
        gone = set(partitions)
        leases = self.leases
        self.idle.dormant -= {t for t in self.idle.dormant if leases.partition(t) in gone}  # no wake-ups here
        actors = [a for a in list(self.actors.values()) if leases.partition(a.table_id) in gone]
        for actor in actors:
            task = actor.task
            self._moved(actor)
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)

    async def take(self, partitions: list[int]) -> None:
        """Partitions this instance took: their unfinished tables are loaded (timers re-armed)."""
        await self.recover(partitions)

    async def create(
        self,
        mode: str,
        players: list[str],
        seed: int,
        settings: dict[str, Any],
        scale: int,
        external: tuple[str, ...] = (),
        request_id: str = "",
    ) -> Created:
        """A new table; with a `request_id` that made one before, that table (and no new one)."""
        if len(request_id) > 128:
            raise BadRequest("request_id is at most 128 characters")
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
        validate.int_range(scale, "clock_scale", 0, MAX_CLOCK_SCALE)
        try:
            config = _config(mode, external, scale or self.default_scale, **settings)
        except (TypeError, ValueError) as exc:
            raise BadRequest(str(exc), getattr(exc, "rule", "")) from None
        if not players:
            raise BadRequest("players: one name per seat")
        players = [validate.name(p, "players", MAX_SEAT_NAME) for p in players]
        asked = request_digest(mode, players, seed, scale, external, settings) if request_id else ""
        if request_id and (made := await self._made_for(request_id, mode, players, config, asked)) is not None:
            return made
        if len(self.actors) + len(self.idle.dormant) >= self.max_tables and self._live() >= self.max_tables:
            raise Exhausted(f"this table service holds its maximum of {self.max_tables} live tables", 5000)
        seed = validate.seed(seed) or secrets.randbits(63)
        try:
            state, events = new_game(config, players, seed)
        except RuleViolation as exc:
            raise BadRequest(str(exc), exc.rule) from None
        if self.leases is not None and not self.leases.held:
            raise await self._no_partition()
        table_id, partition, lease_epoch = self._new_id()
        epoch = wall_ms()
        scale = scale or self.default_scale
        actor = TableActor(self, table_id, state, epoch, scale, snapshot_seq=0, lease_epoch=lease_epoch)
        prepared = actor._prepare(state, 1, events, "")
        # The table's row and its first events in one transaction: never a table without events.
        fence = self.fence(actor)
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                await store.create_table(
                    conn, table_id, mode, players, seed, epoch, scale, partition, request_id or None, asked or None
                )
                first = store.append_args(
                    table_id,
                    1,
                    events,
                    prepared.encoded,
                    state.clock,
                    state,
                    prepared.snapshot,
                    prepared.outbox,
                    fence=fence,
                )
                await store.append_many(conn, [first])
        except asyncpg.UniqueViolationError:
            # the same request_id, asked again while its first call was making the table: that one's
            made = await self._made_for(request_id, mode, players, config, asked) if request_id else None
            if made is None:
                raise
            return made
        except asyncpg.PostgresError as exc:
            if not fenced(exc):
                raise
            COMMITS_FENCED.inc()
            if self.leases is not None:
                self.leases.nudge()
            raise Unavailable("this instance just lost the partition it drew the table in; retry") from exc
        actor._committed(state, len(events), prepared.public, "", prepared.answer, prepared.snapshot)
        actor.used = time.monotonic()
        self.actors[table_id] = actor
        self.idle.adopted(table_id)
        ACTIVE_TABLES.inc()
        actor.start()
        return Created(table_id, state.seq, rule_card(config), tuple(players), epoch)

    async def _made_for(
        self, request_id: str, mode: str, players: list[str], config: TableConfig, digest: str
    ) -> Created | None:
        """The table `request_id` made before, or None; ALREADY_EXISTS if that table was asked for with
        anything else (another mode, other players, seed, clock scale, sub-protocols or settings: the key
        reused for another table)."""
        row = await store.made_for(self.pool, request_id)
        if row is None:
            return None
        made_players = json.loads(row["players"])
        if row["mode"] != mode or made_players != players or row["request_digest"] not in (None, digest):
            raise Conflict(
                f"request_id {request_id!r} made table {row['table_id']} for another request (mode, players, "
                "seed, clock scale, external or settings); a retry repeats the same request, a new table takes a new id"
            )
        return Created(row["table_id"], row["seq"], rule_card(config), tuple(made_players), row["clock_epoch_ms"])

    def seat_token(self, table_id: str, seat: int, name: str, epoch_ms: int) -> str:
        """A seat's signed token: the same every time (its expiry counts from the table's creation)."""
        return auth.issue(self.token_secret, table_id, seat, name, now=epoch_ms // 1000)

    async def _no_partition(self) -> Elsewhere:
        """The refusal of a new table while this instance holds no partition (it just started beside
        instances that hold them all and hand its share back at their next beat): the new table is made
        by an instance that holds some, else the client retries shortly."""
        address = ""
        if self.leases is not None:
            try:
                address = await self.leases.holder_address() or ""
            except Exception as exc:  # Postgres away: no instance to name
                log.warning("no instance holding partitions found (%s)", exc)
        where = f"instance at {address}" if address else "no instance holds one right now; retry shortly"
        return Elsewhere(f"this instance holds no partition yet ({where})", address, 500)

    def _new_id(self) -> tuple[str, int | None, int | None]:
        """A new table id, drawn until it falls in a partition this instance holds; with it the partition
        and the lease's epoch (None, None: no leases)."""
        if self.leases is None:
            return secrets.token_hex(8), None, None
        assert self.leases.held, "create refuses a new table while no partition is held"
        while True:  # a fair share of P partitions: a few draws on average
            table_id = secrets.token_hex(8)
            partition = self.leases.partition(table_id)
            if (lease_epoch := self.leases.held.get(partition)) is not None:
                return table_id, partition, lease_epoch

    async def get(self, table_id: str, touch: bool = True) -> TableActor:
        """The table's actor, read from Postgres if it is not in memory (never loaded, or evicted);
        `touch`: a caller's use (False: a deadline's wake-up, which keeps the table idle). A table of a
        partition this instance does not hold: `Elsewhere`, naming its owner."""
        while (actor := self.actors.get(table_id)) is None:
            try:
                self._owned(table_id)
            except Elsewhere:
                raise await self.elsewhere(table_id) from None
            task = self._loading.get(table_id)
            if task is None:
                task = self._loading[table_id] = asyncio.create_task(self._load(table_id))
            try:
                loaded = await task
            finally:
                self._loading.pop(table_id, None)
            # Between the load's end and this caller's turn the partition may have moved on or the sweep
            # evicted the actor: a caller given that one (a watcher) would wait on a table nobody runs here.
            if loaded.moved:
                raise await self.elsewhere(table_id)
        if touch:  # no await from here to the caller: the sweep cannot take it in between
            actor.used = time.monotonic()
        return actor

    async def _load(self, table_id: str) -> TableActor:
        lease_epoch = self._owned(table_id)
        row, state = await self.read(table_id)
        if self.leases is not None and self._owned(table_id) != lease_epoch:  # the partition moved meanwhile
            raise await self.elsewhere(table_id)
        snapshot_seq = row.snapshot_seq if row.snapshot is not None else 0
        actor = TableActor(
            self,
            table_id,
            state,
            row.clock_epoch_ms,
            row.clock_scale,
            snapshot_seq,
            lease_epoch=lease_epoch,
            stopped_ms=row.clock_stopped_ms,
            outage_since=row.clock_paused_at_ms,
        )
        if (stood_s := self.dormant_stalls.pop(table_id, None)) is not None:
            now = time.monotonic()
            actor.stalled(now - stood_s, now)
        # E2: no service ran the table since a clean stop; that time is taken off its clock before its
        # timers are armed, so nobody is timed out for a restart or a rolling update
        if actor.outage_since is not None and not await actor._stop_clock():
            raise await self.elsewhere(table_id)  # the partition moved on meanwhile
        self.actors[table_id] = actor
        self.idle.adopted(table_id)
        if not state.finished:
            ACTIVE_TABLES.inc()
        actor.start()
        return actor

    async def read(self, table_id: str) -> tuple[store.TableRow, TableState]:
        """The table's row and its state from its latest snapshot and the events after it, read in
        one transaction; `Corrupt` if they disagree (a seq gap, events that do not replay)."""
        async with self.pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
            row = await store.table(conn, table_id)
            if row is None:
                raise NotFound(f"no table {table_id!r}")
            after = row.snapshot_seq if row.snapshot is not None else 0
            rows = await store.event_rows_after(conn, table_id, after)
        return row, rebuild(row, rows)

    async def load_state(self, table_id: str) -> TableState:
        """The table's state as Postgres holds it."""
        return (await self.read(table_id))[1]

    async def recover(self, partitions: list[int] | None = None) -> int:
        """Load every unfinished table (of the partitions this instance holds, `partitions` when given)
        and re-arm its timers (after a crash, a restart, or a partition taken over)."""
        if partitions is None and self.leases is not None:
            partitions = sorted(self.leases.held)
        async with self.pool.acquire() as conn:
            rows = await store.unfinished(conn, partitions)
        resumed = 0
        for row in rows:
            if row.table_id in self.actors:
                continue
            try:
                await self.get(row.table_id)
            except Elsewhere:  # the partition moved on while its tables were loading
                continue
            except Exception:  # one unreadable table must not keep the others from running
                log.exception("table %s could not be resumed; it stays in Postgres untouched", row.table_id)
                continue
            resumed += 1
        return resumed

    async def pause_clocks(self) -> None:
        """At a clean stop, once the actors stopped: the clocks of the unfinished tables this instance runs
        stand still until an instance loads them again (`_load`), where the time between is taken off."""
        owner = self.leases.instance_id if self.leases is not None else None
        try:
            async with self.pool.acquire() as conn:
                paused = await store.pause_clocks(conn, wall_ms(), owner)
        except Exception as exc:  # Postgres away: the downtime will count, as after a crash
            log.warning("table clocks not paused for the stop (%s: %s)", type(exc).__name__, exc)
            return
        log.info("%d unfinished tables' clocks stand still until they run again", paused)

    async def stop(self) -> None:
        if self._stall_watch is not None:
            self._stall_watch.cancel()
        await asyncio.gather(*self._saving, return_exceptions=True)
        await self.idle.stop()
        for actor in list(self.actors.values()):
            await actor.stop()
            LOADED.dec()
        await self.committer.stop()

    def _live(self) -> int:
        """Tables held, finished ones left out: counted only near the limit (a walk over every table,
        which at thousands of tables was a twentieth of the service's time when each create made it)."""
        return sum(1 for actor in self.actors.values() if not actor.state.finished) + len(self.idle.dormant)

    async def join(self, table_id: str, seat: int) -> str:
        """A signed token for `seat`: the same token every time (its expiry counts from the table's creation)."""
        actor = await self.get(table_id)
        if not 0 <= seat < len(actor.state.players):
            raise BadRequest(f"seat must be 0 to {len(actor.state.players) - 1}")
        return self.seat_token(table_id, seat, actor.state.players[seat].name, actor.epoch_ms)

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
            sender = RESULT_SENDERS[kind]
            # the gateway's or a bot driver's token is a service's too; another table instance passes on
            # a result it read from the bus for a table this one runs (`handlers._forward`)
            if claims.player not in (sender, FORWARDER):
                raise Forbidden(
                    f"only the {sender} service (or a table instance passing it on) may send {kind.__name__}, "
                    f"not {claims.player!r}"
                )
            return None
        if claims.role != "player":
            raise Forbidden(f"a {claims.role} token cannot act for a seat")
        if command.seat != claims.seat:  # another player's seat: refused before anything about the command
            COMMANDS.labels(kind.__name__, "forbidden").inc()
            raise Forbidden(f"this token acts for seat {claims.seat}, not seat {command.seat}")
        for sub_protocol in actor.state.config.external:
            if kind in EXTERNAL_COMMANDS[sub_protocol]:
                rule = {"auction": "A1", "trade": "T1", "casino": "K1"}[sub_protocol]
                raise RuleViolation(
                    rule, f"this table's {sub_protocol} runs in the {sub_protocol} service: send it there"
                )
        return claims.seat
