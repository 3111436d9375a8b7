"""The transactional outbox relay.

A service writes rows to its `outbox` table (id, subject, msg_id, payload) in
the same transaction as its own state, so an event is published if and only
if it was committed. The relay publishes the rows to JetStream in id order
with `Nats-Msg-Id` (JetStream drops a repeat within its duplicate window) and
deletes them only after the stream acked. The service wakes it after each
commit; it also looks every half second.

Instances of one service share an outbox: one relay publishes at a time (a
transaction-scoped advisory lock named after the service, taken without
waiting), so two never send the same rows side by side (JetStream would drop
the repeats, but refuse a repeat still in flight with an error); a relay that
finds the lock taken looks again after `BUSY_S`, so what its own instance
committed goes out as soon as the other relay's batch is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import asyncpg
from nats.js import JetStreamContext
from prometheus_client import Counter, Gauge

from .errors import unreachable

log = logging.getLogger(__name__)

#: Backoff of the relay while NATS or Postgres is away (doubling up to the maximum).
RETRY_FIRST_S = 0.25
RETRY_MAX_S = 1.0
#: How long the relay waits for JetStream's acks of a batch before it publishes the batch again (the
#: repeats JetStream already has are dropped by their Nats-Msg-Id).
ACK_TIMEOUT_S = 5.0

PUBLISHED = Counter("outbox_published_messages_total", "Outbox messages acked by JetStream", ["service"])
DUPLICATES = Counter("outbox_duplicate_messages_total", "Outbox messages JetStream already had", ["service"])
PENDING = Gauge("outbox_pending_messages", "Outbox rows not yet published", ["service"])
OLDEST_AGE = Gauge(
    "outbox_oldest_pending_age_seconds", "Age of the oldest outbox row not yet published (0: none)", ["service"]
)
#: How soon a relay that found another instance's relay publishing looks again.
BUSY_S = 0.02
#: Seconds between two measurements of the backlog (one small query).
MEASURE_EVERY_S = 2.0


def ordering_key(msg_id: str) -> str:
    """What a message keeps its order within: its table, the part of its id before the first ':' (every
    outbox id starts with the table's: `<table>:<seq>`, `<table>:<seq>:<topic>`, `<table>:<bet>:<status>`)."""
    return msg_id.split(":", 1)[0]


class Relay:
    """Publishes outbox rows to JetStream, oldest first, until stopped."""

    def __init__(self, pool: asyncpg.Pool, js: JetStreamContext, service: str, batch: int = 256) -> None:
        self.pool = pool
        self.js = js
        self.service = service
        self.batch = batch
        self._wake = asyncio.Event()
        self._stopped = False

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        # Measured in a task of its own: a publish waiting on an absent JetStream must not freeze the figures
        # that show it (outbox_oldest_pending_age_seconds is what the OutboxRelayStalled alert reads).
        measuring = asyncio.create_task(self._measure(), name=f"outbox-measure-{self.service}")
        try:
            await self._relay()
        finally:
            measuring.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await measuring

    async def _relay(self) -> None:
        delay = RETRY_FIRST_S
        while not self._stopped:
            try:
                sent = await self.publish_once()
                if sent < 0:  # another instance's relay is publishing: our rows go after its batch
                    await asyncio.sleep(BUSY_S)
                    continue
            except Exception as exc:  # NATS or Postgres away: retry with backoff, never drop
                if unreachable(exc):
                    log.warning("outbox relay: %s: %s; retrying in %.1f s", type(exc).__name__, exc, delay)
                else:
                    log.exception("outbox relay failed; retrying in %.1f s", delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
                continue
            delay = RETRY_FIRST_S
            if sent < self.batch:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=0.5)

    async def _measure(self) -> None:
        """The backlog and the age of its oldest row, every MEASURE_EVERY_S."""
        while not self._stopped:
            try:
                async with self.pool.acquire() as conn:
                    row = await conn.fetchrow(
                        "SELECT count(*) AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0) AS age"
                        " FROM outbox"
                    )
                PENDING.labels(self.service).set(row["n"])
                OLDEST_AGE.labels(self.service).set(max(0.0, float(row["age"])))
            except Exception:  # Postgres away: the figures stay as last seen; the relay logs the outage
                log.debug("outbox backlog not measured", exc_info=True)
            await asyncio.sleep(MEASURE_EVERY_S)

    def stop(self) -> None:
        self._stopped = True
        self._wake.set()

    async def _publish_in_turn(self, chain: list[asyncpg.Record]) -> list[Any]:
        """One table's rows, each published once the one before it was acked: their acks."""
        acks = []
        for r in chain:
            future = await self.js.publish_async(
                r["subject"], bytes(r["payload"]), headers={"Nats-Msg-Id": r["msg_id"]}
            )
            try:
                acks.append(await future)
            except asyncio.CancelledError:
                future.cancel()  # frees its slot of the client's pending publishes
                raise
        return acks

    async def publish_once(self) -> int:
        """Publish the oldest rows and delete them: how many (-1: another instance's relay is publishing)."""
        async with self.pool.acquire() as conn, conn.transaction():
            if not await conn.fetchval("SELECT pg_try_advisory_xact_lock(hashtext($1))", f"outbox:{self.service}"):
                return -1
            rows = await conn.fetch("SELECT id, subject, msg_id, payload FROM outbox ORDER BY id LIMIT $1", self.batch)
            if not rows:
                return 0
            # One table's messages one after the other, each sent once the one before it is acked; the
            # tables side by side. Sent all at once, a message lost with a connection (a NATS node gone)
            # while the next one, buffered by the client, was stored after the reconnect put that table's
            # events out of order on the stream; sent in turn, the next waits, and the retry sends both.
            chains: dict[str, list[asyncpg.Record]] = {}
            for r in rows:
                chains.setdefault(ordering_key(r["msg_id"]), []).append(r)
            # An ack lost with a connection (NATS restarted) never comes: give up (TimeoutError; the chains'
            # publishes waiting for their acks are cancelled with them) and publish again.
            acked = await asyncio.wait_for(
                asyncio.gather(*(self._publish_in_turn(chain) for chain in chains.values())), ACK_TIMEOUT_S
            )
            for acks in acked:
                for ack in acks:
                    (DUPLICATES if ack.duplicate else PUBLISHED).labels(self.service).inc()
            await conn.execute("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [r["id"] for r in rows])
            return len(rows)
