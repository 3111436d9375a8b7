"""The trade service's settings: the common ones (ports 50053 and 9103 by default) and the table's address."""

from __future__ import annotations

from dataclasses import dataclass

from servicekit import settings as kit
from servicekit.settings import Env, Settings


def common(env: Env | None = None) -> Settings:
    """The settings every service has (`servicekit.settings.Settings`), with this service's default ports."""
    return Settings.from_env("trade", 50053, 9103, env)


@dataclass(frozen=True, slots=True)
class TradeSettings:
    base: Settings
    #: TABLE_TARGET: the table service, where accepted trades are executed.
    table_target: str

    @staticmethod
    def from_env(env: Env | None = None) -> TradeSettings:
        e = kit.environ(env)
        return TradeSettings(base=common(e), table_target=kit.table_target(e))
