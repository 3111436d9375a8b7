"""The settings every service reads from the environment, with defaults that work on a laptop.

Each service adds its own in `services/<name>/settings.py` (ports' defaults, its knobs); this module
and those are the only places that read the environment, so a service's settings are found in one
file and tests build them from a plain dict.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from .auth import DEV_TOKEN_SECRET

Env = Mapping[str, str]


def environ(env: Env | None = None) -> Env:
    """`env`, or the process's environment when None (the one place a settings module reads it)."""
    return os.environ if env is None else env


def token_secret(env: Env | None = None) -> str:
    """TOKEN_SECRET: the HMAC key of seat and service tokens, shared by every service (dev key if unset)."""
    return environ(env).get("TOKEN_SECRET", DEV_TOKEN_SECRET)


def secret_value(env: Env, name: str) -> str:
    """`name` from the environment, or the content of the file `<name>_FILE` names (a mounted secret,
    compose's generated passwords), without its trailing newline; empty when neither is set."""
    value = env.get(name, "")
    path = env.get(f"{name}_FILE", "")
    if not value and path:
        try:
            with open(path) as f:
                value = f.read().strip()
        except OSError as exc:
            raise SystemExit(f"{name}_FILE={path}: {exc.strerror}") from None
    return value


def table_target(env: Env | None = None) -> str:
    """TABLE_TARGET: where the table service answers (trade executes trades there, matchmaking opens tables)."""
    e = environ(env)
    return e.get("TABLE_TARGET", f"127.0.0.1:{e.get('TABLE_GRPC_PORT', '50051')}")


def clock_scale(env: Env | None = None) -> int:
    """CLOCK_SCALE: tables run their game clock this many times faster than real time unless created otherwise (E6)."""
    return int(environ(env).get("CLOCK_SCALE", "1"))


@dataclass(frozen=True, slots=True)
class Settings:
    """What `servicekit.runner.run_service` needs of any service: where NATS and Postgres are, the
    host and ports it serves on (`<NAME>_GRPC_PORT`, `<NAME>_METRICS_PORT`; metrics port 0: none)
    the token key, and who the service is on the bus: NATS_USER (its name by default) and
    NATS_PASSWORD (or NATS_PASSWORD_FILE; empty: no credentials, for an open server)."""

    service: str
    nats_url: str
    database_url: str
    host: str
    grpc_port: int
    metrics_port: int
    token_secret: str = DEV_TOKEN_SECRET
    nats_user: str = ""
    nats_password: str = ""

    @staticmethod
    def from_env(service: str, grpc_port: int, metrics_port: int, env: Env | None = None) -> Settings:
        """The settings of `service` whose ports default to `grpc_port` and `metrics_port`."""
        e = environ(env)
        prefix = service.upper()
        return Settings(
            service=service,
            nats_url=e.get("NATS_URL", ""),
            database_url=e.get("DATABASE_URL", ""),
            host=e.get("SERVICE_HOST", "127.0.0.1"),
            grpc_port=int(e.get(f"{prefix}_GRPC_PORT", str(grpc_port))),
            metrics_port=int(e.get(f"{prefix}_METRICS_PORT", str(metrics_port))),
            token_secret=token_secret(e),
            nats_user=e.get("NATS_USER", service),
            nats_password=secret_value(e, "NATS_PASSWORD"),
        )
