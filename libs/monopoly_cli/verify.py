"""`monopoly verify [TABLE_ID...]`: scan tables for seq gaps, replay mismatches and ledger imbalance
(`services.table.verify`). Exit code 0 if none, 1 if any, 2 on bad usage. Reads DATABASE_URL."""

from __future__ import annotations

import argparse

from .options import Subcommands, against_database


def add(sub: Subcommands) -> None:
    verify = sub.add_parser(
        "verify", help="scan tables for seq gaps, replay mismatches and ledger imbalance (reads DATABASE_URL)"
    )
    verify.set_defaults(handler=run)
    verify.add_argument("table_ids", nargs="*", help="the tables to check (default: every table)")


def run(args: argparse.Namespace) -> int:
    from services.table.verify import verify

    return against_database("verify", "table", lambda url: verify(url, args.table_ids))
