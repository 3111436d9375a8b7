"""A platform of its own for the browser tests: NATS, Postgres, the services a person's game needs,
the gateway, and the bots that take the seats people leave empty; Debian's Chromium, headless,
driven by Playwright (`.ci/run` installs /usr/bin/chromium when it is missing).

The suite runs in its own xdist group ("browser"), so it runs beside the integration tests'
shared platform on the other worker.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from client import SubProtocolStubs, connect, platform_channel
from client.botseats import BotSeats
from client.platform import Platform
from monopoly.v1 import matchmaking_pb2_grpc
from servicekit.embedded import Servers, servers

pytestmark = pytest.mark.integration

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
#: Flags for a machine without outside network: no update checks, no sync, no QUIC, no sandbox (containers).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: The services a person's game at a bot-filled table needs (no rating: bot games are never rated).
SERVICES = ("table", "auction", "trade", "casino", "matchmaking", "gateway")
#: Where screenshots go (kept as CI artifacts).
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", "test-artifacts")) / "browser"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="session")
def browser_server_urls() -> Iterator[Servers]:
    with tempfile.TemporaryDirectory(prefix="monopoly-browser-") as tmp, servers(Path(tmp)) as found:
        yield found


@pytest.fixture(scope="session")
async def gateway_platform(browser_server_urls: Servers) -> AsyncIterator[Platform]:
    """The platform at 10x game speed (Speed's 45 s turn is 4.5 s), people matched with bots after 1 s."""
    nats_url, db_url, bus = browser_server_urls
    data = Path(tempfile.mkdtemp(prefix="monopoly-browser-svc-"))
    p = Platform(
        nats_url,
        db_url,
        data,
        clock_scale=10,
        services=SERVICES,
        extra_env={"MATCHMAKING_SMALL_TABLE_WAIT_S": "1.0"},
        bus=bus,
    )
    # The services find each other by address and connect lazily: they start side by side.
    await asyncio.gather(*(process.start(timeout=180) for process in p.processes.values()))
    channel, table = connect(p.table_target)
    services = SubProtocolStubs.connect({n: p.target(n) for n in p.external})
    mm_channel = platform_channel(p.target("matchmaking"))
    bots = BotSeats(table, matchmaking_pb2_grpc.MatchmakingServiceStub(mm_channel), services, think_s=0.0)
    bots_task = asyncio.create_task(bots.run())
    try:
        yield p
    finally:
        bots.stop()
        await bots_task
        await services.close()
        await mm_channel.close()
        await channel.close()
        await p.stop()
        if os.environ.get("CI"):
            for name in p.processes:
                print(f"--- {name}.log\n" + (data / f"{name}.log").read_text(errors="replace")[-3000:])


@pytest.fixture(scope="session")
def chromium() -> str:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (.ci/run installs Debian's chromium package)")
    return CHROMIUM


@pytest.fixture(scope="session")
def artifacts() -> Path:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)  # every screenshot asserted is this session's
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
