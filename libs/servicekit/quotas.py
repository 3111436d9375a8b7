"""Quotas: how much one player, one connection or one caller may ask of a service.

Token buckets (a rate per second and a burst) for commands, table creation and registrations,
and a cap on the streams one caller keeps open. The access table (`servicekit.access`) names the
quota each method draws from; the server interceptor charges it after the token is verified, per
principal (a seat, a spectator's table, a registered player, a service) and per connection (the
caller's address and port), and refuses with RESOURCE_EXHAUSTED and the trailing metadata
`retry-after-ms`: when the next call would be taken.

A refusal is answered no sooner than `refusal_delay_ms` (100 ms) after the call: a refusal still
costs the service a call's decoding and a token's check in its one event loop, and a client that
sends each call again as soon as it is answered would otherwise take as much of that loop as it
likes. Held, each of its calls in flight costs nothing (a timer) and it gets ten refusals a second
at most per call in flight; a client that honours `retry-after-ms` never meets the delay.

The numbers are settings (`QuotaSettings.from_env`), generous for the platform's own bots at full
speed and far below a flood: one client at 2,300 commands/s is cut to its seat's rate.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from .errors import Exhausted

Clock = Callable[[], float]


@dataclass(slots=True)
class Bucket:
    """`rate` calls per second on average, `burst` at once."""

    rate: float
    burst: float
    tokens: float
    at: float

    def take(self, now: float) -> float:
        """0.0 when a call is taken, else the seconds until one would be."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0 - 1e-9:  # a whole token, give or take the float sums
            self.tokens = max(0.0, self.tokens - 1.0)
            return 0.0
        return (1.0 - self.tokens) / self.rate if self.rate > 0 else math.inf


@dataclass
class Buckets:
    """A bucket per key (a player, a connection), the least recently used dropped past `max_keys`
    (a dropped key starts full again: at worst one more burst)."""

    rate: float
    burst: float
    max_keys: int = 100_000
    clock: Clock = time.monotonic
    _buckets: OrderedDict[str, Bucket] = field(default_factory=OrderedDict)

    def take(self, key: str) -> float:
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket(self.rate, self.burst, self.burst, now)
            if len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return bucket.take(now)


@dataclass
class Streams:
    """At most `limit` open streams per key."""

    limit: int
    _open: dict[str, int] = field(default_factory=dict)

    @contextmanager
    def hold(self, key: str, what: str) -> Iterator[None]:
        if self._open.get(key, 0) >= self.limit:
            raise Exhausted(f"at most {self.limit} open {what} streams per {key.split(':', 1)[0]}", 1000)
        self._open[key] = self._open.get(key, 0) + 1
        try:
            yield
        finally:
            left = self._open[key] - 1
            if left:
                self._open[key] = left
            else:
                del self._open[key]


#: The quotas an access rule can name (`access.Rule.quota`).
COMMAND, CREATE, REGISTER, STREAM = "command", "create", "register", "stream"


@dataclass(frozen=True, slots=True)
class QuotaSettings:
    """Rates per second and bursts per principal and per connection, and open streams per principal."""

    commands_per_s: float = 200.0
    commands_burst: float = 400.0
    creates_per_s: float = 20.0
    creates_burst: float = 200.0
    registrations_per_s: float = 20.0
    registrations_burst: float = 200.0
    #: Every call of one connection (its address and port), whoever's tokens it carries.
    connection_per_s: float = 2000.0
    connection_burst: float = 4000.0
    streams: int = 256
    #: Streams opened per second (and burst) per principal: a stream's opening may send a table's whole
    #: history (`WatchTable(from_seq=1)`), so reopening at the command rate would make one seat a flood.
    stream_opens_per_s: float = 20.0
    stream_opens_burst: float = 500.0
    #: Calls open at once in one process, streams included, whoever makes them: past it a call is
    #: refused RESOURCE_EXHAUSTED before any handler runs (streams opened and never used cost memory).
    calls: int = 100_000
    #: A refusal is answered this long after its call at the soonest (0: at once).
    refusal_delay_ms: float = 100.0

    @staticmethod
    def from_env(env: Mapping[str, str]) -> QuotaSettings:
        """QUOTA_COMMANDS_PER_S, QUOTA_COMMANDS_BURST, QUOTA_CREATES_PER_S, QUOTA_CREATES_BURST,
        QUOTA_REGISTRATIONS_PER_S, QUOTA_REGISTRATIONS_BURST, QUOTA_CONNECTION_PER_S,
        QUOTA_CONNECTION_BURST, QUOTA_STREAM_OPENS_PER_S, QUOTA_STREAM_OPENS_BURST, QUOTA_REFUSAL_DELAY_MS,
        QUOTA_STREAMS, QUOTA_CALLS (unset: the defaults above)."""
        d = QuotaSettings()
        names = (
            "commands_per_s",
            "commands_burst",
            "creates_per_s",
            "creates_burst",
            "registrations_per_s",
            "registrations_burst",
            "connection_per_s",
            "connection_burst",
            "stream_opens_per_s",
            "stream_opens_burst",
            "refusal_delay_ms",
        )
        values = {n: float(env.get(f"QUOTA_{n.upper()}") or getattr(d, n)) for n in names}
        return QuotaSettings(
            **values,
            streams=int(env.get("QUOTA_STREAMS") or d.streams),
            calls=int(env.get("QUOTA_CALLS") or d.calls),
        )


class Quotas:
    """The buckets of one server (one process): charged by the interceptor."""

    def __init__(self, settings: QuotaSettings | None = None, clock: Clock = time.monotonic) -> None:
        s = settings or QuotaSettings()
        self.settings = s
        self.buckets = {
            COMMAND: Buckets(s.commands_per_s, s.commands_burst, clock=clock),
            CREATE: Buckets(s.creates_per_s, s.creates_burst, clock=clock),
            REGISTER: Buckets(s.registrations_per_s, s.registrations_burst, clock=clock),
            STREAM: Buckets(s.stream_opens_per_s, s.stream_opens_burst, clock=clock),
        }
        self.connections = Buckets(s.connection_per_s, s.connection_burst, max_keys=10_000, clock=clock)
        self.streams = Streams(s.streams)

    def charge(self, quota: str | None, principal: str, connection: str) -> None:
        """Take one call of `quota` for `principal` and one for `connection`; RESOURCE_EXHAUSTED
        (`Exhausted`, with the wait) when either is spent."""
        wait = self.connections.take(connection) if connection else 0.0
        if wait:
            raise Exhausted("too many calls on this connection", _ms(wait))
        if quota in self.buckets:
            wait = self.buckets[quota].take(principal)
            if wait:
                raise Exhausted(f"too many {quota} calls for this {principal.split(':', 1)[0]}", _ms(wait))


def _ms(seconds: float) -> int:
    return max(1, min(60_000, math.ceil(seconds * 1000)))
