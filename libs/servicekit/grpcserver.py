"""A gRPC aio server with health checking, reflection, deadlines and one error mapping.

Every service raises plain exceptions; `ErrorMapping` turns them into statuses:
`RuleViolation` -> FAILED_PRECONDITION (the rule ID in the message and in the
trailing metadata `rule-id`), `BadRequest` -> INVALID_ARGUMENT, `NotFound` ->
NOT_FOUND, `Unauthenticated` -> UNAUTHENTICATED,
`Forbidden` -> PERMISSION_DENIED, `Stale` -> ABORTED, `Conflict` -> ALREADY_EXISTS,
`Unavailable` -> UNAVAILABLE, `Corrupt` -> DATA_LOSS, a handler running past its deadline ->
DEADLINE_EXCEEDED. Postgres or NATS out of reach (`errors.unreachable`: a refused or lost
connection) is UNAVAILABLE too, never INTERNAL; every UNAVAILABLE carries the trailing metadata
`retry-after-ms`, and `Elsewhere` (another instance serves it) `served-by: <address>`. Anything
else is INTERNAL and logged.

`TokenVerification` verifies the token of every call (a request's token field,
`auth.TOKEN_FIELDS`, or else the `authorization: Bearer <token>` metadata) and
checks it against the method's line of `access.POLICY` before the handler runs,
then keeps the claims for `auth.current_claims()`; a method the policy does not
list is refused. `start_server` installs both, the error mapping outermost, so a
refused token becomes UNAUTHENTICATED and a refused principal PERMISSION_DENIED.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import Counter

from engine import RuleViolation

from . import access, auth, quotas, settings, validate
from . import tls as tlskit
from .errors import (
    RETRY_AFTER_MS,
    BadRequest,
    Conflict,
    Corrupt,
    Elsewhere,
    Exhausted,
    Forbidden,
    NotFound,
    Stale,
    Unauthenticated,
    Unavailable,
    unreachable,
)
from .grpcmetrics import CallMetrics

log = logging.getLogger(__name__)

#: The trailing metadata naming the instance that serves what a call asked for (`errors.Elsewhere`).
SERVED_BY = "served-by"

TOKENS_REFUSED = Counter(
    "grpc_tokens_refused_total",
    "Calls refused by the token interceptor (malformed, forged, expired, missing)",
    ["method"],
)

CALLS_DENIED = Counter(
    "grpc_calls_denied_total",
    "Calls refused by the access policy (servicekit.access: a principal the method does not allow, another table)",
    ["method"],
)

QUOTA_REFUSED = Counter(
    "grpc_quota_refused_total", "Calls refused as RESOURCE_EXHAUSTED (servicekit.quotas: a rate or a stream cap spent)"
)

#: The quotas of this process's server (`start_server`); None: no quotas (a server built by hand in a test).
QUOTAS: quotas.Quotas | None = None

#: Adds a servicer to a server (each service's `api.register` returns a list of them).
Registration = Callable[[grpc.aio.Server], None]

#: A unary call may take this long at most, whatever deadline the client set.
DEFAULT_DEADLINE_S = 10.0

_STATUS: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (RuleViolation, grpc.StatusCode.FAILED_PRECONDITION),
    (BadRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (Forbidden, grpc.StatusCode.PERMISSION_DENIED),
    (Stale, grpc.StatusCode.ABORTED),
    (Conflict, grpc.StatusCode.ALREADY_EXISTS),
    (Exhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
    (Corrupt, grpc.StatusCode.DATA_LOSS),
)


def status_of(exc: BaseException) -> grpc.StatusCode | None:
    """The status a service's exception maps to; None: not one of ours (an internal error)."""
    for kind, code in _STATUS:
        if isinstance(exc, kind):
            return code
    if unreachable(exc):
        return grpc.StatusCode.UNAVAILABLE
    return None


#: The health name a liveness probe asks: only a process that no longer answers fails it. An outage of
#: Postgres or NATS is a normal event a service rides out (NOT_SERVING for readiness), not a restart.
LIVENESS = "liveness"


def retry_after_ms(exc: BaseException) -> int:
    """The wait a client is told before retrying an UNAVAILABLE or RESOURCE_EXHAUSTED call."""
    return exc.retry_after_ms if isinstance(exc, (Unavailable, Exhausted)) else RETRY_AFTER_MS


#: The longest status message sent, in UTF-8 bytes: an error that quotes an oversized input must not push
#: the status past gRPC's metadata limits (8 KiB soft, 16 KiB hard; the message travels percent-encoded,
#: up to 3 bytes for each byte outside ASCII), which turns it into RESOURCE_EXHAUSTED and loses the real one.
MAX_DETAILS = 1000


def details_of(exc: BaseException) -> str:
    text = str(exc)
    raw = text.encode()
    if len(raw) <= MAX_DETAILS:
        return text
    kept = MAX_DETAILS - 40  # the note below fits in the rest: the whole message is at most MAX_DETAILS
    return f"{raw[:kept].decode(errors='ignore')}... ({len(raw) - kept} more bytes)"


async def _abort(context: grpc.aio.ServicerContext, exc: BaseException) -> None:
    code = status_of(exc)
    if code is not None:
        if isinstance(exc, (RuleViolation, BadRequest)) and exc.rule:
            context.set_trailing_metadata((("rule-id", exc.rule),))
        elif code is grpc.StatusCode.RESOURCE_EXHAUSTED:
            QUOTA_REFUSED.inc()
            context.set_trailing_metadata((("retry-after-ms", str(retry_after_ms(exc))),))
        elif code is grpc.StatusCode.UNAVAILABLE:
            trailing = [("retry-after-ms", str(retry_after_ms(exc)))]
            if isinstance(exc, Elsewhere):  # empty: nobody runs it right now, retry here shortly
                trailing.append((SERVED_BY, exc.address))
            context.set_trailing_metadata(tuple(trailing))
            if not isinstance(exc, Unavailable):
                log.warning("a backing server is out of reach: %s: %s", type(exc).__name__, exc)
                await context.abort(code, f"a backing server is out of reach ({type(exc).__name__}); retry later")
        await context.abort(code, details_of(exc))
    log.exception("internal error", exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")


def _timeout(context: grpc.aio.ServicerContext) -> float:
    remaining = context.time_remaining()
    return DEFAULT_DEADLINE_S if remaining is None else min(remaining, DEFAULT_DEADLINE_S)


class ErrorMapping(grpc.aio.ServerInterceptor):
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                try:
                    _check(request)
                    return await asyncio.wait_for(inner(request, context), _timeout(context))
                except grpc.aio.AbortError:
                    raise
                except TimeoutError:
                    await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "the call ran out of time")
                except Exception as exc:
                    await _abort(context, exc)

            return grpc.unary_unary_rpc_method_handler(
                unary, _lenient(handler.request_deserializer), handler.response_serializer
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _mapped_stream(handler.unary_stream, False),
                _lenient(handler.request_deserializer),
                handler.response_serializer,
            )
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                _mapped_stream(handler.stream_stream, True),
                _lenient(handler.request_deserializer),
                handler.response_serializer,
            )
        return handler


class RefusedRequest:
    """A request refused as it was decoded (`_lenient`), with the reason its handler's wrapper raises
    (a deserializer's own exception would reach the client as UNKNOWN, or INTERNAL on a stream), and
    the request itself when it decoded (a NUL in a string). A stream of requests whose handler answers
    each in the stream (`refusals_in_stream`) gets these among its requests, to answer like any refusal."""

    def __init__(self, error: BadRequest, request: Any = None) -> None:
        self.error = error
        self.request = request


_F = TypeVar("_F", bound=Callable[..., Any])


def refusals_in_stream(handler: _F) -> _F:
    """Mark a request-streaming handler that answers a refused request in its stream (it is given a
    `RefusedRequest`): one malformed request does not end the stream and what was sent behind it."""
    handler._refusals_in_stream = True  # type: ignore[attr-defined]
    return handler


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            request = deserializer(data)
        except Exception as exc:
            return RefusedRequest(BadRequest(f"the request's bytes do not decode ({type(exc).__name__})"))
        # A NUL in any string field puts a zero byte in the encoding: only then are the fields walked
        # (a zero byte is rare otherwise: proto3 does not encode zeros), not for every request.
        if b"\x00" in data and isinstance(request, Message):
            try:
                validate.no_nul(request)
            except BadRequest as exc:
                return RefusedRequest(exc, request)
        return request

    return deserialize


def _check(request: Any) -> None:
    """Refuse at the edge what no handler should see: undecodable bytes, NUL in a string field
    (both found by `_lenient` as the request was decoded)."""
    if isinstance(request, RefusedRequest):
        raise request.error


async def _checked(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        _check(request)
        yield request


async def _responses(
    handler: Callable[..., Any], request: Any, context: grpc.aio.ServicerContext
) -> AsyncIterator[Any]:
    """A response-streaming handler's responses: an async generator's items, or none from a handler
    that writes them itself with `context.write` and returns (grpc-health's `Watch`), which an
    `async for` over it would fail with TypeError."""
    result = handler(request, context)
    if inspect.isawaitable(result):
        await result
        return
    async for item in result:
        yield item


def _mapped_stream(
    handler: Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]], streamed: bool
) -> Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]:
    """A response-streaming handler (its argument a request or, `streamed`, a stream of them) whose
    errors end the stream with their status."""

    async def mapped(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        try:
            if streamed:
                if not getattr(handler, "_refusals_in_stream", False):
                    request = _checked(request)
            else:
                _check(request)
            async for item in handler(request, context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await _abort(context, exc)

    return mapped


#: The largest request a server takes (RESOURCE_EXHAUSTED past it): the platform's requests are a few
#: hundred bytes; gRPC's own limit (4 MB) let one seat's quota of commands keep a core busy decoding.
MAX_REQUEST_BYTES = 64 * 1024

#: Tokens a stream of requests keeps verified (`authorize`'s `verified`): a table's seats and a service.
VERIFIED_PER_STREAM = 16


def authorize(
    secret: auth.Secret,
    method: str,
    request: Any,
    metadata: Any = None,
    verified: dict[str, auth.Claims] | None = None,
) -> auth.Claims | None:
    """The verified claims of the call's token (None: no token, and the method needs none), checked
    against the method's line of `access.POLICY`; UNAUTHENTICATED (no token, a malformed, forged or
    expired one) or PERMISSION_DENIED (a principal the line does not name, another table, a method
    the policy does not list) otherwise. The token is the request's token field when it has one,
    else the call's `authorization: Bearer <token>` metadata.

    `verified`: the claims of the tokens a stream's earlier requests carried (`TableService.Play`), so
    each token's signature is checked once per stream, not per request; its expiry and the policy
    still are for every request. Only tokens that passed are kept, at most VERIFIED_PER_STREAM."""
    source, token = auth.request_token(request, metadata)
    try:
        if not token:
            if access.needs_token(method):
                rule = access.rule_of(method)
                who = ", ".join(rule.who) if rule else ""
                where = source if source != auth.METADATA_KEY else "the authorization metadata (Bearer <token>)"
                raise Unauthenticated(f"{where} is required: a signed token of this platform ({who}) for {method}")
            claims = None
        else:
            claims = verified.get(token) if verified is not None else None
            if claims is None or claims.expires < time.time():  # an expired one: verify says so
                claims = auth.verify(secret, token)
                if verified is not None:
                    if len(verified) >= VERIFIED_PER_STREAM:
                        verified.clear()
                    verified[token] = claims
    except Unauthenticated:
        TOKENS_REFUSED.labels(method).inc()
        raise
    try:
        access.check(method, claims, request)
    except (Unauthenticated, Forbidden):
        CALLS_DENIED.labels(method).inc()
        raise
    return claims


async def charge(method: str, claims: auth.Claims | None, connection: str) -> str | None:
    """Take one call of the method's quota (`access.Rule.quota`) for its caller and its connection;
    RESOURCE_EXHAUSTED when spent, answered after the quotas' refusal delay (`servicekit.quotas`).
    The key of the caller's open streams, or None when not counted."""
    if QUOTAS is None:
        return None
    rule = access.rule_of(method)
    quota = rule.quota if rule is not None else None
    key = access.quota_key(claims, connection)
    try:
        QUOTAS.charge(quota if key is not None else None, key or "", connection)
    except Exhausted:
        if QUOTAS.settings.refusal_delay_ms > 0:
            await asyncio.sleep(QUOTAS.settings.refusal_delay_ms / 1000)
        raise
    return key if quota == quotas.STREAM else None


async def admit(
    secret: auth.Secret,
    method: str,
    request: Any,
    metadata: Any,
    connection: str,
    verified: dict[str, auth.Claims] | None = None,
) -> tuple[auth.Claims | None, str | None]:
    """`authorize`, then `charge`: the call's claims and its stream key. A call its token gets refused
    still spends a call of its connection (as one without a token), so a flood of bad tokens meets
    the quotas like any other flood: RESOURCE_EXHAUSTED once spent, answered after the refusal delay."""
    try:
        claims = authorize(secret, method, request, metadata, verified)
    except (Unauthenticated, Forbidden):
        await charge(method, None, connection)
        raise
    return claims, await charge(method, claims, connection)


class TokenVerification(grpc.aio.ServerInterceptor):
    """Verify the call's token and check it against `access.POLICY` (`authorize`), then keep its
    claims for the call (`auth.current_claims()`).

    Runs inside `ErrorMapping` (after it in the server's interceptor list): an `Unauthenticated` or
    `Forbidden` raised here reaches the client as UNAUTHENTICATED or PERMISSION_DENIED.
    """

    def __init__(self, secret: auth.Secret) -> None:
        if not secret:
            raise ValueError("the token secret is required")
        self.secret = auth.Keyring.of(secret)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        method = str(details.method)
        metadata = tuple(details.invocation_metadata or ())
        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                claims, _ = await admit(self.secret, method, request, metadata, context.peer())
                token = auth.set_current_claims(claims)
                try:
                    return await inner(request, context)
                finally:
                    auth.reset_current_claims(token)

            return grpc.unary_unary_rpc_method_handler(unary, handler.request_deserializer, handler.response_serializer)
        if handler.unary_stream is not None:
            stream = handler.unary_stream

            async def streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                # Set in the call's own task: the handler's generator runs in it, no other call sees it.
                claims, key = await admit(self.secret, method, request, metadata, context.peer())
                auth.set_current_claims(claims)
                if key is None or QUOTAS is None:
                    async for item in _responses(stream, request, context):
                        yield item
                    return
                with QUOTAS.streams.hold(key, method.rsplit("/", 1)[-1]):
                    async for item in _responses(stream, request, context):
                        yield item

            return grpc.unary_stream_rpc_method_handler(
                streaming, handler.request_deserializer, handler.response_serializer
            )
        if handler.stream_stream is not None and access.rule_of(method) is None:

            async def denied(requests: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                CALLS_DENIED.labels(method).inc()
                access.check(method, None, None)  # not in the policy: PERMISSION_DENIED
                nothing: tuple[Any, ...] = ()
                for item in nothing:
                    yield item

            return grpc.stream_stream_rpc_method_handler(
                denied, handler.request_deserializer, handler.response_serializer
            )
        # Streams of requests (TableService.Play) authorize each request in the handler (`authorize`):
        # one stream carries many requests. Client-streaming calls: the platform has none.
        return handler


async def start_server(
    host: str,
    port: int,
    register: Iterable[Registration],
    service_names: Iterable[str],
    token_secret: auth.Secret | None = None,
    tls: settings.TLSSettings | None = None,
    quota_settings: quotas.QuotaSettings | None = None,
) -> tuple[grpc.aio.Server, int, health.aio.HealthServicer]:
    """Start a server on host:port (0: any free port) and return it with the bound port.

    `token_secret` verifies the tokens of requests (`TokenVerification`); None reads
    TOKEN_SECRET / TOKEN_SECRETS from the environment (`settings.token_secret`: no default).
    With `tls` carrying a certificate the port serves TLS only (mTLS when it requires client
    certificates: `servicekit.tls`).
    """
    secret = token_secret if token_secret is not None else settings.token_secret()
    global QUOTAS
    QUOTAS = quotas.Quotas(quota_settings)
    server = grpc.aio.server(
        # each wraps the next: calls counted by the status the error mapping chose
        interceptors=[CallMetrics(), ErrorMapping(), TokenVerification(secret)],
        options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", MAX_REQUEST_BYTES)],
        maximum_concurrent_rpcs=QUOTAS.settings.calls,
    )
    for add in register:
        add(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = list(service_names)
    for name in names:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    # The liveness probe's name: SERVING while the process answers, whatever Postgres or NATS do (the
    # readiness of "" and the service names follows them: `servicekit.health`)
    await health_servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection([*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
    credentials = tlskit.server_credentials(tls) if tls is not None else None
    address = f"{host}:{port}"
    bound = server.add_secure_port(address, credentials) if credentials else server.add_insecure_port(address)
    await server.start()
    return server, bound, health_servicer


async def start_health_server(host: str, port: int, servicer: health.aio.HealthServicer) -> grpc.aio.Server:
    """A plaintext server of gRPC health checking only, beside a TLS one: Kubernetes' gRPC probes
    speak no TLS (`HEALTH_PORT`). It answers SERVING or NOT_SERVING and nothing else."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    server.add_insecure_port(f"{host}:{port}")
    await server.start()
    return server
