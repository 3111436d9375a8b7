"""The trade service: its parts for `servicekit.runner` (settings in `settings.py`), with a gRPC
channel to the table service, where accepted trades are executed.

Run: `python -m services.trade.main` with NATS_URL, DATABASE_URL and TABLE_TARGET set.
"""

from __future__ import annotations

import logging
from pathlib import Path

from servicekit.routing import RoutedTableStub
from servicekit.runner import Runtime, ServiceSpec, run_service

from .api import SERVICE_NAME, TradeService, register
from .handlers import build_consumers
from .settings import TradeSettings
from .trades import Trades

log = logging.getLogger("trade")
MIGRATIONS = Path(__file__).parent / "migrations"


def spec(settings: TradeSettings) -> ServiceSpec[Trades]:
    def build(rt: Runtime) -> Trades:
        table = RoutedTableStub(rt.channel(settings.table_target), rt.channel)  # follows served-by
        return Trades(rt.pool, table, settings.base.token_secret, rt.wake_relay, shared=settings.base.replicas > 1)

    async def start(trades: Trades) -> None:
        await trades.load_open()
        log.info("trade service: table service at %s", settings.table_target)

    return ServiceSpec(
        settings=settings.base,
        migrations=MIGRATIONS,
        schema="trade",
        build=build,
        start=start,
        consumers=build_consumers,
        grpc=lambda trades: register(TradeService(trades)),
        grpc_names=[SERVICE_NAME],
    )


def main() -> None:
    run_service(spec(TradeSettings.from_env()))


if __name__ == "__main__":
    main()
