"""The matchmaking service's SQL: every statement it runs, in one place (schema "matchmaking")."""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from .queues import Plan


async def add_player(conn: asyncpg.Connection, player_id: str, name: str, is_bot: bool) -> None:
    await conn.execute(
        "INSERT INTO players (player_id, display_name, is_bot) VALUES ($1, $2, $3)", player_id, name, is_bot
    )


async def lock_player(conn: asyncpg.Connection, player_id: str) -> asyncpg.Record | None:
    """The player's row, locked until the transaction ends: one player's calls run one at a time."""
    return await conn.fetchrow("SELECT * FROM players WHERE player_id = $1 FOR UPDATE", player_id)


async def ratings(conn: asyncpg.Connection, player_ids: list[str]) -> dict[str, tuple[float, float]]:
    """The default rating source: (mu, sigma) per player from the players table (0 ± 0 unless set)."""
    rows = await conn.fetch(
        "SELECT player_id, rating, rating_sigma FROM players WHERE player_id = ANY($1::text[])", player_ids
    )
    return {r["player_id"]: (r["rating"], r["rating_sigma"]) for r in rows}


async def set_rating(conn: asyncpg.Connection, player_id: str, mu: float, sigma: float) -> None:
    await conn.execute("UPDATE players SET rating = $2, rating_sigma = $3 WHERE player_id = $1", player_id, mu, sigma)


async def engagements(conn: asyncpg.Connection, player_id: str) -> asyncpg.Record:
    """In one query: the mode of the player's waiting ticket, its live table and its open lobby (each
    None if none)."""
    row: asyncpg.Record = await conn.fetchrow(
        "SELECT (SELECT mode FROM tickets WHERE player_id = $1 AND status = 'waiting') AS waiting_mode, "
        "(SELECT m.table_id FROM match_seats s JOIN matches m USING (table_id) "
        " WHERE s.player_id = $1 AND m.status = 'live' ORDER BY m.formed_at DESC LIMIT 1) AS live_table, "
        "(SELECT l.lobby_id FROM lobby_members m JOIN lobbies l USING (lobby_id) "
        " WHERE m.player_id = $1 AND l.status = 'open' LIMIT 1) AS open_lobby",
        player_id,
    )
    return row


async def live_table_of(conn: asyncpg.Connection, player_id: str) -> str | None:
    value: str | None = await conn.fetchval(
        "SELECT m.table_id FROM match_seats s JOIN matches m USING (table_id) "
        "WHERE s.player_id = $1 AND m.status = 'live' ORDER BY m.formed_at DESC LIMIT 1",
        player_id,
    )
    return value


async def open_lobby_of(conn: asyncpg.Connection, player_id: str) -> str | None:
    value: str | None = await conn.fetchval(
        "SELECT l.lobby_id FROM lobby_members m JOIN lobbies l USING (lobby_id) "
        "WHERE m.player_id = $1 AND l.status = 'open' LIMIT 1",
        player_id,
    )
    return value


async def party_size_of(conn: asyncpg.Connection, mode: str, party_id: str) -> int | None:
    value: int | None = await conn.fetchval(
        "SELECT party_size FROM tickets WHERE mode = $1 AND party_id = $2 AND status = 'waiting' LIMIT 1",
        mode,
        party_id,
    )
    return value


async def party_count(conn: asyncpg.Connection, mode: str, party_id: str) -> int:
    return int(
        await conn.fetchval(
            "SELECT count(*) FROM tickets WHERE mode = $1 AND party_id = $2 AND status = 'waiting'", mode, party_id
        )
    )


async def add_ticket(
    conn: asyncpg.Connection,
    ticket_id: str,
    player_id: str,
    mode: str,
    party_id: str | None,
    party_size: int,
    bot_fill: bool,
) -> None:
    await conn.execute(
        "INSERT INTO tickets (ticket_id, player_id, mode, party_id, party_size, bot_fill, enqueued_at) "
        "VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp())",
        ticket_id,
        player_id,
        mode,
        party_id,
        party_size,
        bot_fill,
    )


async def cancel_ticket(conn: asyncpg.Connection, player_id: str) -> int:
    result = await conn.execute(
        "UPDATE tickets SET status = 'cancelled', closed_at = now() WHERE player_id = $1 AND status = 'waiting'",
        player_id,
    )
    return int(result.split()[-1])


async def latest_ticket(conn: asyncpg.Connection, player_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        "SELECT *, extract(epoch FROM clock_timestamp() - enqueued_at) AS waited_s FROM tickets "
        "WHERE player_id = $1 ORDER BY enqueued_at DESC LIMIT 1",
        player_id,
    )


_WAITING = (
    "SELECT t.ticket_id, t.player_id, p.display_name, t.party_id, t.party_size, t.bot_fill, t.enqueued_at, "
    "extract(epoch FROM clock_timestamp() - t.enqueued_at)::float8 AS waited_s "
    "FROM tickets t JOIN players p USING (player_id) WHERE t.mode = $1 AND t.status = 'waiting' "
    "ORDER BY t.enqueued_at"
)


async def take_mode(conn: asyncpg.Connection, mode: str) -> bool:
    """This transaction's turn to match `mode` (False: another matcher is matching it now).

    One pass per mode at a time sees the mode's whole queue: two matchers each holding part of it
    would each form small tables of their part, and could leave a player alone with nobody to sit with.
    """
    got: bool = await conn.fetchval("SELECT pg_try_advisory_xact_lock(hashtext($1))", f"matcher:{mode}")
    return got


async def lock_waiting(conn: asyncpg.Connection, mode: str) -> list[asyncpg.Record]:
    """The waiting tickets of a mode, locked until the transaction ends (one a player's own call holds
    at the moment is skipped: it waits for the next pass)."""
    rows: list[asyncpg.Record] = await conn.fetch(_WAITING + " FOR UPDATE OF t SKIP LOCKED", mode)
    return rows


async def waiting(conn: asyncpg.Connection, mode: str) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(_WAITING, mode)
    return rows


async def recent_wait_s(conn: asyncpg.Connection, mode: str) -> float | None:
    """The average wait of the last 20 matched tickets of a mode."""
    value = await conn.fetchval(
        "SELECT avg(w) FROM (SELECT extract(epoch FROM closed_at - enqueued_at)::float8 AS w FROM tickets "
        "WHERE mode = $1 AND status = 'matched' ORDER BY closed_at DESC LIMIT 20) AS recent",
        mode,
    )
    return float(value) if value is not None else None


async def add_match(
    conn: asyncpg.Connection,
    table_id: str,
    mode: str,
    kind: str,
    rated: bool,
    rule_card: str,
    seats: list[tuple[int, str | None, str, bool, int]],
    lobby_id: str | None = None,
) -> None:
    """The match and its seats `(seat, player_id or None, name, is_bot, team)`."""
    await conn.execute(
        "INSERT INTO matches (table_id, mode, kind, rated, rule_card, lobby_id) VALUES ($1, $2, $3, $4, $5, $6)",
        table_id,
        mode,
        kind,
        rated,
        rule_card,
        lobby_id,
    )
    await conn.executemany(
        "INSERT INTO match_seats (table_id, seat, player_id, display_name, is_bot, team) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        [(table_id, *s) for s in seats],
    )


async def close_tickets(conn: asyncpg.Connection, table_id: str, plan: Plan) -> None:
    await conn.executemany(
        "UPDATE tickets SET status = 'matched', closed_at = now(), table_id = $1, seat = $2 WHERE ticket_id = $3",
        [(table_id, s.seat, s.ticket.ticket_id) for s in plan.seats if s.ticket is not None],
    )


async def add_attempts(conn: asyncpg.Connection, attempts: list[tuple[str, str, bool, str]]) -> None:
    """(request_id, mode, rated, seats JSON) of tables about to be asked for; one already there stays."""
    await conn.executemany(
        "INSERT INTO match_attempts (request_id, mode, rated, seats) VALUES ($1, $2, $3, $4::jsonb) "
        "ON CONFLICT (request_id) DO NOTHING",
        attempts,
    )


async def attempts(conn: asyncpg.Connection, mode: str) -> list[asyncpg.Record]:
    """A mode's open attempts, the oldest first: request_id, rated, seats (JSON text)."""
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT request_id, rated, seats::text AS seats FROM match_attempts WHERE mode = $1 "
        "ORDER BY created_at, request_id",
        mode,
    )
    return rows


async def drop_attempt(conn: asyncpg.Connection, request_id: str) -> None:
    await conn.execute("DELETE FROM match_attempts WHERE request_id = $1", request_id)


async def ticket_statuses(conn: asyncpg.Connection, ticket_ids: list[str]) -> dict[str, str]:
    rows = await conn.fetch("SELECT ticket_id, status FROM tickets WHERE ticket_id = ANY($1::text[])", ticket_ids)
    return {r["ticket_id"]: r["status"] for r in rows}


async def lock_waiting_ticket(conn: asyncpg.Connection, player_id: str) -> str | None:
    """The player's waiting ticket, locked (a matcher pass holding it is waited for)."""
    ticket_id: str | None = await conn.fetchval(
        "SELECT ticket_id FROM tickets WHERE player_id = $1 AND status = 'waiting' FOR UPDATE", player_id
    )
    return ticket_id


async def in_attempt(conn: asyncpg.Connection, ticket_id: str, within_s: float) -> bool:
    """A table is being formed for the ticket: an open attempt made in the last `within_s` names it."""
    found: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM match_attempts WHERE seats @> jsonb_build_array(jsonb_build_object("
        "'ticket_id', $1::text)) AND created_at > clock_timestamp() - make_interval(secs => $2))",
        ticket_id,
        within_s,
    )
    return found


async def match(conn: asyncpg.Connection, table_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        "SELECT *, (extract(epoch FROM formed_at) * 1000)::bigint AS formed_ms FROM matches WHERE table_id = $1",
        table_id,
    )


async def seats(conn: asyncpg.Connection, table_id: str) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT s.*, coalesce(p.is_bot, s.is_bot) AS bot FROM match_seats s "
        "LEFT JOIN players p USING (player_id) WHERE s.table_id = $1 ORDER BY seat",
        table_id,
    )
    return rows


async def seats_of(conn: asyncpg.Connection, table_ids: list[str]) -> dict[str, list[asyncpg.Record]]:
    """`seats` of many tables in one query, by table id."""
    rows = await conn.fetch(
        "SELECT s.*, coalesce(p.is_bot, s.is_bot) AS bot FROM match_seats s "
        "LEFT JOIN players p USING (player_id) WHERE s.table_id = ANY($1::text[]) ORDER BY s.table_id, seat",
        table_ids,
    )
    out: dict[str, list[asyncpg.Record]] = {t: [] for t in table_ids}
    for r in rows:
        out[r["table_id"]].append(r)
    return out


async def live_matches(conn: asyncpg.Connection, limit: int = 200) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT *, (extract(epoch FROM formed_at) * 1000)::bigint AS formed_ms FROM matches "
        "WHERE status = 'live' ORDER BY formed_at DESC LIMIT $1",
        limit,
    )
    return rows


async def finish_match(conn: asyncpg.Connection, table_id: str, winner: int) -> bool:
    """Mark a live match finished; False when it was already (a redelivery) or is not ours."""
    result: str = await conn.execute(
        "UPDATE matches SET status = 'finished', finished_at = now(), winner = $2 "
        "WHERE table_id = $1 AND status = 'live'",
        table_id,
        winner,
    )
    return result != "UPDATE 0"


async def add_outbox(conn: asyncpg.Connection, subject: str, msg_id: str, payload: bytes) -> None:
    await conn.execute("INSERT INTO outbox (subject, msg_id, payload) VALUES ($1, $2, $3)", subject, msg_id, payload)


# Lobbies (custom tables)


async def add_lobby(
    conn: asyncpg.Connection, lobby_id: str, host: str, settings: dict[str, Any], seats: int, rule_card: str
) -> None:
    await conn.execute(
        "INSERT INTO lobbies (lobby_id, host_player_id, settings, seats, rule_card) VALUES ($1, $2, $3, $4, $5)",
        lobby_id,
        host,
        json.dumps(settings),
        seats,
        rule_card,
    )
    await add_member(conn, lobby_id, host)


async def add_member(conn: asyncpg.Connection, lobby_id: str, player_id: str) -> None:
    await conn.execute(
        "INSERT INTO lobby_members (lobby_id, player_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", lobby_id, player_id
    )


async def remove_member(conn: asyncpg.Connection, lobby_id: str, player_id: str) -> None:
    await conn.execute("DELETE FROM lobby_members WHERE lobby_id = $1 AND player_id = $2", lobby_id, player_id)


async def lobby(conn: asyncpg.Connection, lobby_id: str, lock: bool = False) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT * FROM lobbies WHERE lobby_id = $1" + (" FOR UPDATE" if lock else ""), lobby_id)


async def members(conn: asyncpg.Connection, lobby_id: str) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT m.player_id, p.display_name FROM lobby_members m JOIN players p USING (player_id) "
        "WHERE m.lobby_id = $1 ORDER BY m.joined_at, m.player_id",
        lobby_id,
    )
    return rows


async def set_lobby_status(conn: asyncpg.Connection, lobby_id: str, status: str, table_id: str | None = None) -> None:
    await conn.execute("UPDATE lobbies SET status = $2, table_id = $3 WHERE lobby_id = $1", lobby_id, status, table_id)


async def waiting_counts(conn: asyncpg.Connection) -> dict[str, int]:
    """Tickets waiting per mode (the lobby shows them by its queues)."""
    rows = await conn.fetch("SELECT mode, count(*) AS n FROM tickets WHERE status = 'waiting' GROUP BY mode")
    return {r["mode"]: int(r["n"]) for r in rows}


async def open_lobbies(conn: asyncpg.Connection, limit: int = 200) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT * FROM lobbies WHERE status = 'open' ORDER BY created_at DESC LIMIT $1",
        limit,
    )
    return rows
