"""The gateway's WebSocket protocol: what a browser may send, checked before anything is called.

Every message is one JSON object (text frame) of at most `MAX_MESSAGE_BYTES`,
with an `op` naming the request and an optional `id` the answer repeats:

    -> {"id": 1, "op": "register", "name": "ada"}
    <- {"id": 1, "ok": true, "result": {"player_id": "...", "player_token": "..."}}
    <- {"id": 2, "ok": false, "error": {"code": "FAILED_PRECONDITION", "rule_id": "P1", "message": "..."}}

Pushes carry a `type` instead of an `id`: `queue` (WatchQueue's statuses), `table` (a
snapshot or the events of one command, the view and the seat's legal commands), `auction`
(the auction service's view of a running auction), `trades` (open proposals).

The schema is pydantic's (`Request`), the rate limit a token bucket per connection:
a malformed or refused message is answered with an error on that connection only.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Largest message accepted (bytes of JSON); aiohttp closes a connection above `HARD_LIMIT_BYTES`.
MAX_MESSAGE_BYTES = 8 * 1024
HARD_LIMIT_BYTES = 64 * 1024
#: Per connection: messages per second sustained, and the burst allowed on top.
RATE_PER_S = 20.0
BURST = 40
#: Per client address, over all its connections: registrations per second sustained and the burst on top,
#: matchmaking's own per-caller quota (the gateway registers with its token, which that quota does not limit).
REGISTER_RATE_PER_S = 20.0
REGISTER_BURST = 200
#: Client addresses whose registration buckets are kept (the least recently seen are forgotten first).
MAX_CLIENTS = 100_000
#: Refused messages in a row (rate or schema) after which the connection is closed (1008).
MAX_STRIKES = 200
MODES = ("classic", "speed", "duel", "team", "hasbro")

Token = Annotated[str, Field(min_length=1, max_length=2048, pattern=r"^[A-Za-z0-9_\-.=]+$")]
Ident = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_\-:.]+$")]


#: A message id is the browser's: a JavaScript safe integer, or a short string.
MessageId = Annotated[int, Field(ge=-(2**53 - 1), le=2**53 - 1)] | Annotated[str, Field(max_length=64)]


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: MessageId | None = Field(default=None)


class Register(_Op):
    op: Literal["register"]
    name: Annotated[str, Field(min_length=1, max_length=32)]


class Lobby(_Op):
    op: Literal["lobby"]
    player_token: Token | None = None


class Enqueue(_Op):
    op: Literal["enqueue"]
    player_token: Token
    mode: Literal["classic", "speed", "duel", "team", "hasbro"]
    bot_fill: bool = False
    #: R4: friends who queue with the same party code are seated together (matchmaking checks the size).
    party_id: Annotated[str, Field(max_length=64)] = ""
    party_size: Annotated[int, Field(ge=0, le=6)] = 0


class Cancel(_Op):
    op: Literal["cancel"]
    player_token: Token


class MyMatch(_Op):
    op: Literal["my_match"]
    player_token: Token


class WatchQueue(_Op):
    """Follow the player's ticket again (its `queue` pushes), as `enqueue` does: a page that reconnects
    while its player waits in a queue learns of the match."""

    op: Literal["watch_queue"]
    player_token: Token


class CustomCreate(_Op):
    op: Literal["custom_create"]
    player_token: Token
    settings: dict[str, int | bool | str | None] = Field(default_factory=dict, max_length=16)
    seats: Annotated[int, Field(ge=2, le=5)] = 4


class CustomJoin(_Op):
    op: Literal["custom_join"]
    player_token: Token
    lobby_id: Ident


class CustomStart(_Op):
    op: Literal["custom_start"]
    player_token: Token
    lobby_id: Ident
    bot_fill: bool = False


class Watch(_Op):
    op: Literal["watch"]
    table_id: Ident
    token: Token  # a seat token (plays) or a spectator token (watches)
    from_seq: Annotated[int, Field(ge=0)] = 0  # the last seq the browser has: the log resumes after it


class Unwatch(_Op):
    op: Literal["unwatch"]


class SendCommand(_Op):
    op: Literal["command"]
    table_id: Ident
    seat_token: Token
    #: An engine command without its seat ({"type": "Build", "square": 3}); checked by engine.codec.
    command: dict[str, Any] = Field(max_length=12)
    #: Optional idempotency key: a retry after a reconnect is answered once (by the table).
    command_id: Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9_\-]*$")] = ""


Request = Annotated[
    Register
    | Lobby
    | Enqueue
    | Cancel
    | MyMatch
    | WatchQueue
    | CustomCreate
    | CustomJoin
    | CustomStart
    | Watch
    | Unwatch
    | SendCommand,
    Field(discriminator="op"),
]
_REQUEST: TypeAdapter[Any] = TypeAdapter(Request)


class GatewayError(Exception):
    """An answer of `ok: false`: a gRPC status name, a message and the rule ID when a rule refused."""

    def __init__(self, code: str, message: str, rule_id: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.rule_id = code, message, rule_id

    def as_data(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "rule_id": self.rule_id}


def parse(text: str | bytes) -> Any:
    """The request in `text`, or `GatewayError(INVALID_ARGUMENT)` saying what is wrong with it."""
    if isinstance(text, bytes):
        raise GatewayError("INVALID_ARGUMENT", "messages are JSON text frames, not binary")
    if len(text.encode()) > MAX_MESSAGE_BYTES:
        raise GatewayError("INVALID_ARGUMENT", f"message larger than {MAX_MESSAGE_BYTES} bytes")
    try:
        return _REQUEST.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        raise GatewayError("INVALID_ARGUMENT", f"{where}: {first['msg']}") from None


def request_id(text: str | bytes) -> int | str | None:
    """The `id` of a message that failed validation, so its error still answers it (best effort)."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError, RecursionError):  # RecursionError: JSON nested thousands deep
        return None
    value = data.get("id") if isinstance(data, dict) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) <= 2**53 - 1 else None  # what the answer can carry (a JSON number)
    return value if isinstance(value, str) and len(value) <= 64 else None


#: One client address's connections and their messages together (`GatewaySettings`): without them one
#: machine opens hundreds of connections, each with its own rate, and floods the platform through them.
CONNECTIONS_PER_CLIENT = 32
CLIENT_RATE_PER_S = 80.0
CLIENT_BURST = 160


def client_address(peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[IPNetwork]) -> str:
    """The browser's address: the peer's, or, when the peer is a trusted proxy (an ingress), the last
    address of `X-Forwarded-For` that is not one (earlier ones are the client's to write)."""
    address = peer or "?"
    if not trusted or not _within(address, trusted):
        return address
    hops = [hop.strip() for value in forwarded_for for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _within(hop, trusted):
            return hop
    return hops[0] if hops else address


def _within(address: str, networks: Sequence[IPNetwork]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def networks(text: str) -> tuple[IPNetwork, ...]:
    """Comma-separated addresses or CIDR ranges (GATEWAY_TRUSTED_PROXIES)."""
    return tuple(ipaddress.ip_network(part.strip(), strict=False) for part in text.split(",") if part.strip())


class ClientLimits:
    """A `RateLimit` per client address, shared by its connections (the oldest forgotten past
    `MAX_CLIENTS`: a forgotten client starts again with a full burst)."""

    def __init__(self, rate: float = REGISTER_RATE_PER_S, burst: int = REGISTER_BURST, clock: Any = time.monotonic):
        self.rate, self.burst, self.clock = rate, burst, clock
        self._limits: OrderedDict[str, RateLimit] = OrderedDict()
        #: Open connections per client address (`open`, `close`).
        self.connections: dict[str, int] = {}

    def open(self, client: str, cap: int) -> bool:
        """Count a new connection of `client`; False (not counted) when it holds `cap` already (0: no cap)."""
        held = self.connections.get(client, 0)
        if cap and held >= cap:
            return False
        self.connections[client] = held + 1
        return True

    def close(self, client: str) -> None:
        left = self.connections.get(client, 0) - 1
        if left > 0:
            self.connections[client] = left
        else:
            self.connections.pop(client, None)

    def take(self, client: str) -> bool:
        limit = self._limits.get(client)
        if limit is None:
            limit = self._limits[client] = RateLimit(self.rate, self.burst, self.clock)
            while len(self._limits) > MAX_CLIENTS:
                self._limits.popitem(last=False)
        else:
            self._limits.move_to_end(client)
        return limit.take()


class RateLimit:
    """A token bucket: `rate` messages per second, `burst` at once."""

    def __init__(self, rate: float = RATE_PER_S, burst: int = BURST, clock: Any = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, float(burst), clock
        self.tokens = float(burst)
        self.at = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


__all__ = [
    "BURST",
    "CLIENT_BURST",
    "CLIENT_RATE_PER_S",
    "CONNECTIONS_PER_CLIENT",
    "HARD_LIMIT_BYTES",
    "MAX_MESSAGE_BYTES",
    "MAX_STRIKES",
    "RATE_PER_S",
    "ClientLimits",
    "client_address",
    "networks",
    "GatewayError",
    "RateLimit",
    "Request",
    "parse",
    "request_id",
]
