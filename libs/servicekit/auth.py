"""Signed, expiring tokens: who may act for which seat of which table.

A token is `base64url(claims JSON) "." base64url(HMAC-SHA256(claims))` with a
key every service shares (settings.token_secret), so any service verifies a
token without asking the one that issued it. Roles: "player" acts for its
seat, "spectator" only watches, "service" is another service of the platform
(it may send the results of sub-protocols, `engine.SYSTEM_COMMANDS`).

Services never verify a token in their handlers: the server interceptor
(`grpcserver.TokenVerification`, installed by `grpcserver.start_server`)
verifies the token field of every request that has one (`TOKEN_FIELDS`) before
the handler runs and keeps the claims for the call; the handler reads them
with `current_claims()` and checks what the call needs (`require_seat`,
`require_table`, `require_service`).
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any

from .errors import Forbidden, Unauthenticated

ROLES = ("player", "spectator", "service")
#: The key tokens are signed with when TOKEN_SECRET is not set: fine for a laptop, never for a host.
DEV_TOKEN_SECRET = "monopoly-dev-secret-change-me"
#: Seat tokens live this long unless issued otherwise: longer than any game.
DEFAULT_TTL_S = 24 * 3600
ANY_TABLE = "*"
#: Request fields that carry a token, by the name the protos give them. A request has at most one:
#: `seat_token` (a player's, a spectator's or a service's), `service_token` (the platform's services only,
#: e.g. JoinTable), and matchmaking's `player_token` / `host_token` (a player's own token).
TOKEN_FIELDS = ("seat_token", "service_token", "player_token", "host_token")

_claims: contextvars.ContextVar[Claims | None] = contextvars.ContextVar("servicekit_auth_claims", default=None)
_token_field_of: dict[str, str | None] = {}


@dataclass(frozen=True, slots=True)
class Claims:
    table_id: str
    seat: int  # -1 for spectators and services
    player: str
    role: str
    expires: int  # unix seconds

    def require_seat(self, table_id: str, seat: int) -> None:
        """Refuse unless this token acts for `seat` at `table_id`."""
        self.require_table(table_id)
        if self.role != "player":
            raise Forbidden(f"a {self.role} token cannot act for a seat")
        if self.seat != seat:
            raise Forbidden(f"this token acts for seat {self.seat}, not seat {seat}")

    def require_table(self, table_id: str) -> None:
        if self.table_id not in (table_id, ANY_TABLE):
            raise Forbidden("the token is for another table")

    def require_service(self) -> None:
        if self.role != "service":
            raise Forbidden("only the platform's services may send this")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: str, body: str) -> str:
    return _b64(hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest())


def issue(
    secret: str,
    table_id: str,
    seat: int,
    player: str,
    role: str = "player",
    ttl_s: int = DEFAULT_TTL_S,
    now: float | None = None,
) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}")
    expires = int((time.time() if now is None else now) + ttl_s)
    claims = {"t": table_id, "s": seat, "p": player, "r": role, "e": expires}
    body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{_sign(secret, body)}"


def service_token(secret: str, service: str, ttl_s: int = DEFAULT_TTL_S) -> str:
    """A token for service-to-service calls (any table, no seat)."""
    return issue(secret, ANY_TABLE, -1, service, role="service", ttl_s=ttl_s)


def verify(secret: str, token: str, now: float | None = None) -> Claims:
    """The token's claims; UNAUTHENTICATED if it is malformed, forged or expired."""
    if not token:
        raise Unauthenticated("a seat token is required")
    body, _, signature = token.partition(".")
    if not body or not signature or not hmac.compare_digest(_sign(secret, body), signature):
        raise Unauthenticated("the token is not valid (malformed or not signed by this platform)")
    try:
        raw = json.loads(_unb64(body))
        claims = Claims(str(raw["t"]), int(raw["s"]), str(raw["p"]), str(raw["r"]), int(raw["e"]))
    except (ValueError, KeyError, TypeError):
        raise Unauthenticated("the token is not valid (unreadable claims)") from None
    if claims.expires < (time.time() if now is None else now):
        raise Unauthenticated("the token has expired")
    return claims


def token_field(request: Any) -> str | None:
    """The name of the token field of a protobuf request (`TOKEN_FIELDS`), or None when it has none."""
    descriptor = type(request).DESCRIPTOR
    name = descriptor.full_name
    if name not in _token_field_of:
        fields = descriptor.fields_by_name
        _token_field_of[name] = next((f for f in TOKEN_FIELDS if f in fields), None)
    return _token_field_of[name]


def verify_request(secret: str, request: Any) -> Claims | None:
    """The claims of the request's token (None: the request has no token field).

    UNAUTHENTICATED when the field is empty or the token malformed, forged or expired.
    """
    field = token_field(request)
    if field is None:
        return None
    token = getattr(request, field)
    if not token:
        raise Unauthenticated(f"{field} is required: a signed token of this platform")
    return verify(secret, token)


def set_current_claims(claims: Claims | None) -> contextvars.Token[Claims | None]:
    """Keep the verified claims for the running call (the interceptor does this)."""
    return _claims.set(claims)


def reset_current_claims(token: contextvars.Token[Claims | None]) -> None:
    _claims.reset(token)


def current_claims() -> Claims:
    """The claims of the running call's token, verified by the interceptor.

    UNAUTHENTICATED when the call carried no verified token (its request has no token field,
    or the server runs without `grpcserver.TokenVerification`): never an unchecked pass.
    """
    claims = _claims.get()
    if claims is None:
        raise Unauthenticated("this call carries no verified token")
    return claims
