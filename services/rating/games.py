"""The rating service's state: the record of every table from its events, and the verdict of
every finished game, applied once (R1, R2; decisions in the package docstring)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

import asyncpg
from prometheus_client import Counter

from engine.casino import BetSettled
from engine.events import GameEnded, PlayerBankrupt, TableCreated, TurnStarted
from monopoly.v1 import common_pb2, matchmaking_pb2
from servicekit.wire import event_from_proto

from . import store
from .ratings import Game, Rating, Thresholds, achievements_for, judge, pool_for, quest_steps, rate, xp_for
from .store import MatchRecord, MatchSeat

log = logging.getLogger("rating")

GAMES = Counter("rating_games_total", "Finished games judged, by verdict", ["verdict"])

#: The table events the rating service reads; every other event is skipped without decoding.
RELEVANT = frozenset({"TableCreated", "TurnStarted", "BetSettled", "PlayerBankrupt", "GameEnded"})


class NotReady(RuntimeError):
    """A `GameEnded` came before its table's `TableCreated` was recorded: the message fails and
    comes again."""


#: Tables whose last recorded round this process remembers (the oldest are forgotten first).
MAX_TRACKED = 20_000


class Games:
    """The consumer's state. The table signals come in commit order, a fetch at a time
    (`on_batches`), so a `GameEnded` is judged after every round and jackpot of its game was
    recorded; the only memory kept here spares a Postgres write per turn."""

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
        #: The last round recorded in Postgres, by table.
        self._rounds: OrderedDict[str, int] = OrderedDict()

    async def on_batch(self, envelopes: Sequence[common_pb2.Envelope]) -> None:
        """One message of a table's signals (events of one committed command), in order."""
        await self.on_batches([envelopes])

    async def on_batches(self, batches: Sequence[Sequence[common_pb2.Envelope]]) -> None:
        """Messages of the table signals, in stream order. The rounds and jackpots they bring are
        written together at the end, in one transaction, except a table's own, written just before
        its `GameEnded` is judged on them: at thousands of tables a write per round each would be
        the service's limit."""
        progress: dict[str, tuple[int, list[int]]] = {}  # by table: the last round begun, jackpot seats
        for envelopes in batches:
            for env in envelopes:
                if env.type not in RELEVANT:
                    continue
                event = event_from_proto(env.payload)
                table_id = env.table_id
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
                    top, seats = progress.get(table_id, (0, []))
                    progress[table_id] = (max(top, event.round), seats)
                elif isinstance(event, BetSettled):
                    if event.jackpot_hit:
                        progress.setdefault(table_id, (0, []))[1].append(event.seat)
                elif isinstance(event, PlayerBankrupt):  # XP's round bonus ends with the seat's last round
                    if table_id in progress:
                        await self._progress({table_id: progress.pop(table_id)})
                    await store.seat_out(self.pool, table_id, event.seat)
                elif isinstance(event, GameEnded):
                    if table_id in progress:
                        await self._progress({table_id: progress.pop(table_id)})
                    await self.finish(env, event)
                    self._rounds.pop(table_id, None)  # the game is over
        await self._progress(progress)

    async def _progress(self, progress: dict[str, tuple[int, list[int]]]) -> None:
        """Write what grew since the last write (a round not yet recorded, a jackpot)."""
        news = [
            (table_id, top, seats)
            for table_id, (top, seats) in progress.items()
            if seats or top > self._rounds.get(table_id, 0)
        ]
        if not news:
            return
        if len(news) == 1:
            await store.table_progress(self.pool, *news[0])
        else:
            await store.tables_progress(self.pool, news)
        for table_id, top, _ in news:
            self._rounds[table_id] = max(self._rounds.get(table_id, 0), top)
            self._rounds.move_to_end(table_id)
        while len(self._rounds) > MAX_TRACKED:
            self._rounds.popitem(last=False)

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
                xp = xp_for(place, record.rounds_out.get(seat, game.rounds), verdict.xp_halves)
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
