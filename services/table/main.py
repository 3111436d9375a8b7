"""The table service: its parts for `servicekit.runner` (settings in `settings.py`).

Run: `python -m services.table.main` with NATS_URL and DATABASE_URL set
(`make run` starts everything, the embedded servers included).
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from prometheus_client import REGISTRY

from servicekit.runner import Runtime, ServiceSpec, run_service

from . import verify
from .api import SERVICE_NAME, TableService, register
from .handlers import build_consumers
from .leases import Leases
from .observe import TablesCollector
from .settings import TableSettings
from .tables import Tables

MIGRATIONS = Path(__file__).parent / "migrations"


async def _nothing(partitions: list[int]) -> None:
    """Partitions taken before recovery: recovery loads them."""


def spec(settings: TableSettings) -> ServiceSpec[Tables]:
    def build(rt: Runtime) -> Tables:
        tables = Tables(
            rt.pool,
            settings.snapshot_every,
            settings.default_clock_scale,
            settings.base.token_secret,
            settings.group_commit,
            settings.max_tables,
            settings.idle_evict_s,
            settings.finished_evict_s,
        )
        tables.relay_wake = rt.wake_relay
        tables.leases = Leases(
            rt.pool,
            settings.base.database_url,
            settings.instance_id,
            settings.address,
            settings.partitions,
            settings.lease_ttl_s,
        )
        tables.leases.on_gained = tables.take
        tables.leases.on_lost = tables.drop
        tables.leases.open_channel = rt.channel  # results for tables another instance runs go there
        return tables

    background: list[asyncio.Task[None]] = []
    collectors: list[TablesCollector] = []

    async def start(tables: Tables) -> str:
        assert tables.leases is not None
        tables.leases.on_gained = _nothing  # the first share is recovered below, before gRPC serves
        await tables.leases.start()
        tables.leases.on_gained = tables.take
        resumed = await tables.recover()
        tables.watch_stalls()  # E2: a frozen process's time is not the players'
        tables.leases.run()
        collectors.append(TablesCollector(tables))  # table_tables, table_deadline_overdue_seconds
        REGISTRY.register(collectors[-1])
        # Gaps, replay mismatches and ledger imbalance are logged and counted before a player meets them.
        background.append(asyncio.create_task(verify.periodically(tables.pool), name="verify"))
        held = len(tables.leases.held)
        return f"{resumed} tables resumed, {held} of {settings.partitions} partitions held as {settings.instance_id}"

    async def stop(tables: Tables) -> None:
        """After gRPC stopped taking calls (its in-flight ones finished): no more beats, the actors
        finish what they hold, then the leases go back so the next owners take them at once."""
        for task in background:
            task.cancel()
        for collector in collectors:
            REGISTRY.unregister(collector)
        if tables.leases is not None:
            await tables.leases.stop()
        await tables.stop()
        await tables.pause_clocks()  # E2: nobody is timed out for the time until the tables run again
        if tables.leases is not None:
            await tables.leases.release()

    return ServiceSpec(
        settings=settings.base,
        migrations=MIGRATIONS,
        pool_size=16,
        build=build,
        start=start,
        consumers=build_consumers,
        grpc=lambda tables: register(TableService(tables)),
        grpc_names=[SERVICE_NAME],
        stop=stop,
    )


def main() -> None:
    # Long-lived table states make the default young-generation collections frequent and slow;
    # larger thresholds cut those pauses (the p99 of SubmitCommand) at no cost in memory that matters.
    gc.set_threshold(50_000, 20, 20)
    run_service(spec(TableSettings.from_env()))


if __name__ == "__main__":
    main()
