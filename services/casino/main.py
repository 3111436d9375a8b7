"""The casino service: its parts for `servicekit.runner` (settings in `settings.py`).

Run: `python -m services.casino.main` with NATS_URL and DATABASE_URL set.
"""

from __future__ import annotations

from pathlib import Path

from servicekit.consumers import Consumers
from servicekit.runner import Runtime, ServiceSpec, run_service
from servicekit.settings import Settings

from . import settings
from .api import SERVICE_NAME, CasinoService, register
from .bets import Casino
from .handlers import build_consumers

MIGRATIONS = Path(__file__).parent / "migrations"


def spec(base: Settings) -> ServiceSpec[Casino]:
    def build(rt: Runtime) -> Casino:
        casino = Casino(rt.pool)
        casino.relay_wake = rt.wake_relay
        return casino

    async def start(casino: Casino) -> str:
        resumed = await casino.recover()
        casino.start_sweeping()  # the bets other instances open, and theirs should they stop
        return f"{resumed} open bets resumed"

    def consumers(casino: Casino) -> Consumers:
        group = build_consumers(casino)
        casino.read_through = group.read_through  # a time-out waits for the table events published before it
        return group

    return ServiceSpec(
        settings=base,
        migrations=MIGRATIONS,
        schema="casino",
        build=build,
        start=start,
        consumers=consumers,
        grpc=lambda casino: register(CasinoService(casino)),
        grpc_names=[SERVICE_NAME],
        stop=Casino.stop,
    )


def main() -> None:
    run_service(spec(settings.common()))


if __name__ == "__main__":
    main()
