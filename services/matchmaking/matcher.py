"""The matchmaking service's state changes: players, tickets, lobbies, and the matcher loop.

Everything durable is in Postgres (schema "matchmaking"); the process keeps
nothing but a wake-up signal for `WatchQueue` streams, so a restarted (or a
second) instance carries on from the rows alone.

The matcher: one asyncio task per process; every `Rules.tick_ms` it takes, per
mode, the mode's turn (an advisory lock: one instance matches a mode at a time,
seeing its whole queue) and its waiting tickets (`FOR UPDATE SKIP LOCKED`: one a
player's own call holds waits for the next pass), plans the tables they make
(`queues.plan`), creates each through the table
service and, in the same transaction that still holds the tickets, records
the match, its seats, the tickets' outcome and a `match.formed` outbox row.
Two instances never book one ticket twice. Before it calls CreateTable, a
pass commits each planned table as an attempt (`match_attempts`, on a
connection of its own); the record of the match removes it. A CreateTable
whose answer was lost (a deadline) or a crash before the record leaves the
tickets waiting and the attempt open: the next pass forms that same table
first, with the same request id (`plan_request_id`), and gets the table made
the first time back, never a second one and an orphan nobody holds a seat
token for. A ticket in an open attempt is not planned otherwise, nor
cancelled (Cancel answers UNAVAILABLE until the table is recorded, for up
to `ATTEMPT_HOLD_S`); an
attempt the table service refused outright (the table surely not made) is
dropped and its tickets planned anew.

Player tokens: `auth.issue(secret, "*", -1, player_id, role="account")`
(`player_token`): they identify the player to this service (and the rating
service); they watch no table (a seat or spectator token of that table does).
Seat tokens: `auth.issue(secret, table_id, seat, player_id)` issued as of the
match's formation (the same token on every ask).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import grpc
from prometheus_client import Counter, Gauge, Histogram

from engine import RuleViolation, codec
from engine.config import HOST_SETTINGS, preset, rule_card
from monopoly.v1 import matchmaking_pb2 as pb
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit import auth, bus, validate
from servicekit.errors import BadRequest, Forbidden, NotFound, Unauthenticated, Unavailable, unreachable

from . import store
from .queues import QUEUE_MODES, Plan, Rules, SeatPlan, Ticket, plan
from .snapshot import QueueView, Snapshot

log = logging.getLogger("matchmaking")

FORMED = Counter("matchmaking_matches_formed_total", "Tables formed, by mode and kind", ["mode", "kind"])
WAITING = Gauge("matchmaking_waiting_tickets", "Tickets waiting, by mode", ["mode"])
OLDEST_WAIT = Gauge("matchmaking_oldest_wait_seconds", "How long the longest-waiting ticket has waited", ["mode"])
WAIT_SECONDS = Histogram(
    "matchmaking_wait_seconds",
    "How long each seated ticket waited for its table",
    ["mode"],
    buckets=(1, 2, 5, 10, 20, 30, 45, 60, 90, 120, 300, 600),
)
ERRORS = Counter("matchmaking_matcher_errors_total", "Matcher passes that failed")
RECONCILED = Counter("matchmaking_matches_reconciled_total", "Live matches finished because their table had ended")
#: How often live matches are checked against their tables (and once at start).
RECONCILE_S = 30.0

#: CreateTable calls one matcher pass makes at once (the tables it planned are created side by side).
CREATE_CONCURRENCY = 16

#: Player tokens live this long (a player re-registers, or the client keeps its token, after that).
PLAYER_TOKEN_TTL_S = 30 * 24 * 3600

#: `(conn, player_ids) -> {player_id: (mu, sigma)}`: where ratings come from (default: the players
#: table; point it at the rating service when it owns them).
RatingSource = Callable[[asyncpg.Connection, list[str]], Awaitable[dict[str, tuple[float, float]]]]
#: `(player_id, pool) -> (mu, sigma)`: a player's current rating, asked once per Enqueue (the rating
#: service's, see `rating_lookup`); None keeps what the players table holds.
RatingLookup = Callable[[str, str], Awaitable[tuple[float, float]]]


#: CreateTable answers that say the table was not made (a retry would be refused again): the attempt is
#: dropped. Any other failure (a deadline, UNAVAILABLE, CANCELLED, INTERNAL...) may hide a made table.
REFUSALS = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)


#: How long a pass waits for the pool connection that commits its attempts (`_save_attempts`).
SIDE_WAIT_S = 5.0
#: How long an open attempt holds its tickets against Cancel. The table service not answering for
#: longer than this should not keep a player queued against their will: they may leave then (a table
#: made meanwhile, if any, plays on without them, their turns timing out).
ATTEMPT_HOLD_S = 120.0


class TableRefused(Unavailable):
    """The table service answered CreateTable with a refusal (`REFUSALS`): no table was made."""


def _in_queue(mode: str) -> RuleViolation:
    return RuleViolation("R4", f"already waiting in the {mode} queue: Cancel first (one queue at a time)")


def _in_table(table_id: str) -> RuleViolation:
    return RuleViolation("R4", f"already seated at live table {table_id}: one live table at a time, until it ends")


def _in_lobby(lobby_id: str) -> RuleViolation:
    return RuleViolation("R4", f"already in open custom table {lobby_id}: Cancel to leave it first")


class Matchmaker:
    def __init__(
        self,
        pool: asyncpg.Pool,
        table: table_pb2_grpc.TableServiceStub,
        token_secret: auth.Secret,
        rules: Rules,
        clock_scale: int = 1,
        external: tuple[str, ...] = (),
        ratings: RatingSource = store.ratings,
        rating_lookup: RatingLookup | None = None,
    ) -> None:
        self.pool = pool
        self.table = table
        self.secret = token_secret
        self.rules = rules
        self.clock_scale = clock_scale
        self.external = external
        self.ratings = ratings
        self.rating_lookup = rating_lookup
        self.relay_wake: Callable[[], None] = lambda: None
        self._stopped = asyncio.Event()
        self._views: dict[str, QueueView] = {}

    # Tokens and players

    def player_of(self, claims: auth.Claims) -> str:
        """The player a player token identifies (UNAUTHENTICATED if it is another kind of token).

        `claims` are the call's `player_token` / `host_token`, verified by the server's
        interceptor (forged or expired tokens never get here: `auth.current_claims()`).
        """
        if claims.role != "account" or claims.table_id != auth.ANY_TABLE or claims.seat != -1:
            raise Unauthenticated("not a player token: RegisterPlayer gives one")
        return claims.player

    async def register(self, display_name: str, is_bot: bool) -> tuple[str, str]:
        name = validate.name(display_name, "display_name", 48)
        player_id = "p-" + secrets.token_hex(8)
        async with self.pool.acquire() as conn:
            await store.add_player(conn, player_id, name, is_bot)
        token = auth.issue(self.secret, auth.ANY_TABLE, -1, player_id, role="account", ttl_s=PLAYER_TOKEN_TTL_S)
        return player_id, token

    async def _lock(self, conn: asyncpg.Connection, player_id: str) -> asyncpg.Record:
        row = await store.lock_player(conn, player_id)
        if row is None:
            raise Unauthenticated(f"no player {player_id} here: RegisterPlayer first")
        return row

    async def _free(self, conn: asyncpg.Connection, player_id: str, lobby_ok: str | None = None) -> None:
        """Refuse (FAILED_PRECONDITION, R4) a player already queued, seated at a live table or in a lobby."""
        found = await store.engagements(conn, player_id)
        if found["waiting_mode"] is not None:
            raise _in_queue(found["waiting_mode"])
        if found["live_table"] is not None:
            raise _in_table(found["live_table"])
        lobby_id = found["open_lobby"]
        if lobby_id is not None and lobby_id != lobby_ok:
            raise _in_lobby(lobby_id)

    def _notify(self, mode: str | None = None) -> None:
        """A local change (to `mode`'s queue, or to any): the queue views read again for their watchers."""
        for name, view in self._views.items():
            if mode is None or name == mode:
                view.changed()

    def queue_view(self, mode: str) -> QueueView:
        """The shared snapshot of `mode`'s waiting queue (every status and WatchQueue reads it)."""
        view = self._views.get(mode)
        if view is None:
            view = self._views[mode] = QueueView(mode, self._load_queue)
        return view

    async def _load_queue(self, mode: str) -> tuple[list[Ticket], float | None]:
        async with self.pool.acquire() as conn:
            rows = await store.waiting(conn, mode)
            recent = await store.recent_wait_s(conn, mode)
        return [_ticket(r) for r in rows], recent

    # Queues

    async def enqueue(
        self, player_id: str, mode: str, party_id: str, party_size: int, bot_fill: bool
    ) -> pb.QueueStatus:
        if mode not in QUEUE_MODES:
            raise BadRequest(
                f"mode must be one of {', '.join(QUEUE_MODES)} (custom tables are hosted: CreateCustomTable)"
            )
        size = QUEUE_MODES[mode]
        if party_id:
            if len(party_id) > 64:
                raise BadRequest("party_id is at most 64 characters")
            party_size = party_size or 2
            if not 2 <= party_size <= size.max_party:
                raise BadRequest(f"a {mode} party has 2 to {size.max_party} players, not {party_size}")
        else:
            party_size = 1
        rating = None
        if self.rating_lookup is not None:  # the band compares current ratings: ask once, at enqueue
            try:
                rating = await self.rating_lookup(player_id, "team" if mode == "team" else "ffa")
            except Exception:  # the rating service away: match on the last rating known here
                log.warning("rating of %s unavailable; matching on the stored one", player_id, exc_info=True)
        async with self.pool.acquire() as conn, conn.transaction():
            await self._lock(conn, player_id)
            await self._free(conn, player_id)
            if rating is not None:
                await store.set_rating(conn, player_id, *rating)
            if party_id:
                # The party's first ticket fixes its size; the advisory lock orders its members' enqueues.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"party:{mode}:{party_id}")
                known = await store.party_size_of(conn, mode, party_id)
                if known is not None and known != party_size:
                    raise BadRequest(f"party {party_id} has {known} players, not {party_size}")
                if await store.party_count(conn, mode, party_id) >= party_size:
                    raise RuleViolation("R4", f"party {party_id} is complete ({party_size} players)")
            ticket_id = "t-" + secrets.token_hex(8)
            await store.add_ticket(conn, ticket_id, player_id, mode, party_id or None, party_size, bot_fill)
        self._notify(mode)
        # The ticket's line, from a read of the queue that began after the commit (shared with every
        # other caller meanwhile); matched already if the matcher was quicker.
        snapshot = await self.queue_view(mode).fresh(asyncio.get_running_loop().time())
        out = pb.QueueStatus(ticket_id=ticket_id, status="waiting", mode=mode, party_id=party_id)
        if self._fill_line(out, snapshot):
            return out
        return await self.status(player_id)

    async def cancel(self, player_id: str) -> pb.QueueStatus:
        """Leave the queue and any open lobby (a host leaving closes it); a matched ticket stays matched."""
        async with self.pool.acquire() as conn, conn.transaction():
            await self._lock(conn, player_id)
            ticket_id = await store.lock_waiting_ticket(conn, player_id)  # after a pass holding it ended
            if ticket_id is not None and await store.in_attempt(conn, ticket_id, ATTEMPT_HOLD_S):
                raise Unavailable("a table is being formed for this ticket (R4); it stays queued until then")
            await store.cancel_ticket(conn, player_id)
            lobby_id = await store.open_lobby_of(conn, player_id)
            if lobby_id is not None:
                lobby = await store.lobby(conn, lobby_id, lock=True)
                assert lobby is not None
                if lobby["host_player_id"] == player_id:
                    await store.set_lobby_status(conn, lobby_id, "closed")
                else:
                    await store.remove_member(conn, lobby_id, player_id)
        self._notify()
        try:
            return await self.status(player_id)
        except NotFound:
            return pb.QueueStatus(status="cancelled")

    async def status(self, player_id: str) -> pb.QueueStatus:
        """The player's latest ticket: position and estimate while waiting, the match once matched.

        As of this call: a waiting ticket's line comes from a snapshot of its queue read after the
        call began (shared with every other reader meanwhile: `QueueView.fresh`)."""
        loop = asyncio.get_running_loop()
        since = loop.time()
        for _ in range(2):
            out, waited_s = await self._latest(player_id)
            if out.status != "waiting":
                return out
            snapshot = await self.queue_view(out.mode).fresh(since)
            if self._fill_line(out, snapshot):
                return out
            since = loop.time()  # it left the queue meanwhile (and the player queued again): once more
        out.waited_ms = int(waited_s * 1000)  # not in line yet as far as the snapshot knows: behind it
        out.waiting = len(snapshot.tickets) + 1
        out.position = out.waiting
        return out

    async def _latest(self, player_id: str) -> tuple[pb.QueueStatus, float]:
        """The player's latest ticket (with its match once matched, without its line) and its wait."""
        async with self.pool.acquire() as conn:
            t = await store.latest_ticket(conn, player_id)
            if t is None:
                raise NotFound("no queue ticket for this player: Enqueue first")
            out = pb.QueueStatus(
                ticket_id=t["ticket_id"], status=t["status"], mode=t["mode"], party_id=t["party_id"] or ""
            )
            if t["status"] == "matched":
                out.match.CopyFrom(await self._match_view(conn, t["table_id"], player_id))
            return out, float(t["waited_s"])

    async def watch_status(self, player_id: str, last: pb.QueueStatus, max_age_s: float) -> pb.QueueStatus:
        """The status of a watched ticket (`last`: its previous status): while it waits, from a snapshot
        of its queue at most `max_age_s` old, no query of its own; once it left the queue, `status`."""
        if last.status == "waiting":
            since = asyncio.get_running_loop().time() - max_age_s
            snapshot = await self.queue_view(last.mode).fresh(since)
            out = pb.QueueStatus(ticket_id=last.ticket_id, status="waiting", mode=last.mode, party_id=last.party_id)
            if self._fill_line(out, snapshot):
                return out
        return await self.status(player_id)

    def _fill_line(self, out: pb.QueueStatus, snapshot: Snapshot) -> bool:
        line = snapshot.line(out.ticket_id, self.rules, asyncio.get_running_loop().time())
        if line is None:
            return False
        out.waiting = line.waiting
        out.position = line.position
        out.waited_ms = int(line.waited_s * 1000)
        out.estimated_wait_ms = int(line.estimated_wait_s * 1000)
        return True

    async def my_match(self, player_id: str) -> pb.MatchView:
        async with self.pool.acquire() as conn:
            table_id = await store.live_table_of(conn, player_id)
            if table_id is None:
                raise NotFound("this player is at no live table")
            return await self._match_view(conn, table_id, player_id)

    async def _tickets(self, conn: asyncpg.Connection, rows: list[asyncpg.Record]) -> list[Ticket]:
        rated = await self.ratings(conn, [r["player_id"] for r in rows]) if rows else {}
        return [_ticket(r, *rated.get(r["player_id"], (0.0, 0.0))) for r in rows]

    def seat_token(self, table_id: str, seat: int, player_id: str, formed_ms: int) -> str:
        return auth.issue(self.secret, table_id, seat, player_id, now=formed_ms // 1000)

    async def _match_view(self, conn: asyncpg.Connection, table_id: str, player_id: str | None) -> pb.MatchView:
        m = await store.match(conn, table_id)
        if m is None:
            raise NotFound(f"no match {table_id}")
        view = match_view(m, await store.seats(conn, table_id))
        if player_id is not None:
            for s in view.seats:
                if s.player_id == player_id:
                    view.seat = s.seat
                    view.seat_token = self.seat_token(table_id, s.seat, player_id, m["formed_ms"])
                    break
            else:
                view.seat = -1
        return view

    # The matcher

    async def run(self) -> None:
        """Every tick, form what can be formed; reconcile live matches at start and every
        RECONCILE_S; until `stop`."""
        next_reconcile = 0.0
        away = False  # the last pass failed for an outage
        while not self._stopped.is_set():
            if asyncio.get_running_loop().time() >= next_reconcile:
                try:
                    await self.reconcile()
                    next_reconcile = asyncio.get_running_loop().time() + RECONCILE_S
                except Exception:  # Postgres or the table service away: the next tick tries again
                    log.exception("reconciling live matches failed")
            try:
                formed = await self.match_once()
            except Exception as exc:  # Postgres or the table service away for a moment: the next pass retries
                ERRORS.inc()
                formed = 0
                if not unreachable(exc):
                    log.exception("matcher pass failed")
                elif not away:  # an outage is said once, not at every tick while it lasts
                    away = True
                    log.warning("matcher: %s away (%s); retrying every tick", "Postgres or a service", exc)
            else:
                if away:
                    away = False
                    log.info("matcher: back to forming tables")
            if formed:
                self.relay_wake()
                self._notify()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.rules.tick_ms / 1000)

    def stop(self) -> None:
        self._stopped.set()
        for view in self._views.values():
            view.close()
        self._views.clear()

    async def match_once(self) -> int:
        formed = 0
        for mode in QUEUE_MODES:
            async with self.pool.acquire() as conn, conn.transaction():
                if not await store.take_mode(conn, mode):
                    continue  # another instance is matching this mode: it sees every waiting ticket
                formed += await self._match_mode(conn, mode)
        return formed

    async def _match_mode(self, conn: asyncpg.Connection, mode: str) -> int:
        """One mode's pass, in `conn`'s transaction (which holds the mode's turn): the tables formed."""
        rows = await store.lock_waiting(conn, mode)
        WAITING.labels(mode).set(len(rows))
        OLDEST_WAIT.labels(mode).set(max((float(r["waited_s"]) for r in rows), default=0.0))
        if not rows:
            return 0
        tickets = await self._tickets(conn, rows)
        again, held = await self._open_attempts(conn, mode, tickets)
        new = plan(mode, [t for t in tickets if t.ticket_id not in held], self.rules)
        if not again and not new:
            return 0
        await self._save_attempts(new)
        plans = again + new
        # The tables are created side by side (CreateTable is the slow part), then recorded one by one
        # in this transaction, which still holds their tickets.
        limit = asyncio.Semaphore(CREATE_CONCURRENCY)
        created = await asyncio.gather(*(self._create_planned(p, limit) for p in plans))
        formed = 0
        for p, table in zip(plans, created, strict=True):
            if isinstance(table, TableRefused):  # no table was made: its tickets are planned anew
                await store.drop_attempt(conn, plan_request_id(p))
            elif table is not None and await self._record(conn, p, *table):
                formed += 1
        return formed

    async def _create_table(
        self, mode: str, names: list[str], settings_json: str = "", request_id: str = ""
    ) -> tuple[str, str]:
        request = table_pb2.CreateTableRequest(
            mode=mode,
            players=names,
            clock_scale=self.clock_scale,
            external=list(self.external),
            custom_settings_json=settings_json,
            request_id=request_id,
        )
        try:
            reply = await self.table.CreateTable(request, timeout=10)
        except grpc.aio.AioRpcError as exc:
            failure = TableRefused if exc.code() in REFUSALS else Unavailable
            raise failure(f"the table service did not create the table ({exc.code().name}): {exc.details()}") from None
        return reply.table_id, reply.rule_card

    async def _open_attempts(
        self, conn: asyncpg.Connection, mode: str, tickets: list[Ticket]
    ) -> tuple[list[Plan], set[str]]:
        """The plans of the mode's open attempts whose tickets all wait here (formed again first), and
        every ticket an open attempt holds (never planned otherwise). An attempt with a ticket no longer
        waiting (a row from before Cancel checked attempts) is dropped."""
        by_id = {t.ticket_id: t for t in tickets}
        again: list[Plan] = []
        held: set[str] = set()
        for attempt in await store.attempts(conn, mode):
            seats = json.loads(attempt["seats"])
            ids = [s["ticket_id"] for s in seats if s["ticket_id"] is not None]
            if all(i in by_id for i in ids):
                again.append(_attempted_plan(mode, attempt["rated"], seats, by_id))
                held.update(ids)
                continue
            statuses = await store.ticket_statuses(conn, ids)
            if all(statuses.get(i) == "waiting" for i in ids):
                held.update(ids)  # one is held by its player's own call this moment: the next pass
            else:
                log.warning("attempt %s names a ticket no longer waiting; dropped", attempt["request_id"])
                await store.drop_attempt(conn, attempt["request_id"])
        return again, held

    async def _save_attempts(self, plans: list[Plan]) -> None:
        """Commit the attempts of new plans before any CreateTable, on a connection of their own (the
        pass's transaction commits only after the calls). That connection is waited for SIDE_WAIT_S at
        most: the pass holds ticket locks a Cancel holding another pool connection may wait on, so with
        the pool used up the pass gives up (its transaction rolls back) rather than wait for ever."""
        if plans:
            rows = [(plan_request_id(p), p.mode, p.rated, _seats_json(p)) for p in plans]
            async with self.pool.acquire(timeout=SIDE_WAIT_S) as side:
                await store.add_attempts(side, rows)

    async def _create_planned(self, p: Plan, limit: asyncio.Semaphore) -> tuple[str, str] | TableRefused | None:
        """The planned table created (its id and rule card); the refusal (no table was made); or None,
        not answered (the attempt is kept for the next pass)."""
        async with limit:
            try:
                return await self._create_table(p.mode, [s.name for s in p.seats], request_id=plan_request_id(p))
            except TableRefused as refusal:
                log.exception("a %s table for %d players was refused", p.mode, len(p.seats))
                return refusal
            except Unavailable as exc:
                log.warning("a %s table was not answered (%s); the next pass asks again for it", p.mode, exc)
                return None

    async def _record(self, conn: asyncpg.Connection, p: Plan, table_id: str, card: str) -> bool:
        """Record the created table with the tickets still locked; False if that failed (they wait on)."""
        try:
            async with conn.transaction():  # a savepoint: a failed write drops this match only
                await store.add_match(conn, table_id, p.mode, "queue", p.rated, card, [_seat_row(s) for s in p.seats])
                await store.close_tickets(conn, table_id, p)
                await store.drop_attempt(conn, plan_request_id(p))
                await self._publish_formed(conn, table_id)
        except asyncpg.PostgresError:
            log.exception("table %s was created but not recorded; its tickets wait on", table_id)
            return False
        FORMED.labels(p.mode, "queue").inc()
        for ticket in p.tickets:
            WAIT_SECONDS.labels(p.mode).observe(ticket.waited_s)
        log.info("formed %s table %s: %s", p.mode, table_id, ", ".join(s.name for s in p.seats))
        return True

    async def _publish_formed(self, conn: asyncpg.Connection, table_id: str) -> None:
        view = await self._match_view(conn, table_id, None)
        event = pb.MatchEvent(
            event_id=f"{table_id}:formed", type="formed", match=view, wall_unix_ms=int(time.time() * 1000)
        )
        await store.add_outbox(conn, bus.match_subject(table_id), event.event_id, event.SerializeToString())

    async def reconcile(self) -> int:
        """Finish the live matches whose table has ended (its GameEnded never reached this service) or
        that the table service does not know (created, never started): a player is never left in a
        live match that will not end. Returns how many were finished."""
        async with self.pool.acquire() as conn:
            live = await store.live_matches(conn, limit=10_000)
        finished = 0
        for m in live:
            table_id = m["table_id"]
            try:
                view = await self.table.GetTable(table_pb2.GetTableRequest(table_id=table_id), timeout=10)
            except grpc.aio.AioRpcError as exc:
                if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise Unavailable(f"the table service did not answer ({exc.code().name})") from None
                if exc.code() != grpc.StatusCode.NOT_FOUND:  # a table it cannot run (DATA_LOSS): left to operators
                    log.error("match %s: the table service answers %s", table_id, exc.code().name)
                    continue
                log.warning("match %s: the table service has no such table; the match is closed", table_id)
                finished += await self.finish(table_id, -1, [])
                continue
            if view.finished:
                state = codec.state_from_data(json.loads(view.state_json))
                log.warning("match %s: its table ended unseen; finished by reconciliation", table_id)
                finished += await self.finish(table_id, view.winner, [p.place for p in state.players])
        RECONCILED.inc(finished)
        return finished

    async def finish(self, table_id: str, winner: int, places: list[int]) -> bool:
        """The table's GameEnded: the match is over, its players free (idempotent)."""
        async with self.pool.acquire() as conn, conn.transaction():
            if not await store.finish_match(conn, table_id, winner):
                return False
            view = await self._match_view(conn, table_id, None)
            event = pb.MatchEvent(
                event_id=f"{table_id}:finished",
                type="finished",
                match=view,
                winner=winner,
                places=places,
                wall_unix_ms=int(time.time() * 1000),
            )
            subject = bus.match_subject(table_id, "finished")
            await store.add_outbox(conn, subject, event.event_id, event.SerializeToString())
        self.relay_wake()
        self._notify()
        log.info("match %s finished, winner seat %d", table_id, winner)
        return True

    # Custom tables (X5)

    async def create_lobby(self, host: str, settings_json: str, seats: int) -> pb.LobbyView:
        settings = _settings(settings_json)
        try:
            config = preset("custom", **settings)
        except (TypeError, ValueError) as exc:
            raise BadRequest(str(exc), getattr(exc, "rule", "")) from None
        seats = seats or config.max_players
        if not config.min_players <= seats <= config.max_players:
            raise BadRequest(f"seats: {config.min_players} to {config.max_players}", "X5")
        lobby_id = "l-" + secrets.token_hex(6)
        async with self.pool.acquire() as conn, conn.transaction():
            await self._lock(conn, host)
            await self._free(conn, host)
            await store.add_lobby(conn, lobby_id, host, settings, seats, rule_card(config))
            return await self._lobby_view(conn, lobby_id, host)

    async def join_lobby(self, player_id: str, lobby_id: str) -> pb.LobbyView:
        async with self.pool.acquire() as conn, conn.transaction():
            await self._lock(conn, player_id)
            lobby = await store.lobby(conn, lobby_id, lock=True)
            if lobby is None:
                raise NotFound(f"no custom table {lobby_id}")
            members = await store.members(conn, lobby_id)
            if any(m["player_id"] == player_id for m in members):
                return await self._lobby_view(conn, lobby_id, player_id)
            if lobby["status"] != "open":
                raise RuleViolation("R4", f"custom table {lobby_id} is {lobby['status']}, no longer open")
            if len(members) >= lobby["seats"]:
                raise RuleViolation("R4", f"custom table {lobby_id} is full ({lobby['seats']} seats)")
            await self._free(conn, player_id)
            await store.add_member(conn, lobby_id, player_id)
            return await self._lobby_view(conn, lobby_id, player_id)

    async def get_lobby(self, player_id: str, lobby_id: str) -> pb.LobbyView:
        async with self.pool.acquire() as conn:
            return await self._lobby_view(conn, lobby_id, player_id)

    async def start_lobby(self, host: str, lobby_id: str, bot_fill: bool) -> pb.LobbyView:
        async with self.pool.acquire() as conn, conn.transaction():
            lobby = await store.lobby(conn, lobby_id, lock=True)
            if lobby is None:
                raise NotFound(f"no custom table {lobby_id}")
            if lobby["host_player_id"] != host:
                raise Forbidden("only the host starts a custom table")
            if lobby["status"] == "started":
                return await self._lobby_view(conn, lobby_id, host)
            if lobby["status"] != "open":
                raise RuleViolation("R4", f"custom table {lobby_id} is {lobby['status']}")
            members = await store.members(conn, lobby_id)
            count = len(members)
            bots = lobby["seats"] - count if bot_fill else 0
            if count + bots < 2:
                raise RuleViolation("X1", "a custom table needs 2 players at least (or bot_fill)")
            names: list[str] = []
            for m in members:
                name, n = m["display_name"], 2
                while name in names:
                    name, n = f"{m['display_name']} #{n}", n + 1
                names.append(name)
            names += [f"bot-{i + 1}" for i in range(bots)]
            settings = json.dumps(json.loads(lobby["settings"]))
            # A start asked again after its answer was lost, by the same members, gets the same table.
            request_id = "lobby:" + hashlib.sha256(f"{lobby_id}|{settings}|{names}".encode()).hexdigest()[:40]
            table_id, card = await self._create_table("custom", names, settings, request_id)
            rows: list[tuple[int, str | None, str, bool, int]] = [
                (i, m["player_id"], names[i], False, -1) for i, m in enumerate(members)
            ]
            rows += [(count + i, None, names[count + i], True, -1) for i in range(bots)]
            # Custom rules are not the ranked modes: custom tables are unrated.
            await store.add_match(conn, table_id, "custom", "custom", False, card, rows, lobby_id)
            await store.set_lobby_status(conn, lobby_id, "started", table_id)
            await self._publish_formed(conn, table_id)
            FORMED.labels("custom", "custom").inc()
            view = await self._lobby_view(conn, lobby_id, host)
        self.relay_wake()
        return view

    async def _lobby_view(self, conn: asyncpg.Connection, lobby_id: str, player_id: str | None) -> pb.LobbyView:
        lobby = await store.lobby(conn, lobby_id)
        if lobby is None:
            raise NotFound(f"no custom table {lobby_id}")
        view = pb.LobbyView(
            lobby_id=lobby_id,
            host_player_id=lobby["host_player_id"],
            settings_json=lobby["settings"],
            seats=lobby["seats"],
            rule_card=lobby["rule_card"],
            status=lobby["status"],
        )
        members = await store.members(conn, lobby_id)
        for m in members:
            view.members.add(
                player_id=m["player_id"],
                display_name=m["display_name"],
                is_host=m["player_id"] == lobby["host_player_id"],
            )
        if lobby["table_id"]:
            member = player_id if any(m["player_id"] == player_id for m in members) else None
            view.match.CopyFrom(await self._match_view(conn, lobby["table_id"], member))
        return view

    async def list_tables(self) -> pb.ListTablesResponse:
        out = pb.ListTablesResponse()
        async with self.pool.acquire() as conn:
            for mode in QUEUE_MODES:
                out.waiting[mode] = 0
            out.waiting.update(await store.waiting_counts(conn))
            for lobby in await store.open_lobbies(conn):
                out.lobbies.append(await self._lobby_view(conn, lobby["lobby_id"], None))
            live = await store.live_matches(conn)
            seats = await store.seats_of(conn, [m["table_id"] for m in live])
            for m in live:
                view = match_view(m, seats[m["table_id"]])
                out.running.add(
                    table_id=m["table_id"],
                    mode=m["mode"],
                    kind=m["kind"],
                    seats=view.seats,
                    spectator_token=auth.issue(self.secret, m["table_id"], -1, "spectator", role="spectator"),
                    rule_card=m["rule_card"],
                    formed_unix_ms=m["formed_ms"],
                )
        return out


def _seat_row(s: SeatPlan) -> tuple[int, str | None, str, bool, int]:
    return (s.seat, s.ticket.player_id if s.ticket else None, s.name, s.ticket is None, s.team)


def _seats_json(p: Plan) -> str:
    return json.dumps(
        [
            {"seat": s.seat, "ticket_id": s.ticket.ticket_id if s.ticket else None, "name": s.name, "team": s.team}
            for s in p.seats
        ]
    )


def _attempted_plan(mode: str, rated: bool, seats: list[dict[str, Any]], by_id: dict[str, Ticket]) -> Plan:
    """The plan an attempt recorded (`_seats_json`), its seats holding the tickets as read now."""
    ticket = by_id.get
    return Plan(mode, tuple(SeatPlan(s["seat"], ticket(s["ticket_id"]), s["name"], s["team"]) for s in seats), rated)


def _settings(text: str) -> dict[str, Any]:
    settings = validate.json_object(text, "settings_json")
    unknown = sorted(set(settings) - HOST_SETTINGS)
    if unknown:
        raise BadRequest(f"unknown setting(s) {', '.join(unknown)}; a host sets {', '.join(sorted(HOST_SETTINGS))}")
    return settings


def match_view(m: asyncpg.Record, seats: list[asyncpg.Record]) -> pb.MatchView:
    view = pb.MatchView(
        table_id=m["table_id"],
        mode=m["mode"],
        rated=m["rated"],
        status=m["status"],
        rule_card=m["rule_card"],
        kind=m["kind"],
        formed_unix_ms=m["formed_ms"],
        seat=-1,
    )
    for s in seats:
        view.seats.add(
            seat=s["seat"],
            player_id=s["player_id"] or "",
            display_name=s["display_name"],
            is_bot=s["bot"],
            team=s["team"],
        )
    return view


def _ticket(r: asyncpg.Record, *rating: float) -> Ticket:
    """A waiting row as a ticket; `rating` (mu, sigma) where the band needs it."""
    return Ticket(
        r["ticket_id"],
        r["player_id"],
        r["display_name"],
        r["party_id"],
        r["party_size"],
        r["bot_fill"],
        float(r["waited_s"]),
        *rating,
    )


def plan_request_id(p: Plan) -> str:
    """CreateTable's request id for a planned table: its tickets and names in seat order. A call that
    timed out after the table service made the table leaves the tickets waiting; the next pass plans
    them the same way and gets that table back instead of leaving it an orphan. Another seating of
    them is another id (a new table, as before)."""
    seats = "|".join(f"{s.ticket.ticket_id if s.ticket is not None else '-'}:{s.name}" for s in p.seats)
    return "match:" + hashlib.sha256(f"{p.mode}|{seats}".encode()).hexdigest()[:40]
