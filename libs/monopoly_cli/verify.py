"""`monopoly verify [TABLE_ID...]`: scan tables for seq gaps, replay mismatches and ledger imbalance
(`services.table.verify`). Exit code 0 if none, 1 if any, 2 on bad usage. Reads DATABASE_URL."""

from __future__ import annotations

import argparse
import asyncio
import sys

from .options import Subcommands


def add(sub: Subcommands) -> None:
    verify = sub.add_parser(
        "verify", help="scan tables for seq gaps, replay mismatches and ledger imbalance (reads DATABASE_URL)"
    )
    verify.set_defaults(handler=run)
    verify.add_argument("table_ids", nargs="*", help="the tables to check (default: every table)")


def run(args: argparse.Namespace) -> int:
    from services.table import settings  # the service's modules load only for this command
    from services.table.verify import verify

    database_url = settings.common().database_url
    if not database_url:
        print("monopoly verify: set DATABASE_URL (the table service's database)", file=sys.stderr)
        return 2
    return asyncio.run(verify(database_url, args.table_ids))
