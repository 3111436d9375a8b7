"""Partition leases: which instance of the table service runs which tables.

A table belongs to partition `partition_of(table_id, P)` (P fixed at the first start, TABLE_PARTITIONS).
Each instance registers itself (`table_instances`: its id, the address clients reach it at, a
heartbeat) and every TTL/3 (TABLE_LEASE_TTL_S) renews its leases, takes free or expired partitions up
to its fair share ceil(P / live instances) (`FOR UPDATE SKIP LOCKED`, the epoch bumped on every
change of owner) and hands back those above it, so the load rebalances when an instance joins or
leaves. Every commit checks its lease in its own transaction (`table_fence` in migration 004), so a
lease is only a promise the fence keeps: an instance frozen past its lease cannot write after the next
owner took over.

An instance is live while it holds a session advisory lock on its id (a dedicated connection): a
process that dies loses it at once, so a crashed instance's partitions are taken at the next beat of
another (or of its own restart), not a TTL later; a second process with the same id cannot take it and
refuses to start. A frozen process keeps its connection, so its partitions move only once their
leases expired.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

import asyncpg
import grpc
from prometheus_client import Gauge

from monopoly.v1 import table_pb2_grpc

from . import store

log = logging.getLogger(__name__)

PARTITIONS_OWNED = Gauge("table_partitions_owned", "Partitions this instance holds the lease of", ["instance"])
#: The first key of an instance's session advisory lock (the second: a hash of the schema and its id).
LOCK_NAMESPACE = 7_411_004
#: What the fence raises when this instance no longer holds a table's partition (migration 004).
FENCED_SQLSTATE = "MNF01"
#: An instance's registry row is forgotten this many TTLs after its last heartbeat.
FORGET_AFTER_TTLS = 20


@dataclass(frozen=True, slots=True)
class InstanceRow:
    """One instance as the registry and the leases show it (`TableService.ListInstances`)."""

    instance_id: str
    address: str
    partitions: int
    tables: int
    heartbeat_age_s: float
    live: bool


class Refused(SystemExit):
    """A start that must not go on (another partition count, an instance id in use): the message says why."""


class IdInUse(Exception):
    """The instance id's advisory lock is held by another session. At the start: another live instance
    has the id (`Refused`). Taking it again after the lock's connection was lost: most likely this
    instance's own old session, which Postgres has not yet seen die; the next heartbeat tries again
    (meanwhile nothing is renewed, so the fence stops this instance's commits once its leases expire)."""


def partition_of(table_id: str, partitions: int) -> int:
    """A table's partition: stable across processes and versions (the same as migration 004's backfill,
    `('x' || substr(md5(table_id), 1, 15))::bit(60)::bigint % P`)."""
    return int(hashlib.md5(table_id.encode(), usedforsecurity=False).hexdigest()[:15], 16) % partitions


def fenced(exc: BaseException) -> bool:
    """True when Postgres refused a commit because its instance no longer holds the table's partition."""
    return isinstance(exc, asyncpg.PostgresError) and getattr(exc, "sqlstate", None) == FENCED_SQLSTATE


_LIVE = f"""
    i.heartbeat_at > now() - make_interval(secs => $1)
    AND EXISTS (
        SELECT 1 FROM pg_locks k
        WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
          AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND k.classid = {LOCK_NAMESPACE}::oid AND k.objid = hashtext(current_schema() || '/' || i.instance_id)::oid
    )
"""


class Leases:
    """This instance's leases; `on_gained` loads a partition's tables, `on_lost` stops them."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        database_url: str,
        instance_id: str,
        address: str,
        partitions: int,
        ttl_s: float,
    ) -> None:
        self.pool = pool
        self.database_url = database_url
        self.instance_id = instance_id
        self.address = address
        self.partitions = partitions
        self.ttl_s = ttl_s
        #: The partitions this instance holds, with the epoch of its lease.
        self.held: dict[int, int] = {}
        #: Until when a partition held by an instance that holds no lock, with its lease unexpired,
        #: is not taken (`_ensure_lock`: after this instance's own lock was lost).
        self._patient_until = 0.0
        self.on_gained: Callable[[list[int]], Coroutine[Any, Any, None]] = _nothing
        self.on_lost: Callable[[list[int]], Coroutine[Any, Any, None]] = _nothing
        #: Opens a channel to another instance (with this service's own token): `peer`. None: no peers.
        self.open_channel: Callable[[str], grpc.aio.Channel] | None = None
        self._peers: dict[str, table_pb2_grpc.TableServiceStub] = {}
        self._lock_conn: asyncpg.Connection | None = None
        self._task: asyncio.Task[None] | None = None
        self._loads: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._beat_lock = asyncio.Lock()
        PARTITIONS_OWNED.labels(instance_id).set_function(lambda: len(self.held))

    @property
    def beat_s(self) -> float:
        return self.ttl_s / 3

    def partition(self, table_id: str) -> int:
        return partition_of(table_id, self.partitions)

    def epoch_of(self, table_id: str) -> int | None:
        """The epoch this instance holds the table's partition at (None: not held)."""
        return self.held.get(self.partition(table_id))

    async def start(self) -> None:
        """Fix or check the partition count, take this instance's id, then its first share of partitions."""
        async with self.pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO table_partitioning (partitions) VALUES ($1) ON CONFLICT (one) DO NOTHING", self.partitions
            )
            fixed = await conn.fetchval("SELECT partitions FROM table_partitioning")
            if fixed != self.partitions:
                raise Refused(
                    f"table service: TABLE_PARTITIONS={self.partitions}, but this database's tables are split into "
                    f"{fixed} partitions (fixed at its first start); start every instance with TABLE_PARTITIONS={fixed}"
                )
            await conn.execute(
                "INSERT INTO partition_leases (partition) SELECT generate_series(0, $1 - 1) ON CONFLICT DO NOTHING",
                self.partitions,
            )
            # Tables from before partitions get theirs (the same hash as partition_of).
            await conn.execute(
                "UPDATE tables SET partition = ('x' || substr(md5(table_id), 1, 15))::bit(60)::bigint % $1 "
                "WHERE partition IS NULL",
                self.partitions,
            )
            key = await conn.fetchval("SELECT hashtext(current_schema() || '/' || $1)", self.instance_id)
        try:
            await self._take_id(key)
        except IdInUse as exc:
            raise Refused(f"table service: {exc}; give each instance its own TABLE_INSTANCE_ID") from None
        await self.beat()

    async def _take_id(self, key: int) -> None:
        conn = await asyncpg.connect(self.database_url)
        try:
            if not await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", LOCK_NAMESPACE, key):
                raise IdInUse(f"instance id {self.instance_id!r} is in use by another live instance")
        except BaseException:
            await conn.close()
            raise
        self._lock_conn = conn
        async with self.pool.acquire() as c:
            await c.execute(
                "INSERT INTO table_instances (instance_id, address) VALUES ($1, $2) ON CONFLICT (instance_id) "
                "DO UPDATE SET address = EXCLUDED.address, heartbeat_at = now(), started_at = now()",
                self.instance_id,
                self.address,
            )

    def run(self) -> None:
        """Beat every TTL/3 in the background until `stop`."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="leases")

    def nudge(self) -> None:
        """Beat now (a commit was fenced: this instance's view of its leases is out of date)."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.beat_s)
            self._wake.clear()
            try:
                await self.beat()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Postgres away: nothing taken; held leases expire and the fence stops commits
                log.warning("lease heartbeat failed (%s: %s); retrying in %.1f s", type(exc).__name__, exc, self.beat_s)

    async def beat(self) -> None:
        async with self._beat_lock:
            await self._ensure_lock()
            lost, excess, gained = await self._beat()
            if lost:
                log.warning("partitions %s were taken over by another instance", _ranges(lost))
                await self.on_lost(lost)
            if excess:
                for p in excess:  # no new calls for them here; theirs in flight finish as the actors stop
                    self.held.pop(p, None)
                await self.on_lost(excess)
                async with self.pool.acquire() as conn, conn.transaction():
                    await _lock_in_order(conn, excess)
                    await conn.execute(
                        "UPDATE partition_leases SET owner = NULL, expires_at = '-infinity' "
                        "WHERE owner = $1 AND partition = ANY($2::int[])",
                        self.instance_id,
                        excess,
                    )
                log.info("handed back partitions %s (above this instance's fair share)", _ranges(excess))
            if gained:  # loaded beside the beats: thousands of tables must not hold up the renewals
                log.info("took partitions %s", _ranges(gained))
                task = asyncio.create_task(self.on_gained(gained), name="leases-load")
                self._loads.add(task)
                task.add_done_callback(self._loaded)

    def _loaded(self, task: asyncio.Task[None]) -> None:
        self._loads.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("loading the tables of taken partitions failed: %s: %s", type(exc).__name__, exc)

    async def _ensure_lock(self) -> None:
        """The advisory lock's connection lost (Postgres restarted): take the id again."""
        if self._lock_conn is not None and not self._lock_conn.is_closed():
            return
        async with self.pool.acquire() as conn:
            key = await conn.fetchval("SELECT hashtext(current_schema() || '/' || $1)", self.instance_id)
        self._lock_conn = None
        await self._take_id(key)
        # Lost with its connection, as every instance's was if Postgres restarted: for a lease's time,
        # take only free or expired partitions, not those of instances that have not yet taken their
        # own lock back (a restart shorter than the TTL moves no partition).
        self._patient_until = time.monotonic() + self.ttl_s

    async def _beat(self) -> tuple[list[int], list[int], list[int]]:
        """One heartbeat: renew, then take or hand back to the fair share. Returns (lost, excess, gained).

        Decided on a copy of the held leases, adopted only once the transaction committed: a beat that
        fails midway (Postgres restarted) changes nothing here, and the next one finds the same losses
        again and stops their tables' actors (`on_lost`), instead of forgetting them unstopped."""
        now_held = dict(self.held)
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "UPDATE table_instances SET heartbeat_at = now(), address = $2 WHERE instance_id = $1",
                self.instance_id,
                self.address,
            )
            await conn.execute(  # SKIP LOCKED: two instances forgetting the same rows never deadlock
                "DELETE FROM table_instances WHERE instance_id IN (SELECT instance_id FROM table_instances "
                "WHERE heartbeat_at < now() - make_interval(secs => $1) FOR UPDATE SKIP LOCKED)",
                self.ttl_s * FORGET_AFTER_TTLS,
            )
            held = sorted(now_held)
            await _lock_in_order(conn, held)
            renewed = await conn.fetch(
                "UPDATE partition_leases l SET expires_at = now() + make_interval(secs => $1) "
                "FROM unnest($3::int[], $4::bigint[]) AS h(p, e) "
                "WHERE l.partition = h.p AND l.owner = $2 AND l.epoch = h.e RETURNING l.partition",
                self.ttl_s,
                self.instance_id,
                held,
                [now_held[p] for p in held],
            )
            kept = {r["partition"] for r in renewed}
            lost = [p for p in held if p not in kept]
            for p in lost:
                now_held.pop(p, None)
            live = await conn.fetchval(f"SELECT count(*) FROM table_instances i WHERE {_LIVE}", self.ttl_s)
            fair = math.ceil(self.partitions / max(1, live))
            excess: list[int] = sorted(now_held)[fair:] if len(now_held) > fair else []
            gained: list[int] = []
            if len(now_held) < fair:
                rows = await conn.fetch(
                    f"""
                    WITH live AS (SELECT instance_id FROM table_instances i WHERE {_LIVE}),
                    free AS (
                        SELECT l.partition, l.owner AS was_owner, l.expires_at AS was_expiring
                        FROM partition_leases l
                        WHERE l.owner IS NULL OR l.expires_at < now()
                           OR (NOT $5 AND l.owner NOT IN (SELECT instance_id FROM live))
                           OR (l.owner = $2 AND NOT l.partition = ANY($3::int[]))
                        ORDER BY l.partition LIMIT $4
                        FOR UPDATE SKIP LOCKED
                    )
                    UPDATE partition_leases l SET owner = $2, epoch = l.epoch + 1,
                        expires_at = now() + make_interval(secs => $1)
                    FROM free WHERE l.partition = free.partition
                    RETURNING l.partition, l.epoch,
                        CASE WHEN free.was_owner IS NOT NULL AND isfinite(free.was_expiring) THEN
                            (extract(epoch FROM least(now(), free.was_expiring - make_interval(secs => $1))) * 1000)
                        END::bigint AS abandoned_renewed_ms
                    """,
                    self.ttl_s,
                    self.instance_id,
                    sorted(now_held),
                    fair - len(now_held),
                    time.monotonic() < self._patient_until,
                )
                for r in rows:
                    now_held[r["partition"]] = r["epoch"]
                    gained.append(r["partition"])
                # never handed back (its owner killed, frozen or cut off): E2, its tables' clocks stopped
                abandoned = [(r["partition"], r["abandoned_renewed_ms"]) for r in rows if r["abandoned_renewed_ms"]]
                if abandoned:
                    await store.pause_abandoned(conn, abandoned)
        self.held.clear()  # committed: what Postgres now holds for this instance
        self.held.update(now_held)
        return lost, excess, sorted(gained)

    def peer(self, address: str) -> table_pb2_grpc.TableServiceStub:
        """A stub of the instance at `address` (its channel closed with the service's)."""
        if address not in self._peers:
            if self.open_channel is None:
                raise RuntimeError("no channel to other instances")
            self._peers[address] = table_pb2_grpc.TableServiceStub(self.open_channel(address))
        return self._peers[address]

    async def owner_address(self, table_id: str) -> str | None:
        """Where the live owner of a table's partition is reached (None: nobody holds it now)."""
        async with self.pool.acquire() as conn:
            address: str | None = await conn.fetchval(
                "SELECT i.address FROM partition_leases l JOIN table_instances i ON i.instance_id = l.owner "
                f"WHERE l.partition = $2 AND l.expires_at > now() AND {_LIVE}",
                self.ttl_s,
                self.partition(table_id),
            )
        return address

    async def holder_address(self) -> str | None:
        """Where another live instance that holds partitions now is reached (None: none does), for a
        new table asked of this one while it holds none."""
        async with self.pool.acquire() as conn:
            address: str | None = await conn.fetchval(
                "SELECT i.address FROM partition_leases l JOIN table_instances i ON i.instance_id = l.owner "
                f"WHERE l.expires_at > now() AND i.instance_id <> $2 AND {_LIVE} "
                "GROUP BY i.address ORDER BY count(*) DESC LIMIT 1",
                self.ttl_s,
                self.instance_id,
            )
        return address

    async def instances(self, conn: asyncpg.Connection) -> list[InstanceRow]:
        """Every registered instance with the partitions it holds now and the unfinished tables in them."""
        rows = await conn.fetch(
            f"""
            SELECT i.instance_id, i.address, extract(epoch FROM now() - i.heartbeat_at)::float8 AS age,
                   ({_LIVE}) AS live,
                   (SELECT count(*) FROM partition_leases l
                    WHERE l.owner = i.instance_id AND l.expires_at > now())::int AS partitions,
                   (SELECT count(*) FROM tables t JOIN partition_leases l ON l.partition = t.partition
                    WHERE NOT t.finished AND l.owner = i.instance_id AND l.expires_at > now()) AS tables
            FROM table_instances i ORDER BY i.instance_id
            """,
            self.ttl_s,
        )
        return [
            InstanceRow(r["instance_id"], r["address"], r["partitions"], r["tables"], r["age"], r["live"]) for r in rows
        ]

    async def stop(self) -> None:
        """Stop beating (the actors are stopped next, then `release`)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for task in list(self._loads):
            task.cancel()
        await asyncio.gather(*self._loads, return_exceptions=True)

    async def release(self) -> None:
        """Hand every lease back and leave the registry, so the next owners take them at once."""
        held, self.held = sorted(self.held), {}
        try:
            async with self.pool.acquire() as conn:
                await conn.execute(
                    "UPDATE partition_leases SET owner = NULL, expires_at = '-infinity' "
                    "WHERE owner = $1 AND partition = ANY($2::int[])",
                    self.instance_id,
                    held,
                )
                await conn.execute("DELETE FROM table_instances WHERE instance_id = $1", self.instance_id)
        except Exception as exc:  # Postgres away: the leases expire by themselves
            log.warning("leases not handed back (%s: %s); they expire in %.1f s", type(exc).__name__, exc, self.ttl_s)
        finally:
            if self._lock_conn is not None:
                with contextlib.suppress(Exception):
                    await self._lock_conn.close()
                self._lock_conn = None
        PARTITIONS_OWNED.remove(self.instance_id)


async def _lock_in_order(conn: asyncpg.Connection, partitions: list[int]) -> None:
    """Lock the partitions' lease rows in partition order, the order a group commit's fences (FOR SHARE)
    take them in (`GroupCommitter.order`), before renewing or handing them back: the heartbeat waits
    for a commit, or a commit for it, and the two never deadlock."""
    await conn.execute(
        "SELECT 1 FROM partition_leases WHERE partition = ANY($1::int[]) ORDER BY partition FOR NO KEY UPDATE",
        partitions,
    )


async def _nothing(partitions: list[int]) -> None:
    """No tables to load or stop."""


def _ranges(partitions: Iterable[int]) -> str:
    """ "0-3, 7" for [0, 1, 2, 3, 7]: short log lines."""
    out: list[str] = []
    for p in sorted(partitions):
        if out and out[-1].split("-")[-1] == str(p - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{p}"
        else:
            out.append(str(p))
    return ", ".join(out)


__all__ = ["FENCED_SQLSTATE", "Leases", "Refused", "fenced", "partition_of"]
