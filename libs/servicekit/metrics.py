"""Prometheus `/metrics` for every service."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, start_http_server

COMMANDS = Counter("table_commands_total", "Commands by type and outcome", ["type", "outcome"])
COMMAND_SECONDS = Histogram(
    "table_command_seconds",
    "SubmitCommand latency, decided and committed",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)
EVENTS = Counter("table_events_total", "Events committed")
ACTIVE_TABLES = Gauge("table_active_tables", "Tables loaded and not finished")


def serve_metrics(port: int, host: str = "127.0.0.1") -> None:
    """Start the `/metrics` HTTP endpoint (port 0: none)."""
    if port:
        start_http_server(port, addr=host)
