"""The shared plumbing on real servers: migrations and the outbox relay."""

from __future__ import annotations

import secrets
from pathlib import Path

import asyncpg
import pytest
from faststream.nats import JStream
from nats.js import JetStreamContext

from client.platform import Platform
from servicekit import db
from servicekit.bus import TABLE_EVENTS, table_subject
from servicekit.outbox import Relay

pytestmark = pytest.mark.integration


async def _memory_stream(js: JetStreamContext, prefix: str) -> tuple[str, JStream]:
    """A stream of its own in memory for one test (`<PREFIX><random>`, subjects `<prefix...>.*`): its name and spec."""
    from nats.js.api import RetentionPolicy, StorageType

    from servicekit.bus import ensure_stream

    name = f"{prefix}{secrets.token_hex(3).upper()}"
    spec = JStream(name=name, subjects=[f"{name.lower()}.*"], retention=RetentionPolicy.LIMITS,
                   storage=StorageType.MEMORY, declare=True)  # fmt: skip
    await ensure_stream(js, spec)
    return name, spec


async def test_migrations_apply_in_order_once_and_refuse_an_edited_file(pool: asyncpg.Pool, tmp_path: Path) -> None:
    service = f"test_{secrets.token_hex(4)}"
    table = f"{service}_things"
    (tmp_path / "001_create.sql").write_text(f"CREATE TABLE {table} (id int PRIMARY KEY);")
    (tmp_path / "002_seed.sql").write_text(f"INSERT INTO {table} VALUES (1), (2);")
    assert await db.migrate(pool, service, tmp_path) == ["001_create.sql", "002_seed.sql"]
    assert await db.migrate(pool, service, tmp_path) == []  # applied once
    async with pool.acquire() as conn:
        assert await conn.fetchval(f"SELECT count(*) FROM {table}") == 2
        recorded = await conn.fetch(
            "SELECT version FROM schema_migrations WHERE service = $1 ORDER BY version", service
        )
    assert [r["version"] for r in recorded] == ["001_create.sql", "002_seed.sql"]
    (tmp_path / "002_seed.sql").write_text(f"INSERT INTO {table} VALUES (3);")
    with pytest.raises(RuntimeError, match="changed after it was applied"):
        await db.migrate(pool, service, tmp_path)


async def test_relay_publishes_in_order_deletes_after_ack_and_drops_duplicates(
    platform: Platform, pool: asyncpg.Pool, js: JetStreamContext
) -> None:
    """The running table service (its migrations made `outbox`) relays too: two relays, still once each."""
    table_id = f"relaytest{secrets.token_hex(4)}"
    subject = table_subject(table_id)
    async with pool.acquire() as conn:
        await conn.executemany(
            "INSERT INTO outbox (subject, msg_id, payload) VALUES ($1, $2, $3)",
            [
                (subject, f"{table_id}:1", b"one"),
                (subject, f"{table_id}:2", b"two"),
                (subject, f"{table_id}:1", b"one"),  # a repeat, as after a relay crash before its delete
            ],
        )
    relay = Relay(pool, js, "test")
    while await relay.publish_once():
        pass
    async with pool.acquire() as conn:
        left = await conn.fetchval("SELECT count(*) FROM outbox WHERE subject = $1", subject)
    assert left == 0
    sub = await js.subscribe(subject, ordered_consumer=True, stream=TABLE_EVENTS.name)
    payloads = []
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=1)
            except TimeoutError:
                break
            payloads.append(msg.data)
    finally:
        await sub.unsubscribe()
    assert payloads == [b"one", b"two"]  # the repeated Nats-Msg-Id was dropped by JetStream


async def test_a_durable_consumer_handles_in_order_acks_after_success_and_redelivers_a_failure(
    server_urls: tuple[str, str], js: JetStreamContext
) -> None:
    import asyncio

    from servicekit.consumers import Consumers, durable_consumer

    name, spec = await _memory_stream(js, "CONSUMERTEST")
    handled: list[int] = []
    failures = 0
    consumers = Consumers()

    @durable_consumer(consumers, f"{name.lower()}.*", spec, f"{name.lower()}-durable", max_deliver=5)
    async def handle(body: bytes) -> None:
        nonlocal failures
        n = int(body)
        if n == 5 and failures < 2:  # fails twice, then works: a Postgres hiccup
            failures += 1
            raise RuntimeError("not now")
        await asyncio.sleep(0.002 * (10 - n))  # later messages finish sooner if handled concurrently
        handled.append(n)

    for n in range(10):
        await js.publish(f"{name.lower()}.t", str(n).encode())
    await consumers.start(js)
    try:
        for _ in range(200):
            if len(handled) == 10:
                break
            await asyncio.sleep(0.05)
    finally:
        await consumers.stop()
    assert sorted(handled) == list(range(10))  # nothing lost, nothing twice
    assert [n for n in handled if n != 5] == [0, 1, 2, 3, 4, 6, 7, 8, 9]  # in stream order
    # the failing one came back after its delay (a failure may reorder it behind later messages)
    assert failures == 2
    info = await js.consumer_info(name, f"{name.lower()}-durable")
    assert info.num_ack_pending == 0 and info.num_pending == 0  # every message acked
    assert info.config.max_deliver == 5
    await js.delete_stream(name)


async def test_a_message_that_fails_its_last_delivery_is_given_up_counted_and_the_rest_handled_in_order(
    server_urls: tuple[str, str], js: JetStreamContext
) -> None:
    """A handler that refuses one message for ever: after `max_deliver` deliveries it is terminated and
    counted (`given_up`, the ConsumerGaveUp alert), and the messages after it are still handled."""
    import asyncio

    from prometheus_client import REGISTRY

    from servicekit.consumers import Consumers, durable_consumer

    name, spec = await _memory_stream(js, "GIVEUPTEST")
    durable = f"{name.lower()}-durable"
    handled: list[int] = []
    tries = 0
    consumers = Consumers()

    @durable_consumer(consumers, f"{name.lower()}.*", spec, durable, max_deliver=2)
    async def handle(body: bytes) -> None:
        nonlocal tries
        if int(body) == 2:
            tries += 1
            raise RuntimeError("never")
        handled.append(int(body))

    def given_up() -> float:
        value = REGISTRY.get_sample_value("consumer_messages_total", {"consumer": durable, "outcome": "given_up"})
        return value or 0.0

    for n in range(5):
        await js.publish(f"{name.lower()}.t", str(n).encode())
    await consumers.start(js)
    try:
        for _ in range(200):
            if len(handled) == 4 and given_up() == 1:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # a third delivery would have come by now (the nak's delay is 0.2 s)
    finally:
        await consumers.stop()
    assert sorted(handled) == [0, 1, 3, 4] and tries == 2
    assert given_up() == 1
    info = await js.consumer_info(name, durable)
    assert info.num_ack_pending == 0 and info.num_pending == 0  # nothing left to deliver: terminated, not waiting
    await js.delete_stream(name)


async def test_a_batch_consumer_handles_a_fetch_in_one_call_and_falls_back_to_one_by_one_on_a_refusal(
    server_urls: tuple[str, str], js: JetStreamContext
) -> None:
    """The rating service's consumer: a fetch is handled whole (its writes in one transaction), in
    stream order, and acked after; a batch holding a message the handler refuses is handled again a
    message at a time, so only that one is NACKed and redelivered."""
    import asyncio

    from servicekit.consumers import Consumers, batch_consumer

    name, spec = await _memory_stream(js, "BATCHTEST")
    batches: list[list[int]] = []
    singles: list[int] = []
    refusals = 0
    consumers = Consumers()

    async def one(body: bytes) -> None:
        nonlocal refusals
        if int(body) == 13 and refusals < 1:
            refusals += 1
            raise RuntimeError("refused once")
        singles.append(int(body))

    @batch_consumer(consumers, f"{name.lower()}.*", spec, f"{name.lower()}-durable", one)
    async def whole(bodies: list[bytes]) -> None:
        numbers = [int(b) for b in bodies]
        if 13 in numbers and refusals < 1:
            raise RuntimeError("a message of this batch is refused")
        batches.append(numbers)

    for n in range(10):
        await js.publish(f"{name.lower()}.t", str(n).encode())
    await consumers.start(js)
    try:
        for _ in range(200):
            if sum(map(len, batches)) == 10:
                break
            await asyncio.sleep(0.05)
        assert [n for b in batches for n in b] == list(range(10))  # in stream order, each once
        assert len(batches) < 10 and singles == []  # whole fetches, not a call per message
        await consumers.stop()
        for n in range(10, 16):  # published while nobody reads: they come in one fetch
            await js.publish(f"{name.lower()}.t", str(n).encode())
        consumers = Consumers()
        batch_consumer(consumers, f"{name.lower()}.*", spec, f"{name.lower()}-durable", one)(whole)
        await consumers.start(js)
        for _ in range(200):
            if sum(map(len, batches)) + len(singles) == 16:
                break
            await asyncio.sleep(0.05)
    finally:
        await consumers.stop()
    handled = [n for b in batches for n in b] + singles
    assert sorted(handled) == list(range(16))  # nothing lost, nothing twice
    assert refusals == 1
    assert singles[:3] == [10, 11, 12]  # the failed batch, again a message at a time up to the refused one
    info = await js.consumer_info(name, f"{name.lower()}-durable")
    assert info.num_ack_pending == 0 and info.num_pending == 0
    await js.delete_stream(name)


async def test_an_idle_consumer_fetches_again_without_an_error_and_handles_what_comes_next(
    js: JetStreamContext, caplog: pytest.LogCaptureFixture
) -> None:
    """A fetch that finds nothing ends in a timeout (nats-py 2.16 raises the builtin `TimeoutError`):
    that is the normal idle case, not a failure: no ERROR, no back-off, and the next message is handled."""
    import asyncio
    import logging

    from prometheus_client import REGISTRY

    from servicekit.consumers import Consumers, durable_consumer

    name, spec = await _memory_stream(js, "IDLETEST")
    durable = f"{name.lower()}-durable"
    handled: list[bytes] = []
    arrived = asyncio.Event()
    consumers = Consumers()

    @durable_consumer(consumers, f"{name.lower()}.*", spec, durable, fetch_timeout_s=0.2)
    async def handle(body: bytes) -> None:
        handled.append(body)
        arrived.set()

    def idle_fetches() -> float:
        return REGISTRY.get_sample_value("consumer_idle_fetches_total", {"consumer": durable}) or 0.0

    caplog.set_level(logging.INFO, logger="servicekit.consumers")
    await consumers.start(js)
    try:
        async with asyncio.timeout(60):
            while idle_fetches() < 3:  # three fetches came back empty, one after the other
                await asyncio.sleep(0.05)
        await js.publish(f"{name.lower()}.t", b"after the idle fetches")
        await asyncio.wait_for(arrived.wait(), 60)
    finally:
        await consumers.stop()
        await js.delete_stream(name)
    assert handled == [b"after the idle fetches"]
    problems = [r for r in caplog.records if r.name == "servicekit.consumers" and r.levelno >= logging.WARNING]
    assert problems == [], [r.getMessage() for r in problems]


async def test_first_delivery_records_a_message_once_and_only_with_its_effect(
    platform: Platform, pool: asyncpg.Pool
) -> None:
    """The runner made the kit's `processed_messages` in the table service's schema; a key is new once,
    and a rolled-back effect leaves no record (its redelivery is handled again)."""
    from servicekit.idempotency import first_delivery

    key = f"t{secrets.token_hex(4)}:7"
    async with pool.acquire() as conn:
        with pytest.raises(RuntimeError, match="the effect failed"):
            async with conn.transaction():
                assert await first_delivery(conn, "test-consumer", key)
                raise RuntimeError("the effect failed")
        async with conn.transaction():
            assert await first_delivery(conn, "test-consumer", key)  # the failed one recorded nothing
        assert not await first_delivery(conn, "test-consumer", key)  # a redelivery
        assert await first_delivery(conn, "another-consumer", key)  # each consumer has its own record
        await conn.execute("DELETE FROM processed_messages WHERE message_key = $1", key)


async def test_an_exclusive_consumer_taken_over_reads_what_its_dead_reader_left_unacked_first(
    js: JetStreamContext, pool: asyncpg.Pool
) -> None:
    """A reader that fetched a batch and died never acks it: JetStream would give it back only after
    ack_wait (30 s), behind newer messages. The next holder of the exclusive consumer's lease makes the
    durable again from its ack floor: the left messages come first, in the stream's order, at once."""
    import asyncio

    from nats.js.api import AckPolicy, ConsumerConfig

    from servicekit.consumers import ACK_WAIT_S, Consumers, durable_consumer

    name, spec = await _memory_stream(js, "REWINDTEST")
    subject, durable = f"{name.lower()}.t", f"{name.lower()}-durable"
    for n in range(10):
        await js.publish(subject, str(n).encode())
    # The first reader: 0-2 handled and acked, 3-6 fetched and never acked (it was killed).
    config = ConsumerConfig(durable_name=durable, ack_policy=AckPolicy.EXPLICIT, ack_wait=ACK_WAIT_S)
    dead = await js.pull_subscribe(subject, durable=durable, stream=name, config=config)
    fetched = await dead.fetch(7, timeout=5)
    for msg in fetched[:3]:
        await msg.ack_sync()
    await dead.unsubscribe()

    handled: list[int] = []
    consumers = Consumers()

    @durable_consumer(consumers, subject, spec, durable, exclusive=True)
    async def handle(body: bytes) -> None:
        handled.append(int(body))

    await consumers.start(js, pool)
    started = asyncio.get_running_loop().time()
    try:
        async with asyncio.timeout(ACK_WAIT_S / 2):  # well before JetStream's own redelivery
            while len(handled) < 7:
                await asyncio.sleep(0.05)
    finally:
        await consumers.stop()
        await js.delete_stream(name)
    assert handled == [3, 4, 5, 6, 7, 8, 9], handled  # the left ones first, then the rest, in order
    assert asyncio.get_running_loop().time() - started < ACK_WAIT_S / 2


class _AckDroppingProxy:
    """A TCP proxy to NATS: once it has passed its client a message holding `trigger`, it drops what the
    client sends (its ack) and closes the connection `close_after` s later, as a network cut would."""

    def __init__(self, upstream: tuple[str, int], trigger: bytes, close_after: float = 0.5) -> None:
        from servicekit.embedded import free_port

        self.upstream, self.trigger, self.close_after = upstream, trigger, close_after
        self.port = free_port()
        self.fired = False

    async def start(self) -> object:
        import asyncio

        return await asyncio.start_server(self._client, "127.0.0.1", self.port)

    async def _client(self, client_in: object, client_out: object) -> None:
        import asyncio
        import contextlib

        assert isinstance(client_in, asyncio.StreamReader) and isinstance(client_out, asyncio.StreamWriter)
        server_in, server_out = await asyncio.open_connection(*self.upstream)
        dropping = False

        def cut() -> None:
            for writer in (client_out, server_out):
                with contextlib.suppress(Exception):
                    writer.transport.abort()

        async def up() -> None:
            while data := await client_in.read(65536):
                if not dropping:
                    server_out.write(data)
                    await server_out.drain()

        async def down() -> None:
            nonlocal dropping
            while data := await server_in.read(65536):
                client_out.write(data)
                await client_out.drain()
                if not self.fired and self.trigger in data:
                    self.fired = dropping = True
                    asyncio.get_running_loop().call_later(self.close_after, cut)

        with contextlib.suppress(Exception):
            await asyncio.gather(up(), down())
        cut()


async def test_an_exclusive_consumer_reads_again_from_its_ack_floor_after_nats_reconnects(
    server_urls: tuple[str, str], js: JetStreamContext, pool: asyncpg.Pool
) -> None:
    """An ack sent just before NATS dropped the connection is lost with it: JetStream would give its message
    back after ack_wait (30 s), behind the newer ones (a late GamePaused after GameResumed froze an
    auction for good). After the reconnect the consumer reads again from its ack floor: in order."""
    import asyncio
    from urllib.parse import urlsplit, urlunsplit

    import nats

    from servicekit.consumers import ACK_WAIT_S, Consumers, durable_consumer

    name, spec = await _memory_stream(js, "RECONNECTTEST")
    subject, durable = f"{name.lower()}.t", f"{name.lower()}-durable"
    real = urlsplit(server_urls[0].split(",")[0])
    proxy = _AckDroppingProxy((real.hostname or "127.0.0.1", real.port or 4222), b"paused-1")
    server = await proxy.start()
    userinfo = real.netloc.rsplit("@", 1)[0] + "@" if "@" in real.netloc else ""
    nc = await nats.connect(urlunsplit(real._replace(netloc=f"{userinfo}127.0.0.1:{proxy.port}")),
                            reconnect_time_wait=0.2)  # fmt: skip
    handled: list[str] = []
    consumers = Consumers()

    @durable_consumer(consumers, subject, spec, durable, exclusive=True)
    async def handle(body: bytes) -> None:
        handled.append(body.decode())

    await consumers.start(nc.jetstream(), pool)
    try:
        await js.publish(subject, b"paused-1")
        async with asyncio.timeout(10):
            while not proxy.fired or nc.stats["reconnects"] < 1:  # handled, its ack lost, reconnected
                await asyncio.sleep(0.05)
        await js.publish(subject, b"resumed-2")
        async with asyncio.timeout(ACK_WAIT_S / 2):  # well before JetStream's own redelivery
            while "resumed-2" not in handled:
                await asyncio.sleep(0.05)
        await asyncio.sleep(1)
    finally:
        await consumers.stop()
        await nc.close()
        server.close()  # type: ignore[attr-defined]
        await js.delete_stream(name)
    assert handled == ["paused-1", "paused-1", "resumed-2"], handled  # the lost ack's message again, first


async def test_a_shared_consumers_messages_held_by_a_reader_that_died_come_back_after_its_own_ack_wait(
    server_urls: tuple[str, str], js: JetStreamContext
) -> None:
    """The table's result consumers: an instance killed while it held a fetch (no ack, no nak) delays
    those results by the consumer's ack wait (3 s there), not by the default 30 s."""
    import asyncio
    import time

    from servicekit.consumers import Consumers, durable_consumer

    name, spec = await _memory_stream(js, "ACKWAITTEST")
    durable = f"{name.lower()}-durable"
    held = asyncio.Event()
    dead = Consumers()

    @durable_consumer(dead, f"{name.lower()}.*", spec, durable, ack_wait_s=1.0)
    async def hang(body: bytes) -> None:
        held.set()
        await asyncio.Event().wait()  # never returns: the instance dies holding it

    await js.publish(f"{name.lower()}.t", b"result")
    await dead.start(js)
    await asyncio.wait_for(held.wait(), 10)
    for task in dead._tasks:  # killed: no ack, no nak, no keep-alive any more
        task.cancel()
    await asyncio.gather(*dead._tasks, return_exceptions=True)
    killed_at = time.monotonic()
    came: list[float] = []
    alive = Consumers()

    @durable_consumer(alive, f"{name.lower()}.*", spec, durable, ack_wait_s=1.0)
    async def handle(body: bytes) -> None:
        came.append(time.monotonic() - killed_at)

    await alive.start(js)
    try:
        for _ in range(300):
            if came:
                break
            await asyncio.sleep(0.05)
    finally:
        await alive.stop()
    assert came and came[0] < 10, came  # the default ack wait would have kept it 30 s
    await js.delete_stream(name)


async def test_a_live_reader_keeps_a_fetch_longer_than_its_ack_wait_and_an_old_durable_gets_the_new_ack_wait(
    server_urls: tuple[str, str], js: JetStreamContext
) -> None:
    """A handler that takes longer than the ack wait is not overtaken by a redelivery (the reader tells
    JetStream the message is in progress); a durable made earlier with the default ack wait is updated."""
    import asyncio

    from nats.js.api import AckPolicy, ConsumerConfig

    from servicekit.consumers import Consumers, durable_consumer

    name, spec = await _memory_stream(js, "KEEPALIVETEST")
    durable = f"{name.lower()}-durable"
    await js.add_consumer(name, ConsumerConfig(durable_name=durable, ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0))
    calls: list[bytes] = []
    consumers = Consumers()

    @durable_consumer(consumers, f"{name.lower()}.*", spec, durable, ack_wait_s=1.0)
    async def slow(body: bytes) -> None:
        calls.append(body)
        await asyncio.sleep(2.5)

    await js.publish(f"{name.lower()}.t", b"slow")
    await consumers.start(js)
    try:
        info = await js.consumer_info(name, durable)
        assert info.config.ack_wait == 1.0
        for _ in range(200):
            info = await js.consumer_info(name, durable)
            if calls and not info.num_ack_pending:
                break
            await asyncio.sleep(0.05)
    finally:
        await consumers.stop()
    assert calls == [b"slow"]  # handled once
    assert not info.num_redelivered and not info.num_ack_pending
    await js.delete_stream(name)


async def test_a_service_with_its_bus_rights_only_updates_the_ack_wait_of_its_own_durable_made_before(
    tmp_path: Path,
) -> None:
    """An upgrade: the table's result durable exists with the old 30 s ack wait, and the table service,
    logged in as its own bus user (no right beyond its durables), binds it with 3 s: it is updated."""
    from nats.js.api import AckPolicy, ConsumerConfig

    from servicekit import bus, natsauth
    from servicekit.consumers import Consumers, durable_consumer
    from servicekit.embedded import nats_server

    durable = "table-auction-settled"
    with nats_server(tmp_path) as users:
        admin, admin_js = await natsauth.connect(users.url_for(natsauth.ADMIN))
        table, table_js = await natsauth.connect(users.url_for("table"))
        try:
            await admin_js.add_consumer(
                bus.AUCTION_EVENTS.name,
                ConsumerConfig(
                    durable_name=durable,
                    ack_policy=AckPolicy.EXPLICIT,
                    ack_wait=30.0,
                    filter_subject=bus.auction_subject(kind="settled"),
                ),
            )
            consumers = Consumers()

            @durable_consumer(consumers, bus.auction_subject(kind="settled"), bus.AUCTION_EVENTS, durable, ack_wait_s=3)
            async def handle(body: bytes) -> None:
                pass

            await consumers.start(table_js)
            try:
                info = await admin_js.consumer_info(bus.AUCTION_EVENTS.name, durable)
                assert info.config.ack_wait == 3.0
                assert info.config.filter_subject == bus.auction_subject(kind="settled")  # the rest as it was
            finally:
                await consumers.stop()
        finally:
            await table.close()
            await admin.close()
