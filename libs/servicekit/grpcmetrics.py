"""Every gRPC call a service answers, counted by method and status code, unary calls timed.

The names and labels follow the usual gRPC server metrics (`grpc_server_handled_total` with
`grpc_service`, `grpc_method`, `grpc_code`), so the error ratio of any service is one query:
    sum(rate(grpc_server_handled_total{grpc_code=~"INTERNAL|UNAVAILABLE|UNKNOWN|DEADLINE_EXCEEDED"}[5m]))
    / sum(rate(grpc_server_handled_total[5m]))
Outermost of the server's interceptors, so it sees the status the error mapping chose.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Histogram

HANDLED = Counter(
    "grpc_server_handled_total",
    "gRPC calls completed, by service, method and status code",
    ["grpc_service", "grpc_method", "grpc_code"],
)
HANDLING_SECONDS = Histogram(
    "grpc_server_handling_seconds",
    "Time to answer a unary gRPC call, by service and method",
    ["grpc_service", "grpc_method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
)


def _names(method: str) -> tuple[str, str]:
    """`/monopoly.v1.TableService/SubmitCommand` -> (`monopoly.v1.TableService`, `SubmitCommand`)."""
    service, _, name = method.lstrip("/").rpartition("/")
    return service, name


def _code(context: grpc.aio.ServicerContext, otherwise: str) -> str:
    """The status the call ended with: the one set on the context (an abort), else `otherwise`."""
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    if isinstance(code, int):
        return next((str(s.name) for s in grpc.StatusCode if s.value[0] == code), "UNKNOWN")
    return otherwise


class CallMetrics(grpc.aio.ServerInterceptor):
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        service, method = _names(str(details.method))
        if handler.unary_unary is not None:
            inner = handler.unary_unary
            timer = HANDLING_SECONDS.labels(service, method)

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                started, outcome = time.perf_counter(), "UNKNOWN"
                try:
                    reply = await inner(request, context)
                    outcome = "OK"
                    return reply
                except asyncio.CancelledError:
                    outcome = "CANCELLED"
                    raise
                finally:
                    timer.observe(time.perf_counter() - started)
                    HANDLED.labels(service, method, _code(context, outcome)).inc()

            return grpc.unary_unary_rpc_method_handler(unary, handler.request_deserializer, handler.response_serializer)

        def counted(
            stream: Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]],
        ) -> Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]:
            async def streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                outcome = "UNKNOWN"
                try:
                    async for item in stream(request, context):
                        yield item
                    outcome = "OK"
                except (asyncio.CancelledError, GeneratorExit):  # the client went away (a watcher left)
                    outcome = "CANCELLED"
                    raise
                finally:
                    HANDLED.labels(service, method, _code(context, outcome)).inc()

            return streaming

        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                counted(handler.unary_stream), handler.request_deserializer, handler.response_serializer
            )
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                counted(handler.stream_stream), handler.request_deserializer, handler.response_serializer
            )
        return handler
