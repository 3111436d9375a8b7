"""Errors a service raises for bad requests; the gRPC layer maps each to its status."""

from __future__ import annotations

import asyncpg
import nats.errors
import nats.js.errors

#: What a lost or refused connection to Postgres raises: the server is away (down, restarting, its
#: socket gone), not the request at fault. `OSError` covers ConnectionRefusedError, the unix socket's
#: FileNotFoundError and TimeoutError; class 08 errors and the 57P shutdowns are the server's word for it.
PG_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.OperatorInterventionError,
    asyncpg.InterfaceError,
    asyncpg.TooManyConnectionsError,
    # The connection's protocol caught in the middle of another operation: what asyncpg raises on a
    # connection that Postgres dropped while it was being closed or reset (seen as Postgres stopped).
    asyncpg.exceptions.InternalClientError,
)
#: The same for NATS and JetStream (no server, a connection closed or reconnecting, no stream answered).
NATS_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    nats.errors.ConnectionClosedError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.ConnectionDrainingError,
    nats.errors.NoServersError,
    nats.errors.NoRespondersError,
    nats.errors.StaleConnectionError,
    nats.errors.OutboundBufferLimitError,
    nats.js.errors.NoStreamResponseError,
    nats.js.errors.ServiceUnavailableError,
)
#: How long a client should wait before retrying a call refused because a backing server is away.
RETRY_AFTER_MS = 1000


def unreachable(exc: BaseException) -> bool:
    """True when `exc` says Postgres or NATS (or a service that needs them: `Unavailable`) could not be
    reached, so the same request may succeed later; False when the request itself was at fault."""
    if isinstance(exc, asyncpg.QueryCanceledError):  # a statement timeout or a cancelled call: no outage
        return False
    return isinstance(exc, (Unavailable, *PG_CONNECTION_ERRORS, *NATS_CONNECTION_ERRORS))


class BadRequest(ValueError):
    """Malformed input: INVALID_ARGUMENT; `rule`, when a game rule refused it (a table of too many
    players, a setting out of bounds), goes to the trailing metadata `rule-id` as a refused command's does."""

    def __init__(self, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule


class NotFound(LookupError):
    """No such table (or other resource): NOT_FOUND."""


class Unauthenticated(PermissionError):
    """A missing, forged or expired token: UNAUTHENTICATED."""


class Forbidden(PermissionError):
    """A seat token that does not own the seat: PERMISSION_DENIED."""


class Conflict(RuntimeError):
    """An idempotency key already used for something else (a command id reused with another command,
    or by another seat): ALREADY_EXISTS. Nothing changed; the first use keeps its answer."""


class Exhausted(RuntimeError):
    """A quota spent (`servicekit.quotas`): RESOURCE_EXHAUSTED, with `retry_after_ms` in the trailing
    metadata `retry-after-ms` (when the next call would be taken). Nothing changed."""

    def __init__(self, message: str, retry_after_ms: int = RETRY_AFTER_MS) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class Stale(RuntimeError):
    """The request was made against a state that has moved on: ABORTED."""


class Unavailable(RuntimeError):
    """A dependency (Postgres, NATS) failed; the request changed nothing and may be retried: UNAVAILABLE,
    with `retry_after_ms` in the trailing metadata `retry-after-ms`."""

    def __init__(self, message: str, retry_after_ms: int = RETRY_AFTER_MS) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class Elsewhere(Unavailable):
    """What was asked for is served by another instance of the service (or, `address` empty, by none
    right now): UNAVAILABLE, with the trailing metadata `served-by: <address>` a client reconnects to
    and retries the same call at (`servicekit.routing`). Nothing changed here."""

    def __init__(self, message: str, address: str = "", retry_after_ms: int = 0) -> None:
        super().__init__(message, retry_after_ms if address else max(retry_after_ms, 250))
        self.address = address


class Corrupt(RuntimeError):
    """A record that breaks its own invariants (a seq gap, events that do not replay): DATA_LOSS.
    It is left untouched for an operator (`monopoly verify`), never patched over."""
