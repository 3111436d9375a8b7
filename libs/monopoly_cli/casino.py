"""`monopoly casino verify BET_ID`: recompute a settled casino bet from its ledger (`services.casino.verify`).

Exit code 0 if everything matches the ledger, 1 if not (or no such settled bet), 2 on bad usage.
Reads DATABASE_URL (the casino's schema).
"""

from __future__ import annotations

import argparse

from .options import Subcommands, against_database


def add(sub: Subcommands) -> None:
    casino = sub.add_parser("casino", help="casino service tools: `casino verify BET_ID` (reads DATABASE_URL)")
    actions = casino.add_subparsers(dest="action", required=True)
    check = actions.add_parser("verify", help="recompute a settled bet from its ledger row")
    check.set_defaults(handler=verify)
    check.add_argument("bet_id")


def verify(args: argparse.Namespace) -> int:
    from services.casino.verify import verify as verify_bet

    return against_database("casino", "casino", lambda url: verify_bet(url, args.bet_id))
