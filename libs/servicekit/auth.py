"""Signed, expiring tokens: who may act for which seat of which table.

A token is `base64url(claims JSON) "." base64url(HMAC-SHA256(claims))` with a
key every service shares (`settings.token_secret`: a `Keyring`), so any service
verifies a token without asking the one that issued it. The claims name the key
(`"k"`, its key id): during a rotation the services accept the old key and the
new one, and sign with the first (TOKEN_SECRETS="new:...,old:..."). Roles:
"player" acts for its seat, "spectator" only watches one table, "account" is a
registered player (RegisterPlayer: queues and lobbies; a lobby's host), "service"
is another service of the platform (it may send the results of sub-protocols,
`engine.SYSTEM_COMMANDS`), "operator" is whoever runs the platform (tables
created by hand, `monopoly run` and `demo`).

There is no default key: the platform's launcher makes a random one per data
folder (`data_dir_secret`), a service started without one refuses to start
(`settings.token_secret`), and only MONOPOLY_DEV=1 uses a per-machine dev key.

Services never verify a token in their handlers: the server interceptor
(`grpcserver.TokenVerification`, installed by `grpcserver.start_server`)
verifies the request's token (its token field, `TOKEN_FIELDS`, or else the
`authorization: Bearer <token>` metadata) and checks it against the method's
line of `access.POLICY` before the handler runs, then keeps the claims for the
call; the handler reads them with `current_claims()` and checks what only it
knows (`require_seat`, the lobby's host).
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import Forbidden, Unauthenticated

ROLES = ("player", "spectator", "account", "service", "operator")
#: Roles whose tokens hold for every table ("*"); a player's or spectator's token holds for its own table only.
PLATFORM_ROLES = ("service", "operator")
#: A key shorter than this is refused: a secret must not be guessable.
MIN_SECRET_LENGTH = 16
#: A key with fewer different characters is a pattern (aaaa..., 1212...), not a random one: 16 random
#: hex digits (the shortest key allowed) have fewer about once in 2.4 million keys, 32 (`openssl rand
#: -hex 16`) about once in 10^16.
MIN_SECRET_DISTINCT = 5
#: SHA-256 digests of keys that were public (the former built-in default): refused wherever they are set.
PUBLIC_SECRET_DIGESTS = frozenset({"86d41470dc9620036dc6c0dd3714607e9370404037d6b2aba883318eb1b0f79e"})
#: The file of a data folder that keeps its key (`data_dir_secret`), readable by its owner only.
SECRET_FILE = "token_secret"
#: The gRPC metadata key of a call's token when its request has no token field: "Bearer <token>".
METADATA_KEY = "authorization"
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
        """Refuse unless this token holds for `table_id` (its own table; every table: a service or operator)."""
        if not self.holds_for(table_id):
            raise Forbidden("the token is for another table")

    def holds_for(self, table_id: str) -> bool:
        if self.table_id == table_id:
            return self.role in ("player", "spectator", *PLATFORM_ROLES)
        return self.table_id == ANY_TABLE and self.role in PLATFORM_ROLES

    def require_service(self) -> None:
        if self.role != "service":
            raise Forbidden("only the platform's services may send this")


class WeakSecret(ValueError):
    """A key that is too short or was public: tokens signed with it could be forged by anyone."""


def check_secret(secret: str) -> str:
    """`secret`, unless it is too short, a pattern rather than random, or a key that was public
    (`WeakSecret`)."""
    if len(secret) < MIN_SECRET_LENGTH:
        raise WeakSecret(f"a token key must have at least {MIN_SECRET_LENGTH} characters (e.g. `openssl rand -hex 32`)")
    if len(set(secret)) < MIN_SECRET_DISTINCT or _repeats(secret):
        raise WeakSecret("a token key must be random, not a word repeated or a pattern (e.g. `openssl rand -hex 32`)")
    if hashlib.sha256(secret.encode()).hexdigest() in PUBLIC_SECRET_DIGESTS:
        raise WeakSecret("this token key was public (the former built-in default): anyone could forge tokens with it")
    return secret


def _repeats(secret: str) -> bool:
    """Whether `secret` is a shorter string said over and over ("changeme" * 3)."""
    return (secret + secret).find(secret, 1) < len(secret)


def key_id(secret: str) -> str:
    """The id of a key given without one (TOKEN_SECRET): a digest's first 8 hex digits, which reveal nothing."""
    return hashlib.sha256(b"monopoly-key-id:" + secret.encode()).hexdigest()[:8]


@dataclass(frozen=True, slots=True)
class Keyring:
    """The keys tokens are verified with, by key id; the first signs (rotation: the new key first,
    the old one second until every token signed with it has expired)."""

    keys: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise WeakSecret("at least one token key is required")
        ids = [kid for kid, _ in self.keys]
        if len(set(ids)) != len(ids) or not all(ids):
            raise WeakSecret("each token key needs an id of its own")
        if not all(secret for _, secret in self.keys):
            raise WeakSecret("a token key is empty")

    def checked(self) -> Keyring:
        """This keyring, unless one of its keys is too short or was public (`check_secret`): what a
        service is started with passes this (`settings.token_secret`)."""
        for _, secret in self.keys:
            check_secret(secret)
        return self

    @staticmethod
    def of(secret: str | Keyring) -> Keyring:
        """A keyring as it is: a single key (TOKEN_SECRET) gets its derived id (`key_id`)."""
        return secret if isinstance(secret, Keyring) else Keyring(((key_id(secret), secret),))

    @staticmethod
    def parse(text: str) -> Keyring:
        """TOKEN_SECRETS: `kid:secret` entries separated by commas, the signing key first."""
        keys: list[tuple[str, str]] = []
        for entry in filter(None, (e.strip() for e in text.split(","))):
            kid, sep, secret = entry.partition(":")
            if not sep:
                raise WeakSecret("TOKEN_SECRETS entries are `kid:secret` (the signing key first)")
            keys.append((kid.strip(), secret.strip()))
        return Keyring(tuple(keys))

    @property
    def signing(self) -> tuple[str, str]:
        return self.keys[0]

    def secret_of(self, kid: str) -> str | None:
        return next((secret for k, secret in self.keys if k == kid), None)

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every key's text (the logs scrub them)."""
        return tuple(secret for _, secret in self.keys)

    def __repr__(self) -> str:  # never a key in a log line or a traceback
        return f"Keyring(ids={[kid for kid, _ in self.keys]})"


#: What the functions below take: a keyring or one key.
Secret = str | Keyring


def data_dir_secret(data_dir: Path) -> str:
    """The key of a data folder: read from `<data_dir>/token_secret`, made at random (mode 0600)
    the first time, so a platform restarted on the same folder accepts the tokens it gave out."""
    path = data_dir / SECRET_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        return check_secret(path.read_text().strip())
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    return check_secret(path.read_text().strip())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: str, body: str) -> str:
    return _b64(hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest())


def issue(
    secret: Secret,
    table_id: str,
    seat: int,
    player: str,
    role: str = "player",
    ttl_s: int = DEFAULT_TTL_S,
    now: float | None = None,
) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}")
    kid, key = Keyring.of(secret).signing
    expires = int((time.time() if now is None else now) + ttl_s)
    claims = {"t": table_id, "s": seat, "p": player, "r": role, "e": expires, "k": kid}
    body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{_sign(key, body)}"


def service_token(secret: Secret, service: str, ttl_s: int = DEFAULT_TTL_S) -> str:
    """A token for service-to-service calls (any table, no seat)."""
    return issue(secret, ANY_TABLE, -1, service, role="service", ttl_s=ttl_s)


class RenewedToken:
    """A long-running process's own token, issued again once half its life is gone: a service, the
    gateway or a bot seat keeps calling for days, and a token made once at start would be refused
    UNAUTHENTICATED a day later. Call it for the token to send now."""

    def __init__(self, make: Callable[[int], str], ttl_s: int = DEFAULT_TTL_S, clock: Callable[[], float] = time.time):
        self._make = make
        self._ttl_s = ttl_s
        self._clock = clock
        self._token = ""
        self._renew_at = 0.0

    def __call__(self) -> str:
        now = self._clock()
        if now >= self._renew_at:
            self._token = self._make(self._ttl_s)
            self._renew_at = now + self._ttl_s / 2
        return self._token


def renewed_service_token(secret: Secret, service: str, ttl_s: int = DEFAULT_TTL_S) -> RenewedToken:
    """`service_token`, issued again before it expires (`RenewedToken`)."""
    return RenewedToken(lambda ttl: service_token(secret, service, ttl), ttl_s)


def operator_token(secret: Secret, operator: str = "operator", ttl_s: int = DEFAULT_TTL_S) -> str:
    """A token of whoever runs the platform (any table, no seat): CreateTable, RegisterPlayer, reads."""
    return issue(secret, ANY_TABLE, -1, operator, role="operator", ttl_s=ttl_s)


def verify(secret: Secret, token: str, now: float | None = None) -> Claims:
    """The token's claims; UNAUTHENTICATED if it is malformed, forged, signed with a key this
    platform does not hold (any more), or expired."""
    if not token:
        raise Unauthenticated("a seat token is required")
    if not token.isascii():  # a token is base64url; compare_digest raises TypeError on other text
        raise Unauthenticated("the token is not valid (malformed or not signed by this platform)")
    body, _, signature = token.partition(".")
    try:  # a body nested thousands deep makes the parser recurse out of its depth, not just fail
        raw = json.loads(_unb64(body)) if body and signature else None
    except (ValueError, RecursionError):
        raw = None
    if not isinstance(raw, dict):
        raise Unauthenticated("the token is not valid (malformed or not signed by this platform)")
    key = Keyring.of(secret).secret_of(str(raw.get("k", "")))
    if key is None:
        raise Unauthenticated("the token is not valid (signed with a key this platform does not hold)")
    if not hmac.compare_digest(_sign(key, body), signature):
        raise Unauthenticated("the token is not valid (malformed or not signed by this platform)")
    try:
        claims = Claims(str(raw["t"]), int(raw["s"]), str(raw["p"]), str(raw["r"]), int(raw["e"]))
    except (ValueError, KeyError, TypeError):
        raise Unauthenticated("the token is not valid (unreadable claims)") from None
    if claims.role not in ROLES:
        raise Unauthenticated("the token is not valid (unknown role)")
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


def bearer(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token of a call's `authorization: Bearer <token>` metadata ("" when it has none)."""
    for key, value in metadata or ():
        if key == METADATA_KEY:
            text = value.decode() if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


def metadata(token: str) -> Sequence[tuple[str, str]]:
    """The call metadata that carries `token` (for requests without a token field)."""
    return ((METADATA_KEY, f"Bearer {token}"),)


def request_token(request: Any, call_metadata: Iterable[tuple[str, str | bytes]] | None = None) -> tuple[str, str]:
    """(where the token came from, the token): the request's token field when it has one (that field
    only), else the call's `authorization` metadata. The token is "" when there is none."""
    field = token_field(request)
    if field is not None:
        return field, getattr(request, field)
    return METADATA_KEY, bearer(call_metadata)


def verify_request(secret: Secret, request: Any) -> Claims | None:
    """The claims of the request's token field (None: the request has no token field).

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
