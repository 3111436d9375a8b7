"""The `monopoly` command: `simulate` many bot games, `play` one and watch it, `run` or `demo` the platform,
`casino verify` a bet, `verify` the tables' records, bring the bus's `streams` to their spec, `export` /
`archive` / `report` the event stream.

Each command group is a module of this package with `add(subcommands)`: it adds its parser(s) and sets
`handler` (Namespace -> exit code) on them. Adding a command is a new module and one line in `COMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import analytics, casino, load, platform, play, simulate, streams, verify
from .options import Subcommands

#: The command groups, in the order `monopoly --help` lists them.
COMMANDS = (simulate, play, platform, load, casino, verify, streams, analytics)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="monopoly", description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub: Subcommands = parser.add_subparsers(dest="command", required=True)
    for group in COMMANDS:
        group.add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # `monopoly play | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
