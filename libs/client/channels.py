"""Channels of the platform's own clients (bots, `monopoly run` / `demo`, tools, tests).

Their calls carry an operator token minted from the platform's key (TOKEN_SECRET / TOKEN_SECRETS,
which the launcher sets from the data folder's key), so CreateTable, RegisterPlayer and the
reads of tables are theirs to make; a request's own token field (a seat token) still decides
for the calls that have one (`servicekit.access`).
"""

from __future__ import annotations

import grpc

from servicekit import auth, credentials
from servicekit.settings import MissingSecret, token_secret


def operator_token(name: str = "client") -> str | None:
    """An operator token from this process's key; None when it holds none (then calls go without)."""
    renewed = _renewed_operator_token(name)
    return renewed() if renewed is not None else None


def _renewed_operator_token(name: str) -> auth.RenewedToken | None:
    try:
        keys = token_secret()
    except MissingSecret:
        return None
    return auth.RenewedToken(lambda ttl: auth.operator_token(keys, name, ttl))


def platform_channel(target: str, token: str | None = None) -> grpc.aio.Channel:
    """A channel to a service of the platform whose calls carry `token` (default: an operator token,
    issued again before it expires: `monopoly run` and the bot seats run for days)."""
    return credentials.channel(target, token if token is not None else _renewed_operator_token("client"))
