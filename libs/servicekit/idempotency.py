"""Consumers' idempotency: a redelivered message must change nothing.

JetStream delivers a message again when its ack was lost (a crash between the commit and the ack),
so every handler's effect is idempotent. Two ways, chosen per effect:

* A natural key: the effect inserts a row whose key the message determines (an auction by table
  and auction id, a bet by table and seq, a game's verdict by table) with ON CONFLICT DO NOTHING,
  and a second delivery finds it. Best when there is such a row: nothing extra is stored.
* A processed-message record, for an effect with no row of its own to key (closing a table's bets,
  freezing their timers): `first_delivery` inserts (consumer, key) into `processed_messages` in the
  effect's transaction, and the effect runs only the first time. The table is the kit's
  (`servicekit/migrations`, applied by the runner in every service's schema).
"""

from __future__ import annotations

from pathlib import Path

import asyncpg

#: The kit's migrations, applied by `servicekit.runner` before each service's own.
MIGRATIONS = Path(__file__).parent / "migrations"


async def first_delivery(conn: asyncpg.Connection, consumer: str, key: str) -> bool:
    """Record `key` (a message's identity, e.g. "<table_id>:<seq>") as handled by `consumer`, in the
    caller's transaction; False if it was handled before (a redelivery: change nothing)."""
    done = await conn.fetchval(
        "INSERT INTO processed_messages (consumer, message_key) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING true",
        consumer,
        key,
    )
    return bool(done)


__all__ = ["MIGRATIONS", "first_delivery"]
