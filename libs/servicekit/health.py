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


async def postgres_up(pool: asyncpg.Pool, timeout: float = CHECK_TIMEOUT_S) -> bool:
    try:
        async with asyncio.timeout(timeout):
            async with pool.acquire() as conn:
                await conn.fetchval("SELECT 1")
    except Exception:  # any failure to answer is "away" here; what it was is logged by the caller's calls
        return False
    return True


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
