"""What several commands share: the subcommand type, presets by rule set and mode, option parsers."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeAlias

from engine import PRESETS, RULESETS

#: What `add(subcommands)` of a command group receives.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

#: Short names of the hasbro presets for `--ruleset hasbro --mode ...`.
MODE_NAMES = sorted({*PRESETS, "short-8", "short-6", "time"})

#: The modes matchmaking queues players for (services/matchmaking/queues.py): `run` and `demo` seat
#: their players through the queue, so they play these.
QUEUED_MODES = ("classic", "speed", "duel", "team", "hasbro")


def round_cap(text: str) -> int | None:
    """`--round-cap N`: 0 or less is no cap."""
    value = int(text)
    return None if value <= 0 else value


def preset_name(ruleset: str, mode: str | None) -> str:
    """The preset a `--ruleset` and `--mode` pair names: the rule set's standard game without a
    mode, else the mode (a hasbro short name gets its prefix: `short-8` is `hasbro-short-8`)."""
    standard = RULESETS[ruleset]
    if mode is None or mode == standard:
        return standard
    prefixed = f"{standard}-{mode}"
    return prefixed if mode not in PRESETS and prefixed in PRESETS else mode


def against_database(command: str, service: str, check: Callable[[str], Coroutine[Any, Any, int]]) -> int:
    """Run `check(database_url)` with the DATABASE_URL `service` reads (its settings module), or say
    that it is missing (exit code 2). The service's modules load only for the command that needs them."""
    url: str = importlib.import_module(f"services.{service}.settings").common().database_url
    if not url:
        print(f"monopoly {command}: set DATABASE_URL (the {service} service's database)", file=sys.stderr)
        return 2
    return asyncio.run(check(url))
