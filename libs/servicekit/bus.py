"""NATS JetStream: the stream every table event goes to, declared in code.

Services consume with `servicekit.consumers` (durable pull consumers, explicit
acks); each stream is declared here from one spec (a FastStream `JStream`) so
that publishers, consumers and operators agree on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import nats
from faststream.nats import JStream
from nats.aio.client import Client as NATS
from nats.errors import NoRespondersError
from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError, ServiceUnavailableError

from .errors import unreachable

log = logging.getLogger(__name__)
T = TypeVar("T")


def _stream(name: str, description: str, subject: str) -> JStream:
    """A file-backed stream kept by limits; a relay's retry within two minutes is dropped by its
    Nats-Msg-Id."""
    return JStream(
        name=name,
        description=description,
        subjects=[subject],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        duplicate_window=120.0,
        declare=True,
    )


#: Table events: one subject per table keeps each table's events in order.
TABLE_EVENTS = _stream(
    "MONOPOLY_TABLE_EVENTS",
    "Every committed event of every table (one message per committed command)",
    "monopoly.table.*.events",
)
#: The table events other services act on, by topic (`servicekit.signals`): each service's
#: consumer filters its topics instead of reading every event of every table.
TABLE_SIGNALS = _stream(
    "MONOPOLY_TABLE_SIGNALS",
    "The table events other services act on, by topic (lifecycle, turn, auction, casino, trade)",
    "monopoly.signals.*.*",
)


def _service_stream(service: str, what: str) -> JStream:
    return _stream(
        f"MONOPOLY_{service.upper()}_EVENTS",
        f"Every committed event of the {service} service ({what})",
        f"monopoly.{service}.*.*",
    )


#: The sub-protocol services' events on `monopoly.<service>.<table>.<kind>` (`<service>_subject`):
#: one table's events stay in order, and a consumer of one kind (the table, of results) filters it.
AUCTION_EVENTS = _service_stream("auction", "auctions opened, bids, passes, settlements")
TRADE_EVENTS = _service_stream("trade", "proposals, answers, executions, expiries")
CASINO_EVENTS = _service_stream("casino", "bets placed, declined and settled, pools")
#: Matches formed and finished: `monopoly.match.<table_id>.formed` / `.finished` (`MatchEvent`).
MATCH_EVENTS = _stream(
    "MONOPOLY_MATCH_EVENTS", "Every match the matchmaking service formed, and its end", "monopoly.match.*.*"
)
STREAMS = (TABLE_EVENTS, TABLE_SIGNALS, AUCTION_EVENTS, TRADE_EVENTS, CASINO_EVENTS, MATCH_EVENTS)


def table_subject(table_id: str) -> str:
    return f"monopoly.table.{table_id}.events"


def auction_subject(table_id: str = "*", kind: str = "*") -> str:
    """An `AuctionEvent` of `kind` (its type: opened, bid, passed, settled...); `*`: any."""
    return f"monopoly.auction.{table_id}.{kind}"


def trade_subject(table_id: str = "*", kind: str = "*") -> str:
    """A `TradeEvent` of `kind` (the trade's status); `*`: any."""
    return f"monopoly.trade.{table_id}.{kind}"


def casino_subject(table_id: str = "*", kind: str = "*") -> str:
    """A `CasinoEvent` of `kind` (the bet's status: open, settled, declined...); `*`: any."""
    return f"monopoly.casino.{table_id}.{kind}"


def match_subject(table_id: str, what: str = "formed") -> str:
    """`formed` when matchmaking seated the table, `finished` when its game ended."""
    return f"monopoly.match.{table_id}.{what}"


@dataclass(frozen=True, slots=True)
class Retention:
    """How long the table event stream keeps messages (limits policy: the oldest go first).

    The stream is the platform's record for analytics, not its store of truth
    (Postgres is): past these limits messages age out, and the archiver
    (`monopoly archive`, analytics.archive) keeps every one of them in Parquet
    first. `ClockAdvanced` (about a quarter of all events) stays on the stream:
    the stream is the complete, replayable record of each table, and a replay
    without the clock would not rebuild the timers (E1-E6); analysts filter it
    by type, where it costs a few bytes a row.
    """

    #: TABLE_EVENTS_MAX_AGE_DAYS: days a table event stays on the stream (0: for ever).
    max_age_days: float = 30.0
    #: TABLE_EVENTS_MAX_GB: the stream's size cap in GiB (0: none); the oldest go first beyond it.
    max_gb: float = 0.0
    #: TABLE_EVENTS_REPLICAS: copies of the table event stream in a NATS cluster (NATS_STREAM_REPLICAS
    #: unless set).
    replicas: int = 1
    #: NATS_STREAM_REPLICAS: copies of every stream in a NATS cluster (3 on a 3-node cluster, so a node's
    #: loss loses nothing; 1, the default, for a single server, which refuses more).
    stream_replicas: int = 1
    #: SIGNALS_MAX_AGE_DAYS: the signals stream feeds the services' consumers within seconds.
    signals_max_age_days: float = 7.0

    @staticmethod
    def from_env(env: dict[str, str] | None = None) -> Retention:
        e = os.environ if env is None else env
        d = Retention()
        stream_replicas = int(e.get("NATS_STREAM_REPLICAS") or d.stream_replicas)
        return Retention(
            max_age_days=float(e.get("TABLE_EVENTS_MAX_AGE_DAYS", d.max_age_days)),
            max_gb=float(e.get("TABLE_EVENTS_MAX_GB", d.max_gb)),
            replicas=int(e.get("TABLE_EVENTS_REPLICAS") or stream_replicas),
            stream_replicas=stream_replicas,
            signals_max_age_days=float(e.get("SIGNALS_MAX_AGE_DAYS", d.signals_max_age_days)),
        )


def stream_config(spec: JStream = TABLE_EVENTS, retention: Retention | None = None) -> StreamConfig:
    cfg = spec.config
    config = StreamConfig(
        name=spec.name,
        description=cfg.description,
        subjects=list(spec.subjects),
        retention=cfg.retention,
        storage=cfg.storage,
        duplicate_window=cfg.duplicate_window,
    )
    r = retention or Retention.from_env()
    config.num_replicas = r.stream_replicas
    if spec.name == TABLE_EVENTS.name:
        config.max_age = r.max_age_days * 86400.0 if r.max_age_days > 0 else None
        config.max_bytes = int(r.max_gb * 2**30) if r.max_gb > 0 else None
        config.num_replicas = r.replicas
    elif spec.name == TABLE_SIGNALS.name and r.signals_max_age_days > 0:
        config.max_age = r.signals_max_age_days * 86400.0
    return config


async def _nats_error(exc: Exception) -> None:
    """The client's asynchronous errors. While the server is away it reports each failed reconnect:
    that is an outage the service rides out (its health says NOT_SERVING), one line each, not a
    traceback; anything else keeps its traceback."""
    if unreachable(exc) or isinstance(exc, OSError | TimeoutError):
        log.warning("nats: %s: %s", type(exc).__name__, exc)
    else:
        log.error("nats: encountered error", exc_info=exc)


async def _nats_reconnected() -> None:
    log.info("nats: reconnected")


class NatsOutOfReach(ConnectionError):
    """A command-line tool's first connection to NATS did not succeed in time (`give_up_after_s`)."""


async def connect(
    url: str,
    user: str = "",
    password: str = "",
    streams: Iterable[str] | None = None,
    inbox_prefix: str = "_INBOX",
    tls: ssl.SSLContext | None = None,
    give_up_after_s: float | None = None,
    update_streams: bool = True,
) -> tuple[NATS, JetStreamContext]:
    """Connect (as `user` when a password is given; `servicekit.natsauth` says what it may do) and
    ensure the streams named in `streams` (None: every stream): each service creates the streams it
    owns when missing; with `update_streams` (admin, an open server) an existing one is brought to its
    spec, else only checked against it (`ensure_stream`).

    A service waits for NATS as long as it takes; a command-line tool passes `give_up_after_s` and
    gets `NatsOutOfReach`, saying why (refused, a wrong password...), when the first connection has
    not succeeded by then. Once connected, both reconnect without end."""
    client: list[NATS] = []
    failures: list[Exception] = []

    async def disconnected() -> None:
        if client and not client[0].is_closed:  # lost, not closed on purpose
            log.warning("nats: disconnected; reconnecting")

    refused = asyncio.Event()  # a tool's first connection refused its credentials: no use trying again

    async def error(exc: Exception) -> None:
        if not client and give_up_after_s is not None:  # a tool's first connection: said once, at the end
            failures.append(exc)
            if "authorization" in str(exc).lower():
                refused.set()
            return
        await _nats_error(exc)

    connecting = nats.connect(
        [part.strip() for part in url.split(",") if part.strip()],  # several URLs: the nodes of a cluster
        name=user or "monopoly",
        max_reconnect_attempts=-1,
        inbox_prefix=inbox_prefix,
        tls=tls,
        user=user if password else None,
        password=password or None,
        error_cb=error,
        disconnected_cb=disconnected,
        reconnected_cb=_nats_reconnected,
    )
    if give_up_after_s is None:
        nc = await connecting
    else:
        task = asyncio.ensure_future(connecting)
        stop = asyncio.ensure_future(refused.wait())
        await asyncio.wait({task, stop}, timeout=give_up_after_s, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            last = failures[-1] if failures else None
            why = f"{type(last).__name__}: {last}" if last is not None else "no answer"
            if refused.is_set():
                raise NatsOutOfReach(f"NATS refused the credentials ({why})")
            raise NatsOutOfReach(f"NATS did not take the connection within {give_up_after_s:g} s ({why})")
        nc = task.result()
    client.append(nc)
    js = nc.jetstream()
    wanted = None if streams is None else set(streams)
    for spec in STREAMS:
        if wanted is None or spec.name in wanted:
            ensure = functools.partial(ensure_stream, js, spec, update=update_streams)
            await when_jetstream_answers(ensure, f"stream {spec.name}")
    return nc, js


#: How long a starting service waits for JetStream to answer its stream requests: a cluster that lost
#: a node elects its leaders again within seconds, and a service started meanwhile must not give up.
JETSTREAM_WAIT_S = 60.0
#: What JetStream answers while it cannot yet (no leader, no responders): worth asking again.
JETSTREAM_BUSY = (TimeoutError, NoRespondersError, ServiceUnavailableError)
#: A new cluster's answer to a replicated stream until every node's JetStream has reported to the
#: meta leader ("no suitable peers for placement"): worth asking again too.
PLACEMENT_PENDING = 10005


def jetstream_busy(exc: BaseException) -> bool:
    """Whether `exc` is JetStream not able to answer yet, rather than refusing the request."""
    if isinstance(exc, BadRequestError):
        return bool(exc.err_code == PLACEMENT_PENDING)
    return isinstance(exc, JETSTREAM_BUSY)


async def when_jetstream_answers(call: Callable[[], Awaitable[T]], what: str, wait_s: float = JETSTREAM_WAIT_S) -> T:
    """`call()`, asked again with a growing pause while JetStream is busy (`jetstream_busy`), for up
    to `wait_s`: a cluster forming or electing leaders answers within seconds."""
    loop = asyncio.get_running_loop()
    deadline, delay = loop.time() + wait_s, 0.25
    while True:
        try:
            return await call()
        except (*JETSTREAM_BUSY, BadRequestError) as exc:
            if not jetstream_busy(exc) or loop.time() > deadline:
                raise
            log.warning("%s: JetStream not answering (%r); asking again in %.2f s", what, exc, delay)
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)


async def ensure_stream(js: JetStreamContext, spec: JStream = TABLE_EVENTS, update: bool = True) -> list[str]:
    """Create the stream if missing; with `update`, bring an existing one to the spec. Without it (a
    service's own user may create its stream, never change it: `servicekit.natsauth`), an existing
    stream is only checked, and its differences from the spec are logged and returned."""
    config = stream_config(spec)
    try:
        info = await js.stream_info(spec.name)
    except NotFoundError:
        await js.add_stream(config)
        return []
    if update:
        await js.update_stream(config)
        return []
    differences = stream_drift(info.config, config)
    if differences:
        log.error(
            "stream %s differs from its spec (%s): only the bus's admin changes a stream; run "
            "`monopoly streams` as admin to bring it to the spec",
            spec.name,
            "; ".join(differences),
        )
    return differences


#: Stream settings the platform never sets: on a stream they feed it from elsewhere or send its
#: messages elsewhere (`republish` publishes on any subject), so their presence is a difference.
FOREIGN_SETTINGS = ("sources", "mirror", "republish", "subject_transform")


def stream_drift(actual: StreamConfig, wanted: StreamConfig) -> list[str]:
    """How a stream's settings differ from its spec, one phrase per setting (empty: as specified)."""
    out = []

    def norm(name: str, value: object) -> object:
        if name == "subjects":
            return sorted(value or [])  # type: ignore[call-overload]
        if name == "max_age":
            return float(value or 0)  # type: ignore[arg-type]
        if name == "max_bytes":
            return -1 if value is None else value
        return value

    for name in ("subjects", "retention", "storage", "duplicate_window", "num_replicas", "max_age", "max_bytes"):
        have, want = norm(name, getattr(actual, name)), norm(name, getattr(wanted, name))
        if have != want:
            out.append(f"{name} {have!r}, spec {want!r}")
    for name in FOREIGN_SETTINGS:
        if getattr(actual, name, None):
            out.append(f"{name} {getattr(actual, name)!r} (the platform sets none)")
    return out
