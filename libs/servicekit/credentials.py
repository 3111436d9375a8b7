"""A channel that carries a token on every call: `authorization: Bearer <token>` metadata.

Requests without a token field (GetTable, CreateTable, ListTrades, Leaderboard, ...) are
authorized by the call's metadata (`servicekit.access`); a channel made with `channel(target,
token)` adds it to every call that does not set its own, so a service (its service token), the
gateway and the platform's own clients (an operator token) need no change at each call site.

The token is added by the channel's multicallables, not by a client interceptor: grpc.aio runs an
intercepted stream through a task and a queue of its own (every `write` and `read` of a `Play`
stream passed through them), which cost the bots' process about a fifth of its CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import grpc

from . import auth
from . import tls as tlskit
from .settings import TLSSettings

Metadata: TypeAlias = grpc.aio.Metadata | Sequence[tuple[str, str | bytes]] | None


#: What a channel's calls carry: a token, or a function giving the token to send now (`auth.RenewedToken`).
TokenSource: TypeAlias = str | Callable[[], str]


class _Carried:
    """The `authorization` metadata of a token source, made again only when the token changes."""

    def __init__(self, token: TokenSource) -> None:
        self._source = token if callable(token) else (lambda: token)
        self._token = ""
        self._metadata: tuple[tuple[str, str], ...] = ()

    def __call__(self) -> tuple[tuple[str, str], ...]:
        token = self._source()
        if token != self._token:
            self._token = token
            self._metadata = tuple((str(k), str(v)) for k, v in auth.metadata(token))
        return self._metadata


def _with_token(metadata: Metadata, carried: _Carried) -> Metadata:
    """The call's metadata with the token added, unless the call carries one of its own."""
    if not metadata:
        return carried()
    if any(key == auth.METADATA_KEY for key, _ in metadata):
        return metadata
    return (*metadata, *carried())


class _Unary:
    """A unary-request multicallable (unary-unary, unary-stream) whose calls carry the token."""

    def __init__(self, inner: Any, carried: _Carried) -> None:
        self._inner = inner
        self._carried = carried

    def __call__(self, request: Any, *, metadata: Metadata = None, **kwargs: Any) -> Any:
        return self._inner(request, metadata=_with_token(metadata, self._carried), **kwargs)


class _Streaming:
    """A stream-request multicallable (stream-unary, stream-stream) whose calls carry the token."""

    def __init__(self, inner: Any, carried: _Carried) -> None:
        self._inner = inner
        self._carried = carried

    def __call__(
        self, request_iterator: Any = None, timeout: float | None = None, metadata: Metadata = None, **kwargs: Any
    ) -> Any:
        return self._inner(request_iterator, timeout, _with_token(metadata, self._carried), **kwargs)


class TokenChannel(grpc.aio.Channel):
    """A channel whose calls carry a token (`channel`); everything else is the wrapped channel's."""

    def __init__(self, inner: grpc.aio.Channel, token: TokenSource) -> None:
        self._inner = inner
        self._carried = _Carried(token)

    async def __aenter__(self) -> TokenChannel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._inner.close(None)

    async def close(self, grace: float | None = None) -> None:
        await self._inner.close(grace)

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        return self._inner.get_state(try_to_connect)

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        await self._inner.wait_for_state_change(last_observed_state)

    async def channel_ready(self) -> None:
        await self._inner.channel_ready()

    def _wrap(self, make: Callable[..., Any], kind: type[_Unary | _Streaming], *args: Any, **kwargs: Any) -> Any:
        return kind(make(*args, **kwargs), self._carried)

    def unary_unary(self, *args: Any, **kwargs: Any) -> Any:
        return self._wrap(self._inner.unary_unary, _Unary, *args, **kwargs)

    def unary_stream(self, *args: Any, **kwargs: Any) -> Any:
        return self._wrap(self._inner.unary_stream, _Unary, *args, **kwargs)

    def stream_unary(self, *args: Any, **kwargs: Any) -> Any:
        return self._wrap(self._inner.stream_unary, _Streaming, *args, **kwargs)

    def stream_stream(self, *args: Any, **kwargs: Any) -> Any:
        return self._wrap(self._inner.stream_stream, _Streaming, *args, **kwargs)


def channel(target: str, token: TokenSource | None = None, tls: TLSSettings | None = None) -> grpc.aio.Channel:
    """A channel to `target` (TLS as `tls` says; None: this process's TLS_* settings) whose calls
    carry `token` (when given: a token, or a function giving the one to send now) as their credential."""
    inner = tlskit.channel(target, tls)
    return TokenChannel(inner, token) if token else inner
