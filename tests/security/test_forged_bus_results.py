"""The authenticated bus (servicekit.natsauth) on the session's real nats-server: nobody gets in without
credentials, a service's user publishes only its own subjects, so a forged result (a casino bet
`settled`, an auction `settled`) is refused by the server and never changes a table; the analytics
reader reads the table events and nothing else."""

from __future__ import annotations

import asyncio
import urllib.request
import uuid
from collections.abc import AsyncIterator

import asyncpg
import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import RePublish, StreamSource

from client import platform_channel
from client.casino import connect as casino_connect
from client.platform import Platform
from client.verify import stream_envelopes
from monopoly.v1 import auction_pb2, casino_pb2, casino_pb2_grpc, table_pb2_grpc
from servicekit import bus, natsauth
from servicekit.natsauth import BusUsers
from tests.integration.helpers import event_rows
from tests.integration.test_casino import Table, bet_opened

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def stubs(
    platform: Platform,
) -> AsyncIterator[tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub]]:
    table_channel = platform_channel(platform.table_target)
    casino_channel, casino = casino_connect(platform.target("casino"))
    try:
        yield table_pb2_grpc.TableServiceStub(table_channel), casino
    finally:
        await table_channel.close()
        await casino_channel.close()


class Session:
    """A connection as `user`, recording the errors the server sends (permissions violations)."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.nc: NATS | None = None

    async def open(self, users: BusUsers, user: str) -> JetStreamContext:
        async def on_error(exc: Exception) -> None:
            self.errors.append(str(exc))

        self.nc = await nats.connect(
            users.url,
            user=user,
            password=users.passwords[user],
            inbox_prefix=natsauth.inbox_prefix(user),
            error_cb=on_error,
            max_reconnect_attempts=0,
        )
        return self.nc.jetstream()

    async def violations(self, subject: str) -> list[str]:
        """The server's refusals naming `subject` (they come back asynchronously; nats-py lowercases them)."""
        for _ in range(50):
            found = [e for e in self.errors if "permissions violation" in e.lower() and subject.lower() in e.lower()]
            if found:
                return found
            await asyncio.sleep(0.02)
        return []

    async def close(self) -> None:
        if self.nc is not None:
            await self.nc.close()


async def test_no_credentials_or_a_wrong_password_get_no_connection(users: BusUsers) -> None:
    for credentials in ({}, {"user": "casino", "password": "guessed"}, {"user": "nobody", "password": "x"}):
        with pytest.raises(nats.errors.Error, match="Authorization Violation"):
            await nats.connect(users.url, allow_reconnect=False, max_reconnect_attempts=0, **credentials)


def forged_settlement(bet: casino_pb2.BetView, die: int) -> bytes:
    """The casino's `settled` message for `bet`, a win on `die` (K2: 6000 on one number)."""
    won = casino_pb2.BetView()
    won.CopyFrom(bet)
    won.status, won.numbers[:], won.die, won.payout = "settled", [die], die, 6000
    return casino_pb2.CasinoEvent(event_id=f"{bet.bet_id}:settled", bet=won).SerializeToString()


def results_counted(metrics_port: int, kind: str, outcome: str) -> float:
    """The table service's count of sub-protocol results of `kind` consumed with `outcome` (its /metrics)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as reply:
        lines = reply.read().decode().splitlines()
    wanted = ("table_results_total{", f'kind="{kind}"', f'outcome="{outcome}"')
    return sum(float(line.split()[-1]) for line in lines if all(w in line for w in wanted))


async def test_a_forged_casino_result_is_refused_by_the_server_and_changes_no_table(
    platform: Platform,
    users: BusUsers,
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub],
    pool: asyncpg.Pool,
    js: JetStreamContext,
) -> None:
    table_stub, casino = stubs
    table = await Table(table_stub).create(pool)
    state = await table.to_casino()
    seat, cash = state.current, state.players[state.current].cash
    bet = await bet_opened(casino, table.table_id)
    subject = bus.casino_subject(table.table_id, "settled")
    forged = forged_settlement(bet, die=3)
    rows = len(await event_rows(pool, table.table_id))

    # Other services' users (the table's own, trade's): refused on the data subject, by the server.
    for user in ("table", "trade", "rating", natsauth.ANALYTICS):
        session = Session()
        outsider = await session.open(users, user)
        try:
            with pytest.raises(nats.errors.TimeoutError):  # no ack: the stream never saw it
                await outsider.publish(subject, forged, timeout=1.0, headers={"Nats-Msg-Id": uuid.uuid4().hex})
            assert session.nc is not None
            await session.nc.publish(subject, forged)  # plain NATS publish: refused the same way
            assert await session.violations(subject), (user, session.errors)
        finally:
            await session.close()

    await asyncio.sleep(1.0)  # time the table would have taken to apply it
    after = await table.state()
    assert after.players[seat].cash == cash  # the forged win paid nothing
    assert after.casino  # the bet is still open
    assert len(await event_rows(pool, table.table_id)) == rows
    assert await casino.GetBet(casino_pb2.GetBetRequest(table_id=table.table_id)) == bet

    # The control is what stopped it: the same bytes from the subject's owner side (here the operator's
    # admin user, standing in for the casino) are applied, a 6000 win on a 1000 stake.
    await js.publish(subject, forged, headers={"Nats-Msg-Id": f"forged-{uuid.uuid4().hex}"})
    applied = await table.settled()
    assert applied.players[seat].cash == cash - 1000 + 6000

    # A second, different result for the same bet (here a win on another die) is dropped and acked, not
    # redelivered: the first one applied stands.
    metrics = platform.metrics_ports["table"]
    before = results_counted(metrics, "SettleBet", "conflict")
    await js.publish(subject, forged_settlement(bet, die=4), headers={"Nats-Msg-Id": f"forged-{uuid.uuid4().hex}"})
    for _ in range(100):
        if results_counted(metrics, "SettleBet", "conflict") > before:
            break
        await asyncio.sleep(0.05)
    assert results_counted(metrics, "SettleBet", "conflict") == before + 1
    assert (await table.state()).players[seat].cash == applied.players[seat].cash


async def test_a_forged_auction_result_is_refused_by_the_server(users: BusUsers) -> None:
    subject = bus.auction_subject("t-forged", "settled")
    forged = auction_pb2.AuctionEvent(
        table_id="t-forged", auction_id=1, type="settled", winner=0, price=1
    ).SerializeToString()
    for user in ("casino", "table", "trade", "matchmaking"):
        session = Session()
        outsider = await session.open(users, user)
        try:
            with pytest.raises(nats.errors.TimeoutError):
                await outsider.publish(subject, forged, timeout=1.0)
            assert await session.violations(subject), (user, session.errors)
        finally:
            await session.close()


async def test_a_service_cannot_touch_another_services_streams_or_consumers(users: BusUsers) -> None:
    session = Session()
    js = await session.open(users, "trade")
    try:
        attempts = (
            lambda: js.stream_info(bus.CASINO_EVENTS.name),  # not its stream
            lambda: js.purge_stream(bus.TABLE_EVENTS.name),
            lambda: js.delete_stream(bus.AUCTION_EVENTS.name),
            lambda: js.consumer_info(bus.CASINO_EVENTS.name, "table-casino-settled"),  # the table's consumer
            lambda: js.pull_subscribe(bus.casino_subject(), durable="trade-spy", stream=bus.CASINO_EVENTS.name),
        )
        for attempt in attempts:
            with pytest.raises(nats.errors.TimeoutError):
                await attempt()
        for refused in ("$JS.API.STREAM.PURGE", "$JS.API.STREAM.DELETE", "$JS.API.CONSUMER.INFO"):
            assert await session.violations(refused), (refused, session.errors)
        # nor read another user's replies or fetched messages
        assert session.nc is not None
        await session.nc.subscribe("_INBOX.table.>")
        assert await session.violations("_INBOX.table.>"), session.errors
    finally:
        await session.close()


async def test_a_service_cannot_change_its_own_stream(users: BusUsers) -> None:
    """A stream's settings are not checked by the server: an owner allowed to update its stream could
    give it a `republish` onto the casino's `settled` subject (the server would publish the forgery) or a
    `source` copying the table events with their seeds. Only admin changes a stream; its owner may still
    describe it and create it when missing (an existing one is never created again)."""
    session = Session()
    js = await session.open(users, "trade")
    try:
        info = await js.stream_info(bus.TRADE_EVENTS.name)  # its own: allowed
        assert not bus.stream_drift(info.config, bus.stream_config(bus.TRADE_EVENTS))
        info.config.republish = RePublish(
            src="monopoly.trade.t-forged.forge", dest=bus.casino_subject("t-forged", "settled")
        )
        info.config.sources = [StreamSource(name=bus.TABLE_EVENTS.name)]
        with pytest.raises(nats.errors.TimeoutError):
            await js.update_stream(info.config)
        assert await session.violations("$JS.API.STREAM.UPDATE"), session.errors
        with pytest.raises(nats.js.errors.BadRequestError):  # exists: created again only as it is
            await js.add_stream(info.config)
    finally:
        await session.close()
    nc, admin = await natsauth.connect(users.url_for(natsauth.ADMIN))
    try:
        assert not bus.stream_drift(
            (await admin.stream_info(bus.TRADE_EVENTS.name)).config, bus.stream_config(bus.TRADE_EVENTS)
        )
    finally:
        await nc.close()


async def test_the_analytics_reader_reads_the_table_events_and_publishes_nothing(
    users: BusUsers,
    stubs: tuple[table_pb2_grpc.TableServiceStub, casino_pb2_grpc.CasinoServiceStub],
    pool: asyncpg.Pool,
) -> None:
    table_stub, _ = stubs
    table = await Table(table_stub).create(pool)
    await table.to_casino()
    rows = len(await event_rows(pool, table.table_id))
    nc, js = await natsauth.connect(users.url_for(natsauth.ANALYTICS))
    try:
        assert len(await stream_envelopes(js, table.table_id, rows)) == rows  # an ordered consumer reads it all
        info = await js.stream_info(bus.TABLE_EVENTS.name)
        assert info.state.messages > 0
    finally:
        await nc.close()
    session = Session()
    reader = await session.open(users, natsauth.ANALYTICS)
    try:
        subject = bus.table_subject(table.table_id)
        with pytest.raises(nats.errors.TimeoutError):
            await reader.publish(subject, b"forged", timeout=1.0)
        assert await session.violations(subject)
        with pytest.raises(nats.errors.TimeoutError):
            await reader.stream_info(bus.CASINO_EVENTS.name)
    finally:
        await session.close()


async def test_a_service_reads_through_its_own_consumer_with_its_own_rights(
    users: BusUsers, platform: Platform
) -> None:
    """A time-out first waits until the service's consumer has read the table's events published before
    (`Consumers.read_through`): asked with the casino user's rights, which read no other stream's info."""
    from servicekit import signals
    from servicekit.consumers import Consumers, durable_consumer
    from services.casino.handlers import DURABLE, TOPICS

    session = Session()
    js = await session.open(users, "casino")
    group = Consumers()

    @durable_consumer(group, signals.subjects(*TOPICS), bus.TABLE_SIGNALS, DURABLE, exclusive=True)
    async def never_fetched(body: bytes) -> None: ...

    group._js = js  # asked, never started: the running casino service reads this durable
    try:
        await asyncio.wait_for(group.read_through(most_s=15), 20)
        assert not [e for e in session.errors if "permissions violation" in e.lower()], session.errors
    finally:
        await session.close()
