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
from .observe import TablesCollector
from .settings import TableSettings
from .tables import Tables

MIGRATIONS = Path(__file__).parent / "migrations"


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
        return tables

    background: list[asyncio.Task[None]] = []
    collectors: list[TablesCollector] = []

    async def start(tables: Tables) -> str:
        resumed = await tables.recover()
        collectors.append(TablesCollector(tables))  # table_tables, table_deadline_overdue_seconds
        REGISTRY.register(collectors[-1])
        # Gaps, replay mismatches and ledger imbalance are logged and counted before a player meets them.
        background.append(asyncio.create_task(verify.periodically(tables.pool), name="verify"))
        return f"{resumed} tables resumed"

    async def stop(tables: Tables) -> None:
        for task in background:
            task.cancel()
        for collector in collectors:
            REGISTRY.unregister(collector)
        await tables.stop()

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
