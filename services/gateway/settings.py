"""The gateway's settings: the common ones (ports 50057 and 9107 by default: gRPC health and metrics),
its HTTP port for browsers, where the other services answer, and the per-connection rate limit."""

from __future__ import annotations

from dataclasses import dataclass

from servicekit import settings as kit
from servicekit.settings import Env, Settings

from . import api


def common(env: Env | None = None) -> Settings:
    """The settings every service has (`servicekit.settings.Settings`), with this service's default ports."""
    return Settings.from_env("gateway", 50057, 9107, env)


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    base: Settings
    #: GATEWAY_HTTP_PORT: the page and the WebSocket (/ws).
    http_port: int
    table_target: str
    matchmaking_target: str
    #: AUCTION_TARGET, TRADE_TARGET, CASINO_TARGET: empty when the platform runs no such service.
    auction_target: str
    trade_target: str
    casino_target: str
    #: GATEWAY_RATE_PER_S, GATEWAY_BURST: per connection, messages per second sustained and the burst on top.
    rate_per_s: float = api.RATE_PER_S
    burst: int = api.BURST
    #: GATEWAY_CONNECTIONS_PER_CLIENT: WebSocket connections one client address may hold open (0: no cap), and
    #: GATEWAY_CLIENT_RATE_PER_S, GATEWAY_CLIENT_BURST: messages per second of all its connections together.
    #: The address is the peer's, or the one a trusted proxy names (`trusted_proxies`).
    connections_per_client: int = api.CONNECTIONS_PER_CLIENT
    client_rate_per_s: float = api.CLIENT_RATE_PER_S
    client_burst: int = api.CLIENT_BURST
    #: GATEWAY_TRUSTED_PROXIES: addresses or CIDR ranges of the proxies in front (an ingress): a connection
    #: from one of them is the client's named in X-Forwarded-For (`api.client_address`). Empty: the peer's.
    trusted_proxies: tuple[api.IPNetwork, ...] = ()

    @staticmethod
    def from_env(env: Env | None = None) -> GatewaySettings:
        e = kit.environ(env)
        return GatewaySettings(
            base=common(e),
            http_port=int(e.get("GATEWAY_HTTP_PORT", "8080")),
            table_target=kit.table_target(e),
            matchmaking_target=e.get("MATCHMAKING_TARGET", "127.0.0.1:50056"),
            auction_target=e.get("AUCTION_TARGET", ""),
            trade_target=e.get("TRADE_TARGET", ""),
            casino_target=e.get("CASINO_TARGET", ""),
            rate_per_s=float(e.get("GATEWAY_RATE_PER_S", str(api.RATE_PER_S))),
            burst=int(e.get("GATEWAY_BURST", str(api.BURST))),
            connections_per_client=int(e.get("GATEWAY_CONNECTIONS_PER_CLIENT", str(api.CONNECTIONS_PER_CLIENT))),
            client_rate_per_s=float(e.get("GATEWAY_CLIENT_RATE_PER_S", str(api.CLIENT_RATE_PER_S))),
            client_burst=int(e.get("GATEWAY_CLIENT_BURST", str(api.CLIENT_BURST))),
            trusted_proxies=api.networks(e.get("GATEWAY_TRUSTED_PROXIES", "")),
        )
