"""`monopoly run` and `monopoly demo`: the platform (embedded NATS and Postgres unless set) with bot tables."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from engine import PRESETS, RULESETS

from .options import QUEUED_MODES, Subcommands

RULESET_HELP = "online or hasbro: that rule set's standard game (classic or hasbro) unless --mode says"
MODE_HELP = "a mode matchmaking queues (hasbro: the printed game, auctions, building and trades any time)"
TLS_HELP = "mTLS on every gRPC port and on the embedded NATS, with a CA and a certificate made in DATA_DIR/tls"


def add(sub: Subcommands) -> None:
    run = sub.add_parser("run", help="start the platform (embedded NATS and Postgres unless set) with bot tables")
    run.set_defaults(handler=start)
    run.add_argument("--tables", type=int, default=3, help="bot tables playing at a time (default 3)")
    run.add_argument("--clock-scale", type=int, default=60, help="game seconds per real second (default 60)")
    run.add_argument("--data-dir", type=Path, default=Path(".platform"), help="where embedded servers keep data")
    run.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: Ctrl-C)")
    run.add_argument("--ruleset", choices=sorted(RULESETS), default=None, help=RULESET_HELP)
    run.add_argument("--mode", choices=sorted(QUEUED_MODES), default=None, help=MODE_HELP)
    run.add_argument("--tls", action="store_true", help=TLS_HELP)
    run.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="processes of each service but the gateway (default 1; more: a 3-node NATS cluster)",
    )

    demo = sub.add_parser("demo", help="play N bot tables through the platform to the end and verify their records")
    demo.set_defaults(handler=start)
    demo.add_argument("--tables", type=int, default=20, help="bot tables to play to the end (default 20)")
    demo.add_argument("--ruleset", choices=sorted(RULESETS), default=None, help=RULESET_HELP)
    demo.add_argument("--mode", choices=sorted(QUEUED_MODES), default=None, help=MODE_HELP)
    demo.add_argument("--clock-scale", type=int, default=60, help="game seconds per real second (default 60)")
    demo.add_argument(
        "--data-dir", type=Path, default=Path(".platform"), help="where embedded servers keep data (default .platform)"
    )
    demo.add_argument("--tls", action="store_true", help=TLS_HELP)


def start(args: argparse.Namespace) -> int:
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # before gRPC starts: no core chatter in the view
    from client.demo import demo, run  # the platform's dependencies load only for these commands

    if args.tables < 1 or args.clock_scale < 1 or getattr(args, "replicas", 1) < 1:
        print(f"monopoly {args.command}: --tables, --clock-scale and --replicas must be at least 1", file=sys.stderr)
        return 2
    mode = args.mode or RULESETS[args.ruleset or "online"]
    if args.ruleset is not None and PRESETS[mode]().ruleset != args.ruleset:
        print(f"monopoly {args.command}: {mode} is not a mode of the {args.ruleset} rule set", file=sys.stderr)
        return 2
    if args.tls:
        from servicekit import certs

        issued = certs.issue(args.data_dir / "tls", "platform")  # localhost and 127.0.0.1
        # this process's and the services' TLS_* settings (servicekit.settings.TLSSettings)
        os.environ.update({"TLS_CERT": str(issued.cert), "TLS_KEY": str(issued.key), "TLS_CA": str(issued.ca)})
    if args.command == "demo":
        return asyncio.run(demo(args.tables, args.data_dir, mode, args.clock_scale))
    return asyncio.run(run(args.data_dir, args.tables, args.clock_scale, args.duration, mode, args.replicas))
