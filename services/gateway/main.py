"""The gateway: wiring of settings, the gRPC channels to the platform, the HTTP server (the browser
client's static files and the WebSocket at /ws), gRPC health and metrics.

Run: `python -m services.gateway.main` with TABLE_TARGET and MATCHMAKING_TARGET set (AUCTION_TARGET,
TRADE_TARGET, CASINO_TARGET when the platform runs those services); the lobby is at
http://SERVICE_HOST:GATEWAY_HTTP_PORT/.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import orjson
from aiohttp import WSMsgType, web
from prometheus_client import Counter, Gauge

from servicekit import auth, grpcserver, lifecycle, logs, metrics

from . import api
from .handlers import Backends, Session
from .settings import GatewaySettings

log = logging.getLogger("gateway")
STATIC = Path(__file__).parent / "static"
SERVICE_NAME = "monopoly.v1.Gateway"

CONNECTIONS = Gauge("gateway_connections", "Open browser WebSocket connections")
REFUSED = Counter("gateway_connections_refused_total", "Connections refused: the client address held its maximum")
MESSAGES = Counter("gateway_messages_total", "Messages from browsers", ["outcome"])
PUSHES = Counter("gateway_pushes_total", "Messages pushed to browsers")


def _dumps(data: Any) -> str:
    return orjson.dumps(data).decode()


async def connection(request: web.Request) -> web.StreamResponse:
    """One browser: each message validated, answered in order of arrival; pushes interleave."""
    app = request.app
    gw: GatewaySettings = app["settings"]
    clients: api.ClientLimits = app["clients"]
    client = api.client_address(request.remote, request.headers.getall("X-Forwarded-For", []), gw.trusted_proxies)
    if not clients.open(client, gw.connections_per_client):
        REFUSED.inc()
        return web.Response(status=429, text=f"at most {gw.connections_per_client} connections per client address")
    try:
        return await _serve(request, client)
    finally:
        clients.close(client)


async def _serve(request: web.Request, client: str) -> web.WebSocketResponse:
    app = request.app
    ws = web.WebSocketResponse(max_msg_size=api.HARD_LIMIT_BYTES, heartbeat=30)
    await ws.prepare(request)
    CONNECTIONS.inc()
    send_lock = asyncio.Lock()

    async def push(message: dict[str, Any]) -> None:
        if ws.closed:
            return
        async with send_lock:
            await ws.send_str(_dumps(message))
        PUSHES.inc()

    registrations: api.ClientLimits = app["registrations"]
    clients: api.ClientLimits = app["clients"]
    session = Session(app["backends"], app["secret"], push, lambda: registrations.take(client))
    gw: GatewaySettings = app["settings"]
    limit = api.RateLimit(gw.rate_per_s, gw.burst)
    strikes = 0
    pending: set[asyncio.Task[None]] = set()

    async def answer(msg_id: Any, request_: Any) -> None:
        try:
            result = await session.handle(request_)
            await push({"id": msg_id, "ok": True, "result": result})
            MESSAGES.labels("ok").inc()
        except api.GatewayError as exc:
            await push({"id": msg_id, "ok": False, "error": exc.as_data()})
            MESSAGES.labels("refused").inc()
        except Exception:  # a bug here must not end the browser's other requests
            log.exception("request %s failed", getattr(request_, "op", "?"))
            await push({"id": msg_id, "ok": False, "error": {"code": "INTERNAL", "message": "gateway error"}})
            MESSAGES.labels("error").inc()

    try:
        async for msg in ws:
            if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                break
            data = msg.data
            if not limit.take() or not clients.take(client):
                strikes += 1
                MESSAGES.labels("rate_limited").inc()
                await push(
                    {
                        "id": api.request_id(data),
                        "ok": False,
                        "error": {"code": "RESOURCE_EXHAUSTED", "message": "too many messages: slow down"},
                    }
                )
            else:
                try:
                    request_ = api.parse(data)
                except api.GatewayError as exc:
                    strikes += 1
                    MESSAGES.labels("invalid").inc()
                    await push({"id": api.request_id(data), "ok": False, "error": exc.as_data()})
                else:
                    strikes = 0
                    task = asyncio.ensure_future(answer(request_.id, request_))
                    pending.add(task)
                    task.add_done_callback(pending.discard)
            if strikes >= api.MAX_STRIKES:
                await ws.close(code=1008, message=b"too many refused messages")
                break
    finally:
        CONNECTIONS.dec()
        for task in pending:
            task.cancel()
        await session.close()
    return ws


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html")


async def healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def make_app(backends: Backends, secret: auth.Secret, settings: GatewaySettings) -> web.Application:
    app = web.Application()
    app["backends"] = backends
    app["secret"] = secret
    app["settings"] = settings
    app["registrations"] = api.ClientLimits()
    app["clients"] = api.ClientLimits(settings.client_rate_per_s, settings.client_burst)
    app.router.add_get("/", index)
    app.router.add_get("/ws", connection)
    app.router.add_get("/healthz", healthz)
    app.router.add_static("/static/", STATIC)
    return app


async def serve(gw: GatewaySettings, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    """The gateway's process. Not `servicekit.runner.run_service`: that assembles a service around its
    Postgres pool and JetStream, and the gateway has neither (it is stateless); the order is the same."""
    settings = gw.base
    logs.configure("gateway", list(settings.token_secret.secrets))  # as every service: LOG_FORMAT, tokens scrubbed
    backends = Backends.connect(
        gw.table_target,
        gw.matchmaking_target,
        gw.auction_target,
        gw.trade_target,
        gw.casino_target,
        settings.tls,
        token=auth.renewed_service_token(settings.token_secret, "gateway"),  # RegisterPlayer, ListTables, reads
    )
    runner = web.AppRunner(make_app(backends, settings.token_secret, gw), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, gw.http_port)
    await site.start()
    # gRPC health only: the platform's supervisor and probes check every service the same way.
    server, port, health_servicer = await grpcserver.start_server(
        settings.host, settings.grpc_port, [], [SERVICE_NAME], token_secret=settings.token_secret, tls=settings.tls
    )
    probes = (
        await grpcserver.start_health_server(settings.host, settings.health_port, health_servicer)
        if settings.health_port
        else None
    )
    if settings.metrics_port:
        metrics.serve_metrics(settings.metrics_port, settings.host)
    url = f"http://{settings.host}:{gw.http_port}/"
    log.info("gateway: lobby at %s, health on %s:%s", url, settings.host, port)
    print(f"gateway service ready on {settings.host}:{port}; lobby at {url}", flush=True)
    if ready is not None:
        ready.set()
    await lifecycle.until_stopped(stop)
    await server.stop(grace=1)
    if probes is not None:
        await probes.stop(0)
    await runner.cleanup()
    await backends.close()


def main() -> None:
    lifecycle.run(lambda: serve(GatewaySettings.from_env()))


if __name__ == "__main__":
    main()
