"""The auction service: its parts for `servicekit.runner` (settings in `settings.py`).

Run: `python -m services.auction.main` with NATS_URL and DATABASE_URL set. Its state lives in the
Postgres schema `auction`; it consumes the tables' events and publishes on `monopoly.auction.<table>.<kind>`.
"""

from __future__ import annotations

from pathlib import Path

from servicekit.consumers import Consumers
from servicekit.runner import Runtime, ServiceSpec, run_service
from servicekit.settings import Settings

from . import settings
from .api import SERVICE_NAME, AuctionService, register
from .auctions import Auctions
from .handlers import build_consumers

MIGRATIONS = Path(__file__).parent / "migrations"


def spec(base: Settings) -> ServiceSpec[Auctions]:
    def build(rt: Runtime) -> Auctions:
        auctions = Auctions(rt.pool)
        auctions.relay_wake = rt.wake_relay
        return auctions

    async def start(auctions: Auctions) -> str:
        # before the consumer: the table's events find their auctions
        resumed = await auctions.recover()
        auctions.start_sweeping()  # what other instances open, move and close
        return f"{resumed} auctions resumed"

    def consumers(auctions: Auctions) -> Consumers:
        group = build_consumers(auctions)
        auctions.read_through = group.read_through  # a time-out waits for the table events published before it
        return group

    return ServiceSpec(
        settings=base,
        migrations=MIGRATIONS,
        schema="auction",
        build=build,
        start=start,
        consumers=consumers,
        grpc=lambda auctions: register(AuctionService(auctions)),
        grpc_names=[SERVICE_NAME],
        stop=Auctions.stop,
    )


def main() -> None:
    run_service(spec(settings.common()))


if __name__ == "__main__":
    main()
