"""The rating service's state: the record of every table from its events, and the verdict of
every finished game, applied once (R1, R2; decisions in the package docstring)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

import asyncpg
from prometheus_client import Counter

from engine.casino import BetSettled
from engine.events import GameEnded, TableCreated, TurnStarted
from monopoly.v1 import common_pb2, matchmaking_pb2
from servicekit.wire import event_from_proto

from . import store
from .ratings import Game, Rating, Thresholds, achievements_for, judge, pool_for, quest_steps, rate, xp_for
from .store import MatchRecord, MatchSeat

log = logging.getLogger("rating")

GAMES = Counter("rating_games_total", "Finished games judged, by verdict", ["verdict"])

#: The table events the rating service reads; every other event is skipped without decoding.
RELEVANT = frozenset({"TableCreated", "TurnStarted", "BetSettled", "GameEnded"})


class NotReady(RuntimeError):
    """A `GameEnded` came before the rest of its game was recorded (its `TableCreated`, or batches
    still in flight or failed): the message fails and comes again."""


#: How long a `GameEnded` waits for the earlier batches of its table being handled before its message fails.
ORDER_WAIT_S = 5.0
#: How long it waits for a missing earlier batch to come before it judges without it.
GAP_WAIT_S = 0.5
#: Tables whose ordering this process tracks at most (the oldest are forgotten first).
MAX_TRACKED = 20_000


class _Seen:
    """The batches of one table this process has handled or is handling (seq ranges)."""

    __slots__ = ("done", "inflight", "rounds")

    def __init__(self) -> None:
        self.done: list[tuple[int, int]] = []  # merged, sorted [first, last] ranges
        self.inflight: set[int] = set()  # first seqs of batches being handled
        self.rounds = 0  # the last round recorded in Postgres (spares a write per turn)

    def add(self, first: int, last: int) -> None:
        ranges = sorted([*self.done, (first, last)])
        merged = [ranges[0]]
        for lo, hi in ranges[1:]:
            if lo <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        self.done = merged

    def earlier_inflight(self, first: int) -> bool:
        return any(f < first for f in self.inflight)

    def gap_before(self, first: int) -> bool:
        """A batch between the first one this process saw and `first` is missing (from seq 1 when
        the process saw the table created)."""
        before = [(lo, hi) for lo, hi in self.done if lo < first]
        return len(before) > 1 or (len(before) == 1 and before[0][1] != first - 1)


class Games:
    """The consumer's state. The durable consumer hands the messages of one fetch to concurrent
    tasks, so two batches of one table can be handled at once and finish out of order; a
    `GameEnded` therefore first waits until the batches of its table ahead of it in the same
    fetch are handled, so the rounds and jackpots it judges on are complete, and briefly for a
    batch missing between those it saw (never more: a stream may lack batches for good)."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        thresholds: Thresholds,
        fetch_formed: Callable[[str], Awaitable[bytes | None]] | None = None,
    ) -> None:
        self.pool = pool
        self.thresholds = thresholds
        #: The table's `match.formed` message read from the match stream itself (None: there is
        #: none), for a `GameEnded` judged before the match consumer recorded it.
        self.fetch_formed = fetch_formed
        self._seen: OrderedDict[str, _Seen] = OrderedDict()
        self._changed = asyncio.Condition()

    def _track(self, table_id: str) -> _Seen:
        seen = self._seen.get(table_id)
        if seen is None:
            seen = self._seen[table_id] = _Seen()
            while len(self._seen) > MAX_TRACKED:
                self._seen.popitem(last=False)
        else:
            self._seen.move_to_end(table_id)
        return seen

    async def on_batch(self, envelopes: Sequence[common_pb2.Envelope]) -> None:
        """One committed command's events of one table, in order."""
        if not envelopes:
            return
        table_id = envelopes[0].table_id
        first, last = envelopes[0].seq, envelopes[-1].seq
        seen = self._track(table_id)  # registered before the first await: ordered with its fetch
        seen.inflight.add(first)
        try:
            await self._handle(table_id, first, envelopes, seen)
            seen.add(first, last)
        finally:
            seen.inflight.discard(first)
            async with self._changed:
                self._changed.notify_all()

    async def _handle(self, table_id: str, first: int, envelopes: Sequence[common_pb2.Envelope], seen: _Seen) -> None:
        top_round = 0
        jackpots: list[int] = []
        for env in envelopes:
            if env.type not in RELEVANT:
                continue
            event = event_from_proto(env.payload)
            if isinstance(event, TableCreated):
                cfg = event.config
                at = env.occurred_at
                await store.table_created(
                    self.pool,
                    table_id,
                    cfg.mode,
                    cfg.ruleset,
                    cfg.teams,
                    event.players,
                    at.wall_unix_ms,
                    at.clock_scale or 1,
                )
            elif isinstance(event, TurnStarted):
                top_round = max(top_round, event.round)
            elif isinstance(event, BetSettled):
                if event.jackpot_hit:
                    jackpots.append(event.seat)
            elif isinstance(event, GameEnded):
                await self._progress(table_id, seen, top_round, jackpots)
                top_round, jackpots = 0, []
                await self._wait_for_earlier(seen, table_id, first)
                await self.finish(env, event)
                self._seen.pop(table_id, None)  # the game is over: nothing more to order
        await self._progress(table_id, seen, top_round, jackpots)

    async def _wait_for_earlier(self, seen: _Seen, table_id: str, first: int) -> None:
        """Wait for the batches ahead of `first` being handled (they finish soon), then briefly for a
        missing one; a batch that failed and comes later would come too late (documented)."""
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: not seen.earlier_inflight(first)), ORDER_WAIT_S)
            except TimeoutError:
                raise NotReady(f"table {table_id}: GameEnded before the batches ahead of it") from None
            if seen.gap_before(first):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait_for(lambda: not seen.gap_before(first)), GAP_WAIT_S)
                if seen.gap_before(first):
                    log.warning("table %s: judged with batches before seq %d missing (%s)", table_id, first, seen.done)

    async def _progress(self, table_id: str, seen: _Seen, top_round: int, jackpots: list[int]) -> None:
        if not jackpots and top_round <= seen.rounds:
            return
        await store.table_progress(self.pool, table_id, top_round, jackpots)
        seen.rounds = max(seen.rounds, top_round)

    async def on_match(self, event: matchmaking_pb2.MatchEvent) -> None:
        """Matchmaking's `MatchEvent`: a formed table is recorded (idempotent); "finished" is not
        needed (the table's own GameEnded is judged)."""
        record = match_record(event)
        if record is not None:
            await store.match_formed(self.pool, record, event.match.formed_unix_ms or event.wall_unix_ms)

    async def match(self, table_id: str) -> MatchRecord | None:
        """The match matchmaking formed for the table, or None when it formed none. The match
        consumer usually recorded it long before the game ended; when it has not (it lags behind
        the table consumer after a restart), the match stream itself is asked."""
        record = await store.match(self.pool, table_id)
        if record is None and self.fetch_formed is not None:
            raw = await self.fetch_formed(table_id)
            if raw is not None:
                event = matchmaking_pb2.MatchEvent.FromString(raw)
                record = match_record(event)
                if record is not None:
                    await store.match_formed(self.pool, record, event.match.formed_unix_ms or event.wall_unix_ms)
        return record

    async def finish(self, env: common_pb2.Envelope, ended: GameEnded) -> bool:
        """Judge the game and apply the verdict, once: False when it was judged before."""
        table_id = env.table_id
        record = await store.table(self.pool, table_id)
        if record is None or not record.complete:
            raise NotReady(f"table {table_id}: GameEnded before its TableCreated")
        assert record.mode is not None and record.ruleset is not None and record.created_wall_ms is not None
        matched = await self.match(table_id)
        if matched is not None and len(matched.seats) != len(record.players):
            log.warning(
                "table %s: matchmaking seated %d, the table %d; judged by display names",
                table_id,
                len(matched.seats),
                len(record.players),
            )
            matched = None
        game = Game(
            table_id,
            record.mode,
            record.ruleset,
            record.teams,
            matched.keys if matched is not None else record.players,
            tuple(ended.places),
            ended.winner,
            record.rounds,
            env.occurred_at.wall_unix_ms - record.created_wall_ms,
            record.jackpot_seats,
            bot_seats=matched.bot_seats if matched is not None else None,
            names=record.players,
            rated_table=matched.rated if matched is not None else True,
        )
        verdict = judge(game, self.thresholds)
        pool_name = pool_for(game.mode)
        async with self.pool.acquire() as conn, conn.transaction():
            fresh = await store.insert_verdict(
                conn,
                table_id,
                game.mode,
                verdict.rated,
                pool_name if verdict.rated else None,
                verdict.reason,
                verdict.xp_halves,
                verdict.rewards,
                game.rounds,
                game.real_ms,
                ended.game_ms,
                ended.scale or record.clock_scale,
                ended.winner,
                env.occurred_at.wall_unix_ms,
                env.seq,
            )
            if not fresh:
                log.info("table %s: judged before; redelivery ignored", table_id)
                GAMES.labels("duplicate").inc()
                return False
            before: dict[str, Rating] = {}
            after: dict[str, Rating] = {}
            if verdict.rated:
                before = await store.lock_ratings(conn, game.players, pool_name)
                after = rate(game, before)
                await store.save_ratings(conn, pool_name, after)
            for seat, player in enumerate(game.players):
                place = game.places[seat]
                xp = xp_for(place, game.rounds, verdict.xp_halves)
                granted: list[str] = []
                if verdict.rewards:
                    have = {r["achievement"] for r in await store.achievements_of(conn, player)}
                    granted = achievements_for(game, seat, have)
                    if granted:
                        await store.grant(conn, player, granted, table_id)
                    await store.advance_quests(conn, player, quest_steps(game, seat))
                await store.insert_result(
                    conn,
                    table_id,
                    seat,
                    player,
                    place,
                    verdict.rated,
                    pool_name if verdict.rated else None,
                    before.get(player),
                    after.get(player),
                    xp,
                    granted,
                    env.occurred_at.wall_unix_ms,
                )
                await store.add_to_profile(conn, player, xp, verdict.rated)
        GAMES.labels("rated" if verdict.rated else "unrated").inc()
        log.info("table %s (%s) judged: %s", table_id, game.mode, "rated" if verdict.rated else verdict.reason)
        return True


def match_record(event: matchmaking_pb2.MatchEvent) -> MatchRecord | None:
    """The formed match of a `MatchEvent` (None for any other type, or one without a table)."""
    m = event.match
    if event.type != "formed" or not m.table_id:
        return None
    seats = tuple(
        MatchSeat(s.seat, s.player_id, s.display_name, s.is_bot) for s in sorted(m.seats, key=lambda s: s.seat)
    )
    if [s.seat for s in seats] != list(range(len(seats))):
        log.warning("match %s: seats %s are not 0..n-1; ignored", m.table_id, [s.seat for s in seats])
        return None
    return MatchRecord(m.table_id, m.mode, m.kind, m.rated, seats)
