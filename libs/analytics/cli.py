"""The analytics subcommands of `monopoly`: export, archive, report (`add_commands`, `run`)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export", help="load the table event stream (NATS_URL, or --archive) into DuckDB, resuming where it stopped"
    )
    export.add_argument(
        "--out", type=Path, default=Path("monopoly.duckdb"), help="DuckDB file (default monopoly.duckdb)"
    )
    export.add_argument("--archive", type=Path, default=None, help="read the Parquet archive in this folder instead")
    export.add_argument(
        "--nats-url", default=None, help="default: $NATS_URL (as the reader: nats://analytics:PASSWORD@host:4222)"
    )
    export.add_argument("--batch", type=int, default=2000, help="messages per transaction (default 2000)")
    export.add_argument("--follow", action="store_true", help="keep exporting new events until interrupted")
    export.add_argument("--no-progress", action="store_true", help="no progress bar")
    export.add_argument("--log-commits", action="store_true", help="print a line per committed batch")
    export.set_defaults(handler=run)

    archive = sub.add_parser("archive", help="write the table event stream to Parquet files by date (NATS_URL)")
    archive.add_argument("--out", type=Path, default=Path("archive"), help="archive folder (default ./archive)")
    archive.add_argument(
        "--nats-url", default=None, help="default: $NATS_URL (as the reader: nats://analytics:PASSWORD@host:4222)"
    )
    archive.add_argument("--follow", action="store_true", help="keep archiving until interrupted")
    archive.set_defaults(handler=run)

    report = sub.add_parser("report", help="plots and an HTML page from an exported DuckDB file")
    report.add_argument(
        "--db", type=Path, default=Path("monopoly.duckdb"), help="DuckDB file (default monopoly.duckdb)"
    )
    report.add_argument("--out", type=Path, default=Path("report"), help="output folder (default ./report)")
    report.set_defaults(handler=run)


def _nats_url(args: argparse.Namespace) -> str:
    url: str = args.nats_url or os.environ.get("NATS_URL", "")
    if not url:
        raise SystemExit("no NATS: set NATS_URL or pass --nats-url (or export from --archive)")
    return url


def run(args: argparse.Namespace) -> int:
    from servicekit.bus import NatsOutOfReach

    try:
        return _run(args)
    except NatsOutOfReach as exc:
        print(f"monopoly {args.command}: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if args.command == "export" and args.archive is not None and not args.archive.is_dir():
        print(f"monopoly export: no archive folder {args.archive}", file=sys.stderr)
        return 1
    if args.command == "report" and not args.db.is_file():
        print(f"monopoly report: no DuckDB file {args.db} (make one with `monopoly export`)", file=sys.stderr)
        return 1
    if args.command == "export":
        from .export import export

        def log(done: int, position: int) -> None:
            print(f"committed {done} messages, stream position {position}", flush=True)

        result = asyncio.run(
            export(
                args.out,
                nats_url="" if args.archive else _nats_url(args),
                archive=args.archive,
                batch=args.batch,
                follow=args.follow,
                progress=not args.no_progress and sys.stderr.isatty(),
                on_commit=log if args.log_commits else None,
            )
        )
        print(result.summary())
        return 0
    if args.command == "archive":
        from servicekit.natsauth import connect

        from .archive import archive_once, run_archiver
        from .export import CONNECT_WITHIN_S

        async def go() -> int:
            nc, js = await connect(_nats_url(args), give_up_after_s=CONNECT_WITHIN_S)
            try:
                if args.follow:
                    await run_archiver(js, args.out)
                    return 0
                return await archive_once(js, args.out)
            finally:
                await nc.close()

        print(f"archived {asyncio.run(go())} messages into {args.out}")
        return 0
    if args.command == "report":
        from .report import report

        print(report(args.db, args.out))
        return 0
    raise SystemExit(f"unknown command {args.command}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analytics", description=__doc__)
    add_commands(parser.add_subparsers(dest="command", required=True))
    return run(parser.parse_args(argv))
