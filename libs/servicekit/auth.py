"""Signed, expiring tokens: who may act for which seat of which table.

A token is `base64url(claims JSON) "." base64url(HMAC-SHA256(claims))` with a
key every service shares (settings.token_secret), so any service verifies a
token without asking the one that issued it. Roles: "player" acts for its
seat, "spectator" only watches, "service" is another service of the platform
(it may send the results of sub-protocols, `engine.SYSTEM_COMMANDS`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

from .errors import Forbidden, Unauthenticated

ROLES = ("player", "spectator", "service")
#: The key tokens are signed with when TOKEN_SECRET is not set: fine for a laptop, never for a host.
DEV_TOKEN_SECRET = "monopoly-dev-secret-change-me"
#: Seat tokens live this long unless issued otherwise: longer than any game.
DEFAULT_TTL_S = 24 * 3600
ANY_TABLE = "*"


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
