"""What several commands share: the subcommand type, presets by rule set and mode, option parsers."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeAlias

import asyncpg

from engine import PRESETS, RULESETS
from servicekit import logs

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
    """Run `check(database_url)` with the DATABASE_URL the `service` reads, or say that it is missing
    (exit code 2); a database out of reach is one line (exit code 1), not a traceback. Only the database
    is needed: no token key (these commands read Postgres, they call no service)."""
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        print(f"monopoly {command}: set DATABASE_URL (the {service} service's database)", file=sys.stderr)
        return 2
    try:
        return asyncio.run(check(url))
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
        print(f"monopoly {command}: the database at {logs.Scrubber()(url)} is out of reach: {exc}", file=sys.stderr)
        return 1
