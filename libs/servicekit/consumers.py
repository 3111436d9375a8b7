"""Durable JetStream consumers with an explicit ack after the effect is committed.

A service registers its handlers on a `Consumers` group
(`durable_consumer(group, subject, stream, name)`), starts the group with its
JetStream context and stops it on shutdown. Each consumer is a durable pull
consumer shared by every instance of the service, so each message goes to
one of them.

* Order: messages are fetched in batches and handled one after the other in
  stream order, so a table's events are seen in the order it committed them.
  With several instances pulling one durable, each gets its own batches, and
  two instances may handle one table's events side by side. A consumer that
  needs the order (`exclusive=True`) is therefore read by one instance at a
  time: the one holding its lease, a Postgres advisory lock named after the
  durable on a connection it keeps (`Consumers.start(js, pool)`). The others
  wait and try every `LEASE_RETRY_S`; the holder's death (its connection
  closes) hands the lease on within about that long, and the messages it had
  not acked come again, in order, to the next holder. A holder checks its
  lease every `LEASE_CHECK_S` and before retrying a message through an
  outage, and lets go of its messages when it lost the lease. Acks sent just
  before NATS dropped the connection may be lost with it, and their messages
  would come back after ack_wait, behind newer ones: the first batch an
  exclusive consumer fetches after a reconnect goes back and the consumer is
  read again from its ack floor, in order (`_rewound`).
* Read through: `Consumers.read_through()` waits until the exclusive
  consumers have handled what their streams held when it was called. A
  service timer that acts for a player (a bidder's or a bettor's time-out)
  asks it first, so an event published before the time ran out (the game
  paused, E5) is never read after the timer acted on a stale view, such as
  after a restart with a backlog of the table's events to read.
* Ack after success: a handler commits its effect together with an
  idempotency record (a natural key or a processed-message row) and returns;
  only then is the message acked. A message may still come twice (a crash
  between commit and ack): handlers are idempotent.
* Failure: a handler that raises gets its message NACKed with a growing delay,
  at most `MAX_DELIVER` deliveries in all, so a Postgres hiccup never loses a
  message; the rest of that batch is NACKed at once and comes back in order
  (the failed one, after its delay, may come after them). A message that fails
  its last delivery is given up (terminated), logged as an error and counted
  (`consumer_messages_total{outcome="given_up"}`, alert `ConsumerGaveUp`): a
  handler that refuses one message for ever must not stop every table's.

Why not FastStream's subscribers: measured on this project's 2-core machine,
a FastStream pull subscriber cost ~500 us of CPU per message when fetching one
message at a time (what ordered handling needs: its batches run concurrently,
and its batch mode waits for a full batch or the timeout), against ~30 us for
nats-py's pull subscription below. The services once read the whole table
stream, so that difference was most of the platform's CPU under load (they
now read the table's signals, `servicekit.signals`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import asyncpg
from faststream.nats import JStream
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, ConsumerInfo, DeliverPolicy
from nats.js.errors import NotFoundError
from prometheus_client import Counter, Gauge

from .bus import JETSTREAM_BUSY
from .errors import unreachable

log = logging.getLogger(__name__)

#: Deliveries of one message before JetStream gives up on it (an advisory is published then).
MAX_DELIVER = 20
#: Seconds JetStream waits for the ack before it redelivers, unless a consumer says otherwise: what a
#: reader that died holding messages delays them by (a live one keeps them alive: `_KeepAlive`).
ACK_WAIT_S = 30.0
#: Messages fetched at once (handled one after the other) and how long a fetch waits for the first.
FETCH_BATCH = 64
FETCH_TIMEOUT_S = 2.0
#: After a short batch, this long to let more messages gather: a fetch is a round trip that costs
#: as much CPU as handling a few messages, and a busy stream would otherwise be fetched one by one.
#: A consumer nobody waits on (expiring proposals, recording rounds) gathers longer (`gather_s`).
GATHER_S = 0.005
LAZY_GATHER_S = 0.05
#: Backoff of a message whose handler found Postgres or NATS away (doubling up to the maximum).
OUTAGE_FIRST_DELAY_S = 0.2
OUTAGE_MAX_DELAY_S = 2.0

CONSUMED = Counter(
    "consumer_messages_total", "Messages consumed, by durable consumer and outcome", ["consumer", "outcome"]
)
OUTCOMES = ("acked", "nacked", "waiting", "released", "given_up")
IDLE_FETCHES = Counter(
    "consumer_idle_fetches_total",
    "Fetches that found no message within their timeout, by durable consumer",
    ["consumer"],
)
REWOUND = Counter(
    "consumer_rewinds_total",
    "Exclusive consumers made again from their ack floor on being taken (messages a dead reader left unacked)",
    ["consumer"],
)

PENDING = Gauge(
    "consumer_pending_messages", "Messages of the stream not yet delivered to the durable consumer", ["consumer"]
)
ACK_PENDING = Gauge(
    "consumer_ack_pending_messages", "Messages delivered to the durable consumer, not acked", ["consumer"]
)
#: JetStream's error code of a request on a stream that does not exist.
STREAM_NOT_FOUND = 10059
#: How often a consumer whose stream is not there yet looks again.
BIND_EVERY_S = 0.5
#: How often `read_through` asks JetStream how far a consumer has read (one request for every waiter),
#: and how long it waits at most for a consumer that does not get there.
READ_THROUGH_POLL_S = 0.05
READ_THROUGH_MOST_S = 10.0
#: Seconds between two readings of each consumer's info from JetStream (its lag).
LAG_EVERY_S = 5.0

#: How often an instance without an exclusive consumer's lease tries to take it, and how often the
#: holder checks that it still holds it (its connection to Postgres alive).
LEASE_RETRY_S = 1.0
LEASE_CHECK_S = 1.0

Handler = Callable[[bytes], Awaitable[None]]
#: A handler of a whole fetch at once (`durable_consumer(batched=True)`): the payloads in stream order.
BatchHandler = Callable[[list[bytes]], Awaitable[None]]


class LeaseLost(Exception):
    """This instance no longer holds the exclusive consumer's lease: another may be reading it."""


def nack_delay(delivered: int) -> float:
    """Seconds before the next delivery of a failed message: 0.2 s doubling, at most 5 s."""
    return float(min(5.0, 0.2 * 2 ** max(0, delivered - 1)))


@dataclass
class _Consumer:
    subjects: list[str]
    stream: JStream
    durable: str
    max_deliver: int
    handler: Handler
    gather_s: float
    fetch_timeout_s: float = FETCH_TIMEOUT_S
    #: Read by one instance at a time (the lease's holder), so the stream's order holds across instances.
    exclusive: bool = False
    #: Handles each fetch in one call (its writes in one transaction), then acks it (`durable_consumer`).
    batch_handler: BatchHandler | None = None
    #: Seconds JetStream waits for an ack before it redelivers (`durable_consumer`).
    ack_wait_s: float = ACK_WAIT_S


@dataclass
class Lease:
    """An exclusive consumer's lease: a session advisory lock (`pg_try_advisory_lock`) on a connection
    held out of the pool while it is ours; Postgres drops it when that connection closes."""

    pool: asyncpg.Pool
    name: str
    conn: asyncpg.Connection | None = None
    checked: float = 0.0

    async def take(self) -> bool:
        """Whether the lease is ours now (taken, or held already)."""
        if self.conn is not None:
            return await self.held()
        conn = await self.pool.acquire()
        try:
            got = await conn.fetchval("SELECT pg_try_advisory_lock(hashtext($1))", self.name)
        except BaseException:
            await self._drop(conn)
            raise
        if not got:
            await self.pool.release(conn)
            return False
        self.conn, self.checked = conn, time.monotonic()
        return True

    async def held(self, now: bool = False) -> bool:
        """Whether the lease's connection is still alive (checked at most every LEASE_CHECK_S unless `now`)."""
        if self.conn is None:
            return False
        if not now and time.monotonic() - self.checked < LEASE_CHECK_S:
            return True
        try:
            await asyncio.wait_for(self.conn.fetchval("SELECT 1"), LEASE_CHECK_S * 5)
        except Exception:
            log.warning("%s: lost the lease (its connection to Postgres failed)", self.name)
            conn, self.conn = self.conn, None
            await self._drop(conn)
            return False
        self.checked = time.monotonic()
        return True

    async def release(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        try:
            await conn.execute("SELECT pg_advisory_unlock(hashtext($1))", self.name)
        except Exception:
            await self._drop(conn)
            return
        await self.pool.release(conn)

    async def _drop(self, conn: asyncpg.Connection) -> None:
        """Close the connection (its locks go with it) and give the pool its slot back."""
        conn.terminate()
        with contextlib.suppress(Exception):
            await self.pool.release(conn)


@dataclass
class Consumers:
    """A service's durable consumers: registered with `durable_consumer`, run by `start`, ended by `stop`."""

    consumers: list[_Consumer] = field(default_factory=list)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _subscriptions: dict[str, JetStreamContext.PullSubscription] = field(default_factory=dict)
    _handling: int = 0
    _stopping: bool = False
    _leases: dict[str, Lease] = field(default_factory=dict)
    _js: JetStreamContext | None = None
    _infos: dict[str, tuple[float, ConsumerInfo | None]] = field(default_factory=dict)
    _info_locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def read_through(self, poll_s: float = READ_THROUGH_POLL_S, most_s: float = READ_THROUGH_MOST_S) -> None:
        """Return once each exclusive consumer has handled (acked) every message its stream held when
        called: at once when nothing is waiting; else once everything published has been delivered,
        when the ack floor reaches the last message delivered then (or nothing is left waiting). Asks
        JetStream only about the service's own durables (a service may not read another's stream's
        info), one request per `poll_s` however many wait (`_info`). A consumer stuck on a message that
        keeps failing would hold every time-out: past `most_s` it returns anyway, and says so. Raises
        while NATS is away."""
        if self._js is None:
            return
        loop = asyncio.get_running_loop()
        give_up = loop.time() + most_s
        for c in self.consumers:
            if not c.exclusive:
                continue
            target = 0  # the last message delivered once nothing was left undelivered
            while not self._stopping:
                info = await self._info(c, poll_s)
                if info is None or (not info.num_pending and not info.num_ack_pending):
                    break
                floor = (info.ack_floor.stream_seq if info.ack_floor is not None else 0) or 0
                if not target and not info.num_pending:
                    target = (info.delivered.stream_seq if info.delivered is not None else 0) or 0
                if target and floor >= target:
                    break
                if loop.time() > give_up:
                    log.warning("%s: not read through in %.0f s (a message failing?); acting anyway", c.durable, most_s)
                    return
                await asyncio.sleep(poll_s)

    async def _info(self, c: _Consumer, fresh_s: float) -> ConsumerInfo | None:
        """The durable's info, asked of JetStream at most once per `fresh_s` whoever asks (None: no such
        durable or stream yet: nothing was published for it to read)."""
        loop = asyncio.get_running_loop()
        lock = self._info_locks.setdefault(c.durable, asyncio.Lock())
        async with lock:
            known = self._infos.get(c.durable)
            if known is not None and loop.time() - known[0] < fresh_s:
                return known[1]
            assert self._js is not None
            try:
                info = await self._js.consumer_info(c.stream.name, c.durable)
            except NotFoundError:
                info = None
            self._infos[c.durable] = (loop.time(), info)
            return info

    async def start(self, js: JetStreamContext, pool: asyncpg.Pool | None = None) -> None:
        """Bind every consumer and start fetching. A consumer of a stream not created yet (its owner, a
        service started later, creates it: `natsauth`) is bound in its task as soon as the stream exists.
        An exclusive consumer is read only while this instance holds its lease in `pool` (None: no
        lease, as with one instance)."""
        self._js = js
        for c in self.consumers:
            if c.exclusive and pool is not None:
                self._leases[c.durable] = Lease(pool, f"consumer:{c.durable}")
            try:
                sub = await self._bind(js, c, first=True)
            except JETSTREAM_BUSY as exc:
                # JetStream busy for a moment (a cluster electing its leader after a node's loss): the
                # consumer's task binds it, rather than the service failing to start.
                log.warning("%s: not bound at start (%s); binding in the background", c.durable, exc)
                sub = None
            self._tasks.append(asyncio.create_task(self._run(js, c, sub), name=f"consumer-{c.durable}"))
        if self.consumers:
            self._tasks.append(asyncio.create_task(self._measure_lag(), name="consumer-lag"))

    async def _bind(
        self, js: JetStreamContext, c: _Consumer, first: bool = False, start_seq: int = 0
    ) -> JetStreamContext.PullSubscription | None:
        """The durable's pull subscription (created at its config when missing, from the stream's start or
        from `start_seq`); None: no stream yet."""
        config = ConsumerConfig(
            durable_name=c.durable,
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE if start_seq else DeliverPolicy.ALL,
            opt_start_seq=start_seq or None,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=c.ack_wait_s,
            max_deliver=c.max_deliver,
        )
        if len(c.subjects) > 1:  # several subjects, one order: a multi-subject filter (NATS 2.10+)
            config.filter_subjects = list(c.subjects)
        try:
            sub = await js.pull_subscribe(c.subjects[0], durable=c.durable, stream=c.stream.name, config=config)
        except NotFoundError as exc:
            if exc.err_code != STREAM_NOT_FOUND:
                raise
            if first:
                log.info("%s: stream %s not created yet; bound once its owner creates it", c.durable, c.stream.name)
            return None
        await self._fit_ack_wait(js, c, sub)
        self._subscriptions[c.durable] = sub
        return sub

    @staticmethod
    async def _fit_ack_wait(js: JetStreamContext, c: _Consumer, sub: JetStreamContext.PullSubscription) -> None:
        """A durable made before its ack wait was set (or changed) keeps its old one: binding does not
        update it, so it is updated here, the rest of its config (its start, after a rewind) as it is."""
        info = await sub.consumer_info()
        old = info.config.ack_wait
        if old is not None and abs(old - c.ack_wait_s) < 0.001:
            return
        info.config.ack_wait = c.ack_wait_s
        info.config.name = c.durable  # sent as CONSUMER.CREATE.<stream>.<durable>: what the bus rights allow
        try:
            await js.add_consumer(c.stream.name, config=info.config)
        except Exception as exc:  # not fatal: the consumer reads on with its old ack wait
            log.warning("%s: ack wait left at %s s, not %g s (%s: %s)", c.durable, old, c.ack_wait_s,
                        type(exc).__name__, exc)  # fmt: skip
            return
        log.info("%s: ack wait set to %g s", c.durable, c.ack_wait_s)

    async def _measure_lag(self) -> None:
        """Each durable's lag as JetStream counts it, every LAG_EVERY_S (NATS away: the last figures stay)."""
        while not self._stopping:
            for durable, sub in list(self._subscriptions.items()):
                try:
                    info = await sub.consumer_info()
                except Exception:
                    log.debug("%s: consumer info not read", durable, exc_info=True)
                    continue
                PENDING.labels(durable).set(info.num_pending or 0)
                ACK_PENDING.labels(durable).set(info.num_ack_pending or 0)
            await asyncio.sleep(LAG_EVERY_S)

    async def stop(self) -> None:
        """Stop fetching; a message being handled is finished (and acked) first."""
        self._stopping = True
        while self._handling:
            await asyncio.sleep(0.01)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # A fetch cancelled mid-way may leave its answer queued on the subscription, and NATS's drain
        # would wait for someone to read it: unsubscribe (the messages are redelivered, unacked).
        for sub in self._subscriptions.values():
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for lease in self._leases.values():
            with contextlib.suppress(Exception):
                await lease.release()

    async def _run(self, js: JetStreamContext, c: _Consumer, sub: JetStreamContext.PullSubscription | None) -> None:
        if sub is None:
            while sub is None and not self._stopping:
                await asyncio.sleep(BIND_EVERY_S)
                try:
                    sub = await self._bind(js, c)
                except Exception:  # NATS away for a moment: try again
                    log.exception("%s: binding failed; retrying", c.durable)
            if sub is None:
                return
            log.info("%s: bound to stream %s", c.durable, c.stream.name)
        lease = self._leases.get(c.durable)
        fresh = c.exclusive  # its first read, or its lease just taken: see `_rewound`
        reconnects = _reconnects(js)
        while not self._stopping:
            if lease is not None:
                held = lease.conn
                if not await self._until_leased(c, lease):
                    return
                fresh = fresh or held is None or lease.conn is not held  # taken (again) just now
            if fresh:
                fresh = False
                try:
                    sub = await self._rewound(js, c, sub)
                except Exception as exc:  # NATS away, or no right to delete the durable: read on as it is
                    log.warning(
                        "%s: not made again from its ack floor (%s: %s); messages its last reader left "
                        "unacked come back after ack_wait",
                        c.durable,
                        type(exc).__name__,
                        exc,
                    )
            try:
                messages = await sub.fetch(FETCH_BATCH, timeout=c.fetch_timeout_s)
            except TimeoutError:
                # Nothing came: fetch again at once. nats-py raises its own `nats.errors.TimeoutError` (a
                # subclass) or, since 2.16, the builtin one: catching the builtin takes both.
                IDLE_FETCHES.labels(c.durable).inc()
                continue
            except Exception:  # NATS away for a moment: try again, never give up
                log.exception("%s: fetch failed; retrying", c.durable)
                await asyncio.sleep(0.5)
                continue
            if c.exclusive and (now := _reconnects(js)) != reconnects:
                # NATS dropped the connection since the last fetch: the acks sent just before may be lost
                # with it, and their messages would come back after ack_wait, behind these. These go back,
                # and the consumer is read again from its ack floor, in order.
                reconnects = now
                for msg in messages:
                    with contextlib.suppress(Exception):
                        await msg.nak()
                log.info("%s: NATS reconnected; reading again from the ack floor", c.durable)
                fresh = True
                continue
            self._handling += 1
            alive = _KeepAlive(c, messages)
            try:
                await self._handle(c, messages)
            finally:
                alive.stop()
                self._handling -= 1
            if len(messages) < FETCH_BATCH:
                await asyncio.sleep(c.gather_s)

    async def _rewound(
        self, js: JetStreamContext, c: _Consumer, sub: JetStreamContext.PullSubscription
    ) -> JetStreamContext.PullSubscription:
        """An exclusive consumer about to be read by this instance: messages its last reader fetched and
        never acked (it was killed) would come back only after ack_wait, behind newer ones, out of the
        stream's order its handlers need. The durable is made again from just after its ack floor, so
        they come first, in order (the handlers are idempotent: one acked meanwhile is harmless again)."""
        info = await js.consumer_info(c.stream.name, c.durable)
        if not info.num_ack_pending:
            return sub
        floor = info.ack_floor.stream_seq if info.ack_floor is not None and info.ack_floor.stream_seq else 0
        log.warning(
            "%s: %d messages left unacked by its last reader; reading again from stream seq %d, in order",
            c.durable,
            info.num_ack_pending,
            floor + 1,
        )
        await js.delete_consumer(c.stream.name, c.durable)  # first: refused, the subscription stays as it is
        REWOUND.labels(c.durable).inc()
        with contextlib.suppress(Exception):
            await sub.unsubscribe()
        self._subscriptions.pop(c.durable, None)
        while True:  # the durable is gone now: it must be made again before anything else is read
            try:
                again = await self._bind(js, c, start_seq=floor + 1)
                if again is not None:
                    return again
            except Exception:
                log.exception("%s: not made again yet; retrying", c.durable)
            await asyncio.sleep(BIND_EVERY_S)

    async def _until_leased(self, c: _Consumer, lease: Lease) -> bool:
        """Wait until this instance holds the consumer's lease (False: stopping meanwhile)."""
        waited = False
        while not self._stopping:
            try:
                if await lease.take():
                    if waited:
                        log.info("%s: took the lease; reading", c.durable)
                    return True
            except Exception as exc:  # Postgres away: try again
                log.warning("%s: the lease could not be taken (%s); retrying", c.durable, exc)
            if not waited:
                log.info("%s: another instance reads it; waiting for its lease", c.durable)
                waited = True
            await asyncio.sleep(LEASE_RETRY_S)
        return False

    async def _handle(self, c: _Consumer, messages: list[Msg]) -> None:
        if c.batch_handler is not None and len(messages) > 1:
            batch = c.batch_handler
            try:
                await self._until_reachable(c, messages, lambda: batch([m.data for m in messages]))
            except LeaseLost:
                CONSUMED.labels(c.durable, "released").inc(len(messages))
                for rest in messages:
                    with contextlib.suppress(Exception):
                        await rest.nak()
                return
            except Exception:  # one message the handler refuses: found by handling them one at a time
                log.warning("%s: a batch of %d failed; handling it message by message", c.durable, len(messages))
            else:
                for msg in messages:
                    await msg.ack()
                CONSUMED.labels(c.durable, "acked").inc(len(messages))
                return
        for i, msg in enumerate(messages):
            try:
                await self._until_reachable(c, (msg,), functools.partial(c.handler, msg.data))
            except LeaseLost:  # another instance may read them now: they go back, in order, at once
                CONSUMED.labels(c.durable, "released").inc(len(messages) - i)
                for rest in messages[i:]:
                    with contextlib.suppress(Exception):
                        await rest.nak()
                return
            except Exception:
                delivered = msg.metadata.num_delivered
                if delivered >= c.max_deliver:  # JetStream would not deliver it again: said aloud, counted
                    log.exception(
                        "%s: message failed on its last delivery (%d of %d); GIVEN UP: stream %s seq %d is "
                        'not handled (consumer_messages_total{outcome="given_up"}, alert ConsumerGaveUp)',
                        c.durable,
                        delivered,
                        c.max_deliver,
                        c.stream.name,
                        msg.metadata.sequence.stream,
                    )
                    CONSUMED.labels(c.durable, "given_up").inc()
                    CONSUMED.labels(c.durable, "nacked").inc(len(messages) - i - 1)
                    await msg.term()
                else:
                    log.exception(
                        "%s: message failed (delivery %d of %d); redelivering", c.durable, delivered, c.max_deliver
                    )
                    CONSUMED.labels(c.durable, "nacked").inc(len(messages) - i)
                    await msg.nak(delay=nack_delay(delivered))
                for rest in messages[i + 1 :]:  # not handled: they come back in order
                    await rest.nak()
                return
            await msg.ack()
            CONSUMED.labels(c.durable, "acked").inc()

    async def _until_reachable(self, c: _Consumer, held: Sequence[Msg], handle: Callable[[], Awaitable[None]]) -> None:
        """Handle the `held` messages (`handle`: the handler's call, for one or a whole batch); while
        Postgres or NATS is out of reach, keep them (telling JetStream it is in progress) and try again
        with backoff rather than spend its deliveries: an outage longer than MAX_DELIVER redeliveries
        must not drop them. Other errors raise (NACKed, redelivered)."""
        delay = OUTAGE_FIRST_DELAY_S
        lease = self._leases.get(c.durable)
        while True:
            if lease is not None and not await lease.held(now=delay > OUTAGE_FIRST_DELAY_S):
                raise LeaseLost(c.durable)
            try:
                await handle()
                return
            except Exception as exc:
                if not unreachable(exc) or self._stopping:
                    raise
                log.warning("%s: a backing server is out of reach (%s); retrying in %.1f s", c.durable, exc, delay)
            CONSUMED.labels(c.durable, "waiting").inc()
            with contextlib.suppress(Exception):  # NATS away too: the message is redelivered after ack_wait
                for msg in held:
                    await msg.in_progress()
            await asyncio.sleep(delay)
            delay = min(delay * 2, OUTAGE_MAX_DELAY_S)


class _KeepAlive:
    """While this instance works through a fetch, tell JetStream every third of the ack wait that the
    messages not yet acked are in progress: only a reader that died (and so stopped telling it) has
    its messages redelivered, one ack wait later, whatever time the handling of a fetch takes. A timer
    until the first third has passed (most fetches are handled long before), a task only after it."""

    def __init__(self, c: _Consumer, messages: list[Msg]) -> None:
        self.every_s = c.ack_wait_s / 3
        self.messages = messages
        self._task: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(self.every_s, self._start)

    def _start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            for msg in self.messages:
                if not msg.is_acked:
                    with contextlib.suppress(Exception):  # NATS away: redelivered after the ack wait
                        await msg.in_progress()
            await asyncio.sleep(self.every_s)

    def stop(self) -> None:
        self._timer.cancel()
        if self._task is not None:
            self._task.cancel()


async def nothing_to_read() -> None:
    """A `read_through` with no consumers to wait for (a service's parts driven without them, in tests)."""


def _reconnects(js: JetStreamContext) -> int:
    """How often the JetStream context's connection was made again (nats-py counts it in `stats`)."""
    nc = getattr(js, "_nc", None)
    return int(nc.stats["reconnects"]) if nc is not None else 0


def durable_consumer(
    group: Consumers,
    subjects: str | Sequence[str],
    stream: JStream,
    durable: str,
    max_deliver: int = MAX_DELIVER,
    gather_s: float = GATHER_S,
    fetch_timeout_s: float = FETCH_TIMEOUT_S,
    exclusive: bool = False,
    ack_wait_s: float = ACK_WAIT_S,
) -> Callable[[Handler], Handler]:
    """Register `handler(payload)` on `group` as the durable pull consumer `durable` of `subjects`
    (one subject, or several read as one sequence in stream order); a fetch waits `fetch_timeout_s`
    for a first message before it fetches again. `exclusive`: read by one instance of the service at
    a time (its lease's holder), for a handler that needs one table's events in commit order.
    `ack_wait_s`: how soon the messages an instance fetched come back to the others if it dies
    holding them (a live one keeps them however long it takes: `_KeepAlive`); short for a
    shared consumer whose messages something waits for."""
    wanted = [subjects] if isinstance(subjects, str) else list(subjects)
    if not wanted:
        raise ValueError(f"{durable}: a consumer needs a subject")

    def register(handler: Handler) -> Handler:
        group.consumers.append(
            _Consumer(
                wanted,
                stream,
                durable,
                max_deliver,
                handler,
                gather_s,
                fetch_timeout_s,
                exclusive,
                ack_wait_s=ack_wait_s,
            )
        )
        for outcome in OUTCOMES:  # exported at 0 from the start: an alert on `increase` sees the first one
            CONSUMED.labels(durable, outcome)
        return handler

    return register


def batch_consumer(
    group: Consumers,
    subjects: str | Sequence[str],
    stream: JStream,
    durable: str,
    handler: Handler,
    max_deliver: int = MAX_DELIVER,
    gather_s: float = GATHER_S,
    fetch_timeout_s: float = FETCH_TIMEOUT_S,
    exclusive: bool = False,
) -> Callable[[BatchHandler], BatchHandler]:
    """`durable_consumer` for a handler that takes each fetch whole, in stream order, so its writes
    share one transaction (and one WAL flush) instead of one per message; the fetch is acked once
    it returns. `handler`, the same work for one message, takes over when a batch fails for another
    reason than an outage: the messages are then handled one at a time, and the one refused is
    NACKed as `durable_consumer` would."""

    def register(batch: BatchHandler) -> BatchHandler:
        durable_consumer(group, subjects, stream, durable, max_deliver, gather_s, fetch_timeout_s, exclusive)(handler)
        group.consumers[-1].batch_handler = batch
        return batch

    return register
