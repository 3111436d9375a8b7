"""A channel that carries a token on every call: `authorization: Bearer <token>` metadata.

Requests without a token field (GetTable, CreateTable, ListTrades, Leaderboard, ...) are
authorized by the call's metadata (`servicekit.access`); a channel made with `channel(target,
token)` adds it to every call that does not set its own, so a service (its service token), the
gateway and the platform's own clients (an operator token) need no change at each call site.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import grpc

from . import auth
from . import tls as tlskit
from .settings import TLSSettings


def _with_token(details: grpc.aio.ClientCallDetails, token: str) -> grpc.aio.ClientCallDetails:
    metadata = list(details.metadata or ())
    if not any(key == auth.METADATA_KEY for key, _ in metadata):
        metadata.extend(auth.metadata(token))
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, grpc.aio.Metadata(*metadata), details.credentials, details.wait_for_ready
    )


class _Bearer:
    def __init__(self, token: str) -> None:
        self.token = token


class _UnaryUnary(_Bearer, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(_with_token(client_call_details, self.token), request)


class _UnaryStream(_Bearer, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(
        self, continuation: Callable[..., Any], client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(_with_token(client_call_details, self.token), request)


class _StreamStream(_Bearer, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(
        self, continuation: Callable[..., Any], client_call_details: grpc.aio.ClientCallDetails, request_iterator: Any
    ) -> Any:
        return await continuation(_with_token(client_call_details, self.token), request_iterator)


def interceptors(token: str | None) -> Sequence[grpc.aio.ClientInterceptor]:
    """The client interceptors that add `token` to every call (none when `token` is None or "")."""
    if not token:
        return ()
    return (_UnaryUnary(token), _UnaryStream(token), _StreamStream(token))


def channel(target: str, token: str | None = None, tls: TLSSettings | None = None) -> grpc.aio.Channel:
    """A channel to `target` (TLS as `tls` says; None: this process's TLS_* settings) whose calls
    carry `token` (when given) as their credential."""
    return tlskit.channel(target, tls, interceptors(token))
