"""Postgres: the connection pool and a migration runner of plain, ordered SQL files."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from pathlib import Path

import asyncpg

from .errors import unreachable

log = logging.getLogger(__name__)

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    service    text        NOT NULL,
    version    text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (service, version)
)
"""


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Services set no session state, so a released connection needs no reset query
    (asyncpg's default costs a round trip per release)."""


async def create_pool(
    url: str, min_size: int = 2, max_size: int = 8, schema: str | None = None, wait_s: float = 60.0
) -> asyncpg.Pool:
    """A pool; with `schema`, every connection works in that schema (created if missing), so services
    can share one database without sharing tables (each has its own `outbox`, `schema_migrations`, ...).

    A service started while Postgres is away (restarting, failing over) waits for it up to `wait_s`,
    retrying with backoff, rather than exit."""
    delay = 0.1
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        try:
            return await _create_pool(url, min_size, max_size, schema)
        except Exception as exc:
            if not unreachable(exc) or asyncio.get_running_loop().time() + delay > deadline:
                raise
            log.warning("Postgres out of reach (%s: %s); retrying in %.1f s", type(exc).__name__, exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


async def _create_pool(url: str, min_size: int, max_size: int, schema: str | None) -> asyncpg.Pool:
    settings = None
    if schema is not None:
        if not schema.isidentifier():
            raise ValueError(f"not a schema name: {schema!r}")
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        except asyncpg.UniqueViolationError:  # two services creating it at once
            pass
        finally:
            await conn.close()
        settings = {"search_path": schema}
    pool = await asyncpg.create_pool(
        url, min_size=min_size, max_size=max_size, reset=_keep_session, server_settings=settings
    )
    assert pool is not None
    return pool


async def migrate(pool: asyncpg.Pool, service: str, directory: Path) -> list[str]:
    """Apply the not yet applied `NNN_name.sql` files of `directory` in order, each in a
    transaction with its record; refuse if an applied file was changed since."""
    applied_now: list[str] = []
    async with pool.acquire() as conn:
        await conn.execute("SELECT pg_advisory_lock(hashtext('schema_migrations'))")
        try:
            await conn.execute(_MIGRATIONS_TABLE)
            done = {
                r["version"]: r["checksum"]
                for r in await conn.fetch("SELECT version, checksum FROM schema_migrations WHERE service = $1", service)
            }
            for path in sorted(directory.glob("*.sql")):
                sql = path.read_text()
                checksum = hashlib.sha256(sql.encode()).hexdigest()
                if path.name in done:
                    if done[path.name] != checksum:
                        raise RuntimeError(f"migration {service}/{path.name} changed after it was applied")
                    continue
                async with conn.transaction():
                    await conn.execute(sql)
                    await conn.execute(
                        "INSERT INTO schema_migrations (service, version, checksum) VALUES ($1, $2, $3)",
                        service,
                        path.name,
                        checksum,
                    )
                log.info("applied migration %s/%s", service, path.name)
                applied_now.append(path.name)
        finally:
            await conn.execute("SELECT pg_advisory_unlock(hashtext('schema_migrations'))")
    return applied_now
