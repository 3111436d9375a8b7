"""One service runner: every service's process is the same assembly of parts, described by a spec.

A service's `main.py` says what is its own (`ServiceSpec`: its settings, migrations, how its state is
built from the pool and JetStream, its gRPC servicers, its consumers, what it does on start and on
stop) and calls `run_service(spec)`. The runner does the rest in one order for all of them:

start: Postgres pool (in the service's schema) -> migrations (the kit's, then its own) -> NATS and
the streams it owns (`natsauth`) -> outbox relay -> the service's state (`build`) -> its `start` hook (recovery,
background tasks) -> consumers -> gRPC (health, reflection, tokens, error mapping) -> metrics ->
"<name> service ready on host:port".

stop (SIGINT, SIGTERM, or the `stop` event in-process): gRPC (2 s grace for calls in flight) ->
consumers (the message being handled is finished and acked) -> the service's `stop` hook -> channels
to other services -> the relay (its last batch published) -> NATS drained -> pool closed. The same
unwinding runs when start fails half-way, so a service never leaves a pool or a connection behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import asyncpg
import grpc
from nats.js import JetStreamContext

from . import (
    auth,
    credentials,
    db,
    grpcserver,
    health,
    idempotency,
    lifecycle,
    logs,
    metrics,
    natsauth,
    settings,
    tls,
)
from .consumers import Consumers
from .grpcserver import Registration
from .outbox import Relay
from .settings import Settings

log = logging.getLogger(__name__)

AppT = TypeVar("AppT")


@dataclass
class Runtime:
    """What a service builds its state from: its settings, the pool, JetStream and the relay's wake-up."""

    settings: Settings
    pool: asyncpg.Pool
    js: JetStreamContext
    #: Call after committing outbox rows: the relay publishes them now rather than at its next look.
    wake_relay: Callable[[], None]
    _channels: list[grpc.aio.Channel] = field(default_factory=list)

    def channel(self, target: str) -> grpc.aio.Channel:
        """A channel to another service (TLS, with this service's certificate, as its settings say),
        closed by the runner at shutdown; its calls carry this service's own service token
        (`servicekit.access`: SERVICE)."""
        token = auth.renewed_service_token(self.settings.token_secret, self.settings.service)
        channel = credentials.channel(target, token, self.settings.tls)
        self._channels.append(channel)
        return channel


@dataclass(frozen=True, slots=True)
class ServiceSpec(Generic[AppT]):
    """A service's own parts; `run_service` wires them (see the module's docstring for the order)."""

    settings: Settings
    #: Its ordered `NNN_name.sql` files (`servicekit.db.migrate`).
    migrations: Path
    #: The service's state (an `AppT`: its aggregate of tables, auctions, ...) from the runtime.
    build: Callable[[Runtime], AppT]
    #: Its gRPC servicers and the names health checking reports SERVING.
    grpc: Callable[[AppT], Iterable[Registration]]
    grpc_names: Sequence[str]
    #: Its durable consumers, started after `start` (recovered state first, then new messages).
    consumers: Callable[[AppT], Consumers] | None = None
    #: Recovery and background tasks, before consumers and gRPC; returns a note for the ready line
    #: ("3 tables resumed") or None.
    start: Callable[[AppT], Awaitable[str | None]] | None = None
    #: Ends background work, after gRPC and the consumers stopped (may be a coroutine function).
    stop: Callable[[AppT], Awaitable[None] | None] | None = None
    #: Its Postgres schema (None: the database's default schema).
    schema: str | None = None
    pool_size: int = 8
    #: Whether it publishes through an outbox (a `Relay` runs then).
    outbox: bool = True

    @property
    def name(self) -> str:
        return self.settings.service


async def serve(spec: ServiceSpec[AppT], ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    """Run the service until SIGINT/SIGTERM or `stop`; `ready` is set once it serves (for in-process use)."""
    s = spec.settings
    if not s.database_url or not s.nats_url:
        raise SystemExit(f"{spec.name} service: set DATABASE_URL and NATS_URL (make run starts both for you)")
    if not natsauth.has_credentials(s) and not settings.dev_mode() and not settings.nats_anonymous():
        raise SystemExit(
            f"{spec.name} service: set NATS_PASSWORD (or NATS_PASSWORD_FILE), the password of its bus user "
            f"{s.nats_user!r}: without it any client of the bus could pose as the service. NATS_ANONYMOUS=1 "
            "connects to an open NATS without credentials (a laptop, a test server)"
        )
    async with contextlib.AsyncExitStack() as stack:
        pool = await db.create_pool(s.database_url, max_size=spec.pool_size, schema=spec.schema)
        stack.push_async_callback(pool.close)
        await db.migrate(pool, "servicekit", idempotency.MIGRATIONS)  # the kit's tables first
        await db.migrate(pool, spec.name, spec.migrations)
        nc, js = await natsauth.connect(s.nats_url, s.nats_user, s.nats_password, tls.nats_context(s.tls))
        stack.push_async_callback(nc.drain)
        wake: Callable[[], None] = _no_relay
        if spec.outbox:
            relay = Relay(pool, js, spec.name)
            relay_task = asyncio.create_task(relay.run(), name="outbox-relay")
            stack.push_async_callback(_stop_relay, relay, relay_task)
            wake = relay.wake
        runtime = Runtime(s, pool, js, wake)
        stack.push_async_callback(_close_channels, runtime._channels)
        app = spec.build(runtime)
        if spec.stop is not None:
            stack.push_async_callback(_call, spec.stop, app)
        note = await spec.start(app) if spec.start is not None else None
        if spec.consumers is not None:
            consumers = spec.consumers(app)
            await consumers.start(js, pool)  # exclusive consumers: one instance at a time
            stack.push_async_callback(consumers.stop)
        server, port, health_servicer = await grpcserver.start_server(
            s.host,
            s.grpc_port,
            spec.grpc(app),
            spec.grpc_names,
            token_secret=s.token_secret,
            tls=s.tls,
            quota_settings=s.quotas,
        )
        stack.push_async_callback(server.stop, 2)
        if s.health_port:
            probes = await grpcserver.start_health_server(s.host, s.health_port, health_servicer)
            stack.push_async_callback(probes.stop, 0)
        watch = health.start(health_servicer, spec.grpc_names, pool, nc)  # NOT_SERVING while either is away
        stack.callback(watch.cancel)
        metrics.serve_metrics(s.metrics_port, s.host)
        suffix = f" ({note})" if note else ""
        if s.instance_id:
            suffix = f" [instance {s.instance_id}]{suffix}"
        log.info("%s service on %s:%s%s", spec.name, s.host, port, suffix)
        print(f"{spec.name} service ready on {s.host}:{port}{suffix}", flush=True)
        if ready is not None:
            ready.set()
        await lifecycle.until_stopped(stop)


def run_service(spec: ServiceSpec[AppT]) -> None:
    """A service's `main`: logging (LOG_FORMAT, LOG_LEVEL; the token key and the database password
    scrubbed from every line), one event loop, `serve` until a signal."""
    s = spec.settings
    logs.configure(spec.name, [*s.token_secret.secrets, s.nats_password, logs.database_password(s.database_url)])
    lifecycle.run(lambda: serve(spec))


def _no_relay() -> None:
    """The wake-up of a service without an outbox."""


async def _call(hook: Callable[[AppT], Awaitable[None] | None], app: AppT) -> None:
    result = hook(app)
    if inspect.isawaitable(result):
        await result


async def _stop_relay(relay: Relay, task: asyncio.Task[None]) -> None:
    relay.stop()
    await task


async def _close_channels(channels: list[grpc.aio.Channel]) -> None:
    for channel in channels:
        await channel.close()


__all__ = ["Registration", "Runtime", "ServiceSpec", "run_service", "serve"]
