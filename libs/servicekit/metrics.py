"""Prometheus `/metrics` for every service."""

from __future__ import annotations

from prometheus_client import start_http_server


def serve_metrics(port: int, host: str = "127.0.0.1") -> None:
    """Start the `/metrics` HTTP endpoint (port 0: none)."""
    if port:
        start_http_server(port, addr=host)
