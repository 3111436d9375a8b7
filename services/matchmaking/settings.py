"""The matchmaking service's settings: the common ones (ports 50056 and 9106 by default) and its own:
MATCHMAKING_SMALL_TABLE_WAIT_S (30), MATCHMAKING_BAND_BASE (5), MATCHMAKING_BAND_PER_S (0.5),
MATCHMAKING_TICK_MS (200) (`queues.Rules`), EXTERNAL_SUBPROTOCOLS (a comma list of the sub-protocols
the platform runs in services; default none), TABLE_TARGET, RATING_TARGET (empty: no rating service,
everyone matches at openskill's start) and CLOCK_SCALE (the clock scale of the tables it creates)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config import SUB_PROTOCOLS
from servicekit import settings as kit
from servicekit.settings import Env, Settings

from .queues import Rules


def external_subprotocols(env: Env | None = None) -> tuple[str, ...]:
    raw = kit.environ(env).get("EXTERNAL_SUBPROTOCOLS", "")
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    unknown = sorted(set(names) - set(SUB_PROTOCOLS))
    if unknown:
        raise SystemExit(f"EXTERNAL_SUBPROTOCOLS: unknown {', '.join(unknown)}; one of {', '.join(SUB_PROTOCOLS)}")
    return names


def common(env: Env | None = None) -> Settings:
    """The settings every service has (`servicekit.settings.Settings`), with this service's default ports."""
    return Settings.from_env("matchmaking", 50056, 9106, env)


@dataclass(frozen=True, slots=True)
class MatchmakingSettings:
    base: Settings
    rules: Rules
    external_subprotocols: tuple[str, ...]
    table_target: str
    rating_target: str
    default_clock_scale: int

    @staticmethod
    def from_env(env: Env | None = None) -> MatchmakingSettings:
        e = kit.environ(env)
        return MatchmakingSettings(
            base=common(e),
            rules=Rules.from_env(e),
            external_subprotocols=external_subprotocols(e),
            table_target=kit.table_target(e),
            rating_target=e.get("RATING_TARGET", ""),
            default_clock_scale=kit.clock_scale(e),
        )
