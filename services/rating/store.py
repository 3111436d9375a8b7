"""The rating service's SQL: every statement it runs, in one place."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncpg

from .ratings import QUESTS, Rating


@dataclass(frozen=True, slots=True)
class TableRecord:
    table_id: str
    mode: str | None
    ruleset: str | None
    teams: bool
    players: tuple[str, ...]
    created_wall_ms: int | None
    clock_scale: int
    rounds: int
    jackpot_seats: frozenset[int]
    #: The round in which each seat that went out did (absent: still in at the end).
    rounds_out: dict[int, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """TableCreated was seen (the rest can arrive in any order)."""
        return self.mode is not None and self.created_wall_ms is not None

    @property
    def is_custom(self) -> bool:
        return self.mode == "custom"


# --- the per-table record, built from the events as they come (each an idempotent upsert) ---


async def table_created(
    conn: asyncpg.Connection | asyncpg.Pool,
    table_id: str,
    mode: str,
    ruleset: str,
    teams: bool,
    players: Sequence[str],
    wall_ms: int,
    scale: int,
) -> None:
    await conn.execute(
        "INSERT INTO tables (table_id, mode, ruleset, teams, players, created_wall_ms, clock_scale) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7) "
        "ON CONFLICT (table_id) DO UPDATE SET mode = EXCLUDED.mode, ruleset = EXCLUDED.ruleset, "
        "teams = EXCLUDED.teams, players = EXCLUDED.players, created_wall_ms = EXCLUDED.created_wall_ms, "
        "clock_scale = EXCLUDED.clock_scale, updated_at = now()",
        table_id,
        mode,
        ruleset,
        teams,
        json.dumps(list(players)),
        wall_ms,
        scale,
    )


_PROGRESS = (
    "INSERT INTO tables (table_id, rounds, jackpot_seats) VALUES ($1, $2, $3) "
    "ON CONFLICT (table_id) DO UPDATE SET rounds = GREATEST(tables.rounds, EXCLUDED.rounds), "
    "jackpot_seats = ARRAY(SELECT DISTINCT s FROM unnest(tables.jackpot_seats || EXCLUDED.jackpot_seats) AS s "
    "ORDER BY s), updated_at = now()"
)


async def table_progress(
    conn: asyncpg.Connection | asyncpg.Pool, table_id: str, rounds: int, jackpot_seats: Sequence[int]
) -> None:
    """The last round begun (only ever grows) and seats that hit the jackpot (a set)."""
    await conn.execute(_PROGRESS, table_id, rounds, list(jackpot_seats))


async def tables_progress(pool: asyncpg.Pool, progress: Sequence[tuple[str, int, Sequence[int]]]) -> None:
    """`table_progress` of several tables (table id, round, jackpot seats), in one transaction."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.executemany(_PROGRESS, [(t, rounds, list(seats)) for t, rounds, seats in progress])


async def seat_out(conn: asyncpg.Connection | asyncpg.Pool, table_id: str, seat: int) -> None:
    """The seat went out in the table's last recorded round; a redelivery keeps the first record."""
    await conn.execute(
        "UPDATE tables SET rounds_out = jsonb_build_object($2::integer::text, rounds) || rounds_out, "
        "updated_at = now() WHERE table_id = $1",
        table_id,
        seat,
    )


async def table(conn: asyncpg.Connection | asyncpg.Pool, table_id: str) -> TableRecord | None:
    r = await conn.fetchrow("SELECT * FROM tables WHERE table_id = $1", table_id)
    if r is None:
        return None
    return TableRecord(
        r["table_id"],
        r["mode"],
        r["ruleset"],
        bool(r["teams"]),
        tuple(json.loads(r["players"])) if r["players"] is not None else (),
        r["created_wall_ms"],
        r["clock_scale"] or 1,
        r["rounds"],
        frozenset(r["jackpot_seats"]),
        {int(seat): rounds for seat, rounds in json.loads(r["rounds_out"]).items()},
    )


# --- the tables matchmaking formed ---


@dataclass(frozen=True, slots=True)
class MatchSeat:
    seat: int
    player_id: str  # "" for a bot filling the seat
    display_name: str
    is_bot: bool


@dataclass(frozen=True, slots=True)
class MatchRecord:
    table_id: str
    mode: str
    kind: str
    rated: bool
    seats: tuple[MatchSeat, ...]  # by seat

    @property
    def keys(self) -> tuple[str, ...]:
        """The players' keys by seat: the player id; a bot without one keeps its display name."""
        return tuple(s.player_id or s.display_name for s in self.seats)

    @property
    def bot_seats(self) -> frozenset[int]:
        return frozenset(s.seat for s in self.seats if s.is_bot)


async def match_formed(conn: asyncpg.Connection | asyncpg.Pool, m: MatchRecord, formed_unix_ms: int) -> None:
    """Record a formed match (the first copy wins: a redelivery changes nothing)."""
    await conn.execute(
        "INSERT INTO matches (table_id, mode, kind, rated, seats, formed_unix_ms) VALUES ($1, $2, $3, $4, $5, $6) "
        "ON CONFLICT (table_id) DO NOTHING",
        m.table_id,
        m.mode,
        m.kind,
        m.rated,
        json.dumps(
            [
                {"seat": s.seat, "player_id": s.player_id, "display_name": s.display_name, "is_bot": s.is_bot}
                for s in m.seats
            ]
        ),
        formed_unix_ms,
    )


async def match(conn: asyncpg.Connection | asyncpg.Pool, table_id: str) -> MatchRecord | None:
    r = await conn.fetchrow("SELECT * FROM matches WHERE table_id = $1", table_id)
    if r is None:
        return None
    seats = tuple(
        MatchSeat(int(s["seat"]), str(s["player_id"]), str(s["display_name"]), bool(s["is_bot"]))
        for s in json.loads(r["seats"])
    )
    return MatchRecord(r["table_id"], r["mode"], r["kind"], r["rated"], seats)


# --- the verdict of a finished game: everything below runs in one transaction ---


async def insert_verdict(
    conn: asyncpg.Connection,
    table_id: str,
    mode: str,
    rated: bool,
    pool: str | None,
    reason: str,
    xp_halves: int,
    rewards: bool,
    rounds: int,
    real_ms: int,
    game_ms: int,
    clock_scale: int,
    winner: int,
    ended_wall_ms: int,
    ended_seq: int,
) -> bool:
    """The game's verdict; False when it was judged before (a redelivery: do nothing else)."""
    inserted = await conn.fetchval(
        "INSERT INTO rated_games (table_id, mode, rated, pool, reason, xp_halves, rewards, rounds, real_ms, "
        "game_ms, clock_scale, winner, ended_wall_ms, ended_seq) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
        "ON CONFLICT (table_id) DO NOTHING RETURNING true",
        table_id,
        mode,
        rated,
        pool,
        reason,
        xp_halves,
        rewards,
        rounds,
        real_ms,
        game_ms,
        clock_scale,
        winner,
        ended_wall_ms,
        ended_seq,
    )
    return bool(inserted)


async def lock_ratings(conn: asyncpg.Connection, players: Sequence[str], pool: str) -> dict[str, Rating]:
    """The players' ratings in `pool`, locked until the transaction ends (in name order, so two games
    rated at once cannot deadlock); a player new to the pool gets the default rating."""
    names = sorted(set(players))
    await conn.execute(
        "INSERT INTO ratings (player, pool, mu, sigma, ordinal, games) "
        "SELECT p, $2, $3, $4, $5, 0 FROM unnest($1::text[]) AS p ON CONFLICT DO NOTHING",
        names,
        pool,
        Rating().mu,
        Rating().sigma,
        Rating().ordinal,
    )
    rows = await conn.fetch(
        "SELECT player, mu, sigma, games FROM ratings WHERE pool = $2 AND player = ANY($1::text[]) "
        "ORDER BY player FOR UPDATE",
        names,
        pool,
    )
    return {r["player"]: Rating(r["mu"], r["sigma"], r["games"]) for r in rows}


async def save_ratings(conn: asyncpg.Connection, pool: str, ratings: dict[str, Rating]) -> None:
    names = sorted(ratings)
    await conn.execute(
        "UPDATE ratings AS r SET mu = n.mu, sigma = n.sigma, ordinal = n.ordinal, games = n.games, updated_at = now() "
        "FROM unnest($2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int[]) AS n(player, mu, sigma, "
        "ordinal, games) WHERE r.pool = $1 AND r.player = n.player",
        pool,
        names,
        [ratings[n].mu for n in names],
        [ratings[n].sigma for n in names],
        [ratings[n].ordinal for n in names],
        [ratings[n].games for n in names],
    )


async def insert_result(
    conn: asyncpg.Connection,
    table_id: str,
    seat: int,
    player: str,
    place: int,
    rated: bool,
    pool: str | None,
    before: Rating | None,
    after: Rating | None,
    xp: int,
    achievements: Sequence[str],
    ended_wall_ms: int,
) -> None:
    delta = after.ordinal - before.ordinal if before is not None and after is not None else 0.0
    await conn.execute(
        "INSERT INTO results (table_id, seat, player, place, rated, pool, mu_before, sigma_before, mu_after, "
        "sigma_after, ordinal_delta, xp, achievements, ended_wall_ms) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        table_id,
        seat,
        player,
        place,
        rated,
        pool,
        before.mu if before else None,
        before.sigma if before else None,
        after.mu if after else None,
        after.sigma if after else None,
        delta,
        xp,
        list(achievements),
        ended_wall_ms,
    )


async def add_to_profile(conn: asyncpg.Connection, player: str, xp: int, rated: bool) -> None:
    await conn.execute(
        "INSERT INTO profiles (player, xp, games, rated_games) VALUES ($1, $2, 1, $3) "
        "ON CONFLICT (player) DO UPDATE SET xp = profiles.xp + EXCLUDED.xp, games = profiles.games + 1, "
        "rated_games = profiles.rated_games + EXCLUDED.rated_games, updated_at = now()",
        player,
        xp,
        1 if rated else 0,
    )


async def achievements_of(conn: asyncpg.Connection | asyncpg.Pool, player: str) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT achievement, table_id, granted_at FROM achievements WHERE player = $1 ORDER BY granted_at, achievement",
        player,
    )
    return rows


async def grant(conn: asyncpg.Connection, player: str, achievements: Sequence[str], table_id: str) -> None:
    await conn.execute(
        "INSERT INTO achievements (player, achievement, table_id) SELECT $1, a, $3 FROM unnest($2::text[]) AS a "
        "ON CONFLICT DO NOTHING",
        player,
        list(achievements),
        table_id,
    )


async def advance_quests(conn: asyncpg.Connection, player: str, steps: dict[str, int]) -> None:
    for quest, step in steps.items():
        target = QUESTS[quest][1]
        await conn.execute(
            "INSERT INTO quests (player, quest, progress, target, completed_at) "
            "VALUES ($1, $2, LEAST($3::int, $4::int), $4::int, CASE WHEN $3::int >= $4::int THEN now() END) "
            "ON CONFLICT (player, quest) DO UPDATE SET progress = LEAST(quests.progress + $3::int, quests.target), "
            "completed_at = COALESCE(quests.completed_at, CASE WHEN quests.progress + $3::int >= quests.target "
            "THEN now() END)",
            player,
            quest,
            step,
            target,
        )


# --- reads ---


async def profile(conn: asyncpg.Connection | asyncpg.Pool, player: str) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT xp, games, rated_games FROM profiles WHERE player = $1", player)


async def ratings_of(conn: asyncpg.Connection | asyncpg.Pool, player: str) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT pool, mu, sigma, ordinal, games FROM ratings WHERE player = $1 AND games > 0 ORDER BY pool", player
    )
    return rows


async def quests_of(conn: asyncpg.Connection | asyncpg.Pool, player: str) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT quest, progress, target, completed_at FROM quests WHERE player = $1 ORDER BY quest", player
    )
    return rows


async def leaderboard(
    conn: asyncpg.Connection | asyncpg.Pool, pool: str, offset: int, limit: int
) -> tuple[int, list[asyncpg.Record]]:
    total = await conn.fetchval("SELECT count(*) FROM ratings WHERE pool = $1 AND games > 0", pool)
    rows = await conn.fetch(
        "SELECT player, mu, sigma, ordinal, games, COALESCE(("
        "  SELECT seat->>'display_name' FROM matches m, jsonb_array_elements(m.seats) seat"
        "  WHERE seat->>'player_id' = ratings.player ORDER BY m.formed_unix_ms DESC LIMIT 1"
        "), player) AS display_name "
        "FROM ratings WHERE pool = $1 AND games > 0 ORDER BY ordinal DESC, player LIMIT $2 OFFSET $3",
        pool,
        limit,
        offset,
    )
    return int(total), rows


_RESULT = """
SELECT r.*, g.mode, g.reason, g.rounds, g.real_ms,
       (SELECT count(*) FROM results o WHERE o.table_id = r.table_id) AS players
FROM results r JOIN rated_games g USING (table_id)
"""


async def history(conn: asyncpg.Connection | asyncpg.Pool, player: str, limit: int) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        _RESULT + "WHERE r.player = $1 ORDER BY r.ended_wall_ms DESC, r.table_id LIMIT $2", player, limit
    )
    return rows


async def game(
    conn: asyncpg.Connection | asyncpg.Pool, table_id: str
) -> tuple[asyncpg.Record | None, list[asyncpg.Record]]:
    verdict = await conn.fetchrow("SELECT * FROM rated_games WHERE table_id = $1", table_id)
    if verdict is None:
        return None, []
    return verdict, await conn.fetch(_RESULT + "WHERE r.table_id = $1 ORDER BY r.seat", table_id)
