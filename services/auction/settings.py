"""The auction service's settings: the common ones, its ports defaulting to 50052 (gRPC) and 9102 (metrics)."""

from __future__ import annotations

from servicekit.settings import Env, Settings


def common(env: Env | None = None) -> Settings:
    """The settings every service has (`servicekit.settings.Settings`), with this service's default ports."""
    return Settings.from_env("auction", 50052, 9102, env)
