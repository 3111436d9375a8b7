"""Health that tells the truth: NOT_SERVING while Postgres or NATS is out of reach.

The gRPC health servicer says SERVING once a service started; `watch_backing` then checks its
backing servers every `interval_s` (a `SELECT 1` on the pool, the NATS connection's state) and
flips every name it serves to NOT_SERVING while one is away, and back when both answer. A load
balancer or an orchestrator's probe then routes around the instance instead of sending it calls
that can only be answered UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import asyncpg
from grpc_health.v1 import health, health_pb2
from nats.aio.client import Client as NATS
from prometheus_client import Gauge

log = logging.getLogger(__name__)

BACKING_UP = Gauge("service_backing_up", "1 while the backing server answers, 0 while it is out of reach", ["server"])
INTERVAL_S = 1.0
CHECK_TIMEOUT_S = 2.0


#: A check of Postgres still waiting for its answer (`postgres_up`), per pool.
_probes: dict[int, asyncio.Task[None]] = {}


async def _select_1(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await conn.fetchval("SELECT 1")


async def postgres_up(pool: asyncpg.Pool, timeout: float = CHECK_TIMEOUT_S) -> bool:
    """Whether Postgres answers a `SELECT 1` within `timeout`. A server that stalls (frozen, its disk full)
    holds the check's connection until it answers, and giving it back waits as long: the check is its
    own task, so the answer is "away" at the timeout, and while it still waits no other is started (each
    would hold another of the pool's connections)."""
    probe = _probes.get(id(pool))
    if probe is not None and probe.done() and not probe.cancelled():
        probe.exception()  # a late failure of a check given up on: retrieved, not logged as unhandled
    if probe is None or probe.done():
        probe = _probes[id(pool)] = asyncio.create_task(_select_1(pool), name="health-postgres")
    done, _ = await asyncio.wait({probe}, timeout=timeout)
    if not done:
        return False
    del _probes[id(pool)]
    # any failure to answer is "away" here; what it was is logged by the callers' own calls
    return not probe.cancelled() and probe.exception() is None


def nats_up(nc: NATS) -> bool:
    return bool(nc.is_connected)


async def watch_backing(
    servicer: health.aio.HealthServicer,
    names: Sequence[str],
    pool: asyncpg.Pool | None,
    nc: NATS | None,
    interval_s: float = INTERVAL_S,
) -> None:
    """Until cancelled: every name in `names` (and "") SERVING while the backing servers answer."""
    serving = True
    while True:
        await asyncio.sleep(interval_s)
        pg = await postgres_up(pool) if pool is not None else True
        bus = nats_up(nc) if nc is not None else True
        BACKING_UP.labels("postgres").set(int(pg))
        BACKING_UP.labels("nats").set(int(bus))
        up = pg and bus
        if up == serving:
            continue
        serving = up
        status = health_pb2.HealthCheckResponse.SERVING if up else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ["", *names]:
            await servicer.set(name, status)
        if up:
            log.warning("Postgres and NATS answer again: SERVING")
        else:
            log.warning(
                "NOT_SERVING: %s out of reach", " and ".join(n for n, ok in (("Postgres", pg), ("NATS", bus)) if not ok)
            )


_watchers: set[asyncio.Task[None]] = set()


def start(
    servicer: health.aio.HealthServicer, names: Sequence[str], pool: asyncpg.Pool | None, nc: NATS | None
) -> asyncio.Task[None]:
    """Run `watch_backing` in the background for the life of the service."""
    task = asyncio.create_task(watch_backing(servicer, names, pool, nc), name="health-watch")
    _watchers.add(task)
    task.add_done_callback(_watchers.discard)
    return task
