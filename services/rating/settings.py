"""The rating service's settings: the common ones (ports 50055 and 9105 by default) and R1's
thresholds (RATING_MIN_REAL_MINUTES, `ratings.Thresholds`)."""

from __future__ import annotations

from dataclasses import dataclass

from servicekit import settings as kit
from servicekit.settings import Env, Settings

from .ratings import Thresholds


def common(env: Env | None = None) -> Settings:
    """The settings every service has (`servicekit.settings.Settings`), with this service's default ports."""
    return Settings.from_env("rating", 50055, 9105, env)


@dataclass(frozen=True, slots=True)
class RatingSettings:
    base: Settings
    thresholds: Thresholds

    @staticmethod
    def from_env(env: Env | None = None) -> RatingSettings:
        e = kit.environ(env)
        return RatingSettings(base=common(e), thresholds=Thresholds.from_env(e))
