"""`monopoly load`: bot tables at a chosen pace against a running platform, every table accounted for.

Addresses come from flags, else the environment (TABLE_TARGET, MATCHMAKING_TARGET, AUCTION_TARGET,
TRADE_TARGET, CASINO_TARGET: the names the services use), else the `targets.json` a running
`monopoly run` keeps in its data dir (`--data-dir`, default .platform).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .options import QUEUED_MODES, Subcommands

SERVICES = ("table", "matchmaking", "auction", "trade", "casino")


def add(sub: Subcommands) -> None:
    load = sub.add_parser(
        "load",
        help="bot tables at a pace against a running platform: latency, errors, tables that never started",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    load.set_defaults(handler=start)
    load.add_argument("--tables", type=int, default=100, help="tables to run (default 100)")
    load.add_argument("--think", type=float, default=3.0, help="real seconds a bot thinks per decision (default 3)")
    load.add_argument("--ramp", type=float, default=50.0, help="tables opened per second (default 50)")
    load.add_argument(
        "--opening",
        type=int,
        default=64,
        help="tables each process has opening at once, created or queued and not yet watched (default 64)",
    )
    load.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: the end)")
    load.add_argument(
        "--via", choices=("matchmaking", "create"), default="matchmaking", help="queue players, or CreateTable"
    )
    load.add_argument(
        "--singles",
        action="store_true",
        help="queue each player alone, mixed by matchmaking with whoever waits (default: each table's "
        "players queue as parties and sit together, so every Classic, Speed and Hasbro table forms)",
    )
    load.add_argument("--mode", choices=sorted(QUEUED_MODES), default="classic")
    load.add_argument("--processes", type=int, default=1, help="load-generator processes (default 1)")
    load.add_argument("--clock-scale", type=int, default=1, help="CreateTable's clock scale (--via create)")
    load.add_argument(
        "--stall", type=float, default=60.0, help="seconds a playing table may go without a move (default 60)"
    )
    load.add_argument("--seed", type=int, default=1)
    load.add_argument(
        "--keep-tables",
        action="store_true",
        help="at --duration, leave the tables still playing as they are (default: their bots leave the game, R3)",
    )
    load.add_argument("--json", type=Path, default=None, help="write the report here as JSON")
    load.add_argument("--data-dir", type=Path, default=Path(".platform"), help="a `monopoly run` data dir")
    for name in SERVICES:
        load.add_argument(f"--{name}", default=None, metavar="HOST:PORT", help=f"the {name} service's gRPC address")


def targets_from(args: argparse.Namespace) -> dict[str, Any]:
    """Flags over the environment over the running platform's targets.json."""
    found: dict[str, Any] = {}
    path = args.data_dir / "targets.json"
    if path.exists():
        found.update(json.loads(path.read_text()))
    for name in SERVICES:
        found[name] = getattr(args, name) or os.environ.get(f"{name.upper()}_TARGET") or found.get(name, "")
    return found


def too_slow_for_the_clock(args: argparse.Namespace, found: dict[str, object]) -> str:
    """Why bots thinking `--think` s could never play at the clock scale of the running platform's
    matchmaking tables (from its targets.json): every turn would time out (E2). Empty if they can,
    or if the scale is not known (a platform not started by `monopoly run`)."""
    scale = found.get("clock_scale")
    if not isinstance(scale, int) or scale < 1 or args.think <= 0:
        return ""
    from engine import preset

    turn_s = preset(args.mode).clock.turn_seconds / scale
    if turn_s > args.think:
        return ""
    return (
        f"the platform's tables run at clock scale {scale}: a {args.mode} turn lasts {turn_s:.2f} real s, "
        f"no longer than --think {args.think:g}, so every turn would time out (E2). Start the platform at a "
        f"person's pace (`make run CLOCK_SCALE=1`, `monopoly run --clock-scale 1`), think less "
        f"(--think {turn_s / 4:.2f}), or use --via create (its own --clock-scale)"
    )


def start(args: argparse.Namespace) -> int:
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from rich.console import Console

    from client.load import LoadSpec, Targets, print_report, run_load

    found = targets_from(args)
    key = args.data_dir / "token_secret"  # the key of a `monopoly run` on that data dir (README: Secrets)
    if not (os.environ.get("TOKEN_SECRET") or os.environ.get("TOKEN_SECRETS")) and key.exists():
        os.environ["TOKEN_SECRET"] = key.read_text().strip()
    if not found["table"]:
        print(
            "monopoly load: no platform to load: pass --table (and --matchmaking...), set TABLE_TARGET, "
            f"or start `monopoly run` (it writes {args.data_dir / 'targets.json'})",
            file=sys.stderr,
        )
        return 2
    if args.via == "matchmaking" and not found["matchmaking"]:
        print("monopoly load: --via matchmaking needs the matchmaking service's address", file=sys.stderr)
        return 2
    if args.tables < 1 or args.processes < 1 or args.opening < 1 or args.ramp <= 0 or args.think < 0:
        print(
            "monopoly load: --tables, --processes, --opening and --ramp must be positive, --think 0 or more",
            file=sys.stderr,
        )
        return 2
    if (args.duration is not None and args.duration <= 0) or args.stall <= 0:
        print("monopoly load: --duration and --stall must be positive (seconds)", file=sys.stderr)
        return 2
    if args.json is not None and not (args.json.parent.is_dir() and os.access(args.json.parent, os.W_OK)):
        print(f"monopoly load: cannot write the report to {args.json}: no such writable folder", file=sys.stderr)
        return 2
    from servicekit.settings import MissingSecret, token_secret

    try:
        token_secret()  # the bots' tokens are signed with it: refused now, not by every generator later
    except MissingSecret as exc:
        print(
            f"monopoly load: {exc} (the key of the platform under load; `monopoly run` keeps it in "
            f"{args.data_dir / 'token_secret'})",
            file=sys.stderr,
        )
        return 2
    if args.via == "matchmaking" and (problem := too_slow_for_the_clock(args, found)):
        print(f"monopoly load: {problem}", file=sys.stderr)
        return 2
    spec = LoadSpec(
        targets=Targets(**{name: found[name] for name in SERVICES}),
        tables=args.tables,
        think_s=args.think,
        ramp=args.ramp,
        opening=args.opening,
        duration_s=args.duration,
        via=args.via,
        parties=not args.singles,
        mode=args.mode,
        players=3 if args.mode == "duel" else 4,
        processes=args.processes,
        clock_scale=args.clock_scale,
        stall_s=args.stall,
        seed=args.seed,
        leave=not args.keep_tables,
    )
    console = Console(stderr=True)
    report = run_load(spec, console)
    print_report(report, console)
    if args.json is not None:
        args.json.write_text(report.to_json() + "\n")
        console.print(f"report: {args.json}")
    return 0 if report.ok else 1
