"""The `monopoly` command: `simulate` many bot games, or `play` one and watch it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from bots import BOTS, JAIL_POLICIES
from engine import PRESETS, RULESETS

from .narrate import play_and_narrate
from .runner import DEFAULT_ROUND_CAP, DEFAULT_THINK_MS, RunSpec, simulate


def _round_cap(text: str) -> int | None:
    value = int(text)
    return None if value <= 0 else value


#: Short names of the hasbro presets for `--ruleset hasbro --mode ...`.
MODE_NAMES = sorted({*PRESETS, "short-8", "short-6", "time"})


def preset_name(ruleset: str, mode: str | None) -> str:
    """The preset a `--ruleset` and `--mode` pair names: the rule set's standard game without a
    mode, else the mode (a hasbro short name gets its prefix: `short-8` is `hasbro-short-8`)."""
    standard = RULESETS[ruleset]
    if mode is None or mode == standard:
        return standard
    prefixed = f"{standard}-{mode}"
    return prefixed if mode not in PRESETS and prefixed in PRESETS else mode


#: The modes matchmaking queues players for (services/matchmaking/queues.py): `run` and `demo` seat
#: their players through the queue, so they play these.
QUEUED_MODES = ("classic", "speed", "duel", "team", "hasbro")
PLATFORM_RULESET_HELP = "online or hasbro: that rule set's standard game (classic or hasbro) unless --mode says"
PLATFORM_MODE_HELP = "a mode matchmaking queues (hasbro: the printed game, auctions, building and trades any time)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="monopoly", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="play many bot games and summarise them")
    sim.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    sim.add_argument("--players", type=int, default=4, help="players per game (default 4)")
    sim.add_argument("--seed", type=int, default=0, help="run seed: same seed, same games (default 0)")
    sim.add_argument("--bots", choices=sorted(BOTS), default="heuristic", help="bot kind (default heuristic)")
    sim.add_argument("--ruleset", choices=sorted(RULESETS), default="online", help="online or hasbro (default online)")
    sim.add_argument(
        "--mode",
        choices=MODE_NAMES,
        default=None,
        help="table preset (default: the rule set's standard game, classic or hasbro); "
        "hasbro's variants: short-8, short-6, time",
    )
    sim.add_argument(
        "--round-cap",
        type=_round_cap,
        default=DEFAULT_ROUND_CAP,
        help=f"end a game by net worth after this many rounds; 0 = no cap (default {DEFAULT_ROUND_CAP})",
    )
    sim.add_argument(
        "--think-seconds",
        type=float,
        default=DEFAULT_THINK_MS / 1000,
        help="virtual clock: game seconds a bot takes per decision; 0 = no clock "
        f"(default {DEFAULT_THINK_MS / 1000:g})",
    )
    sim.add_argument(
        "--leave-rate",
        type=float,
        default=0.0,
        help="chance per decision that a player walks away for good; its turns then time out (default 0)",
    )
    sim.add_argument("--workers", type=int, default=1, help="processes (default 1; 0 = one per core)")
    sim.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sim.add_argument("--no-hash", action="store_true", help="skip the events hash (measures the engine alone)")
    sim.add_argument(
        "--landing-stats",
        action="store_true",
        help="count where every dice roll leaves the token: shares of squares 0-39 and jail (`landing`)",
    )
    sim.add_argument(
        "--jail-policy",
        choices=JAIL_POLICIES,
        default=None,
        help="how bots leave jail: pay (at once) or wait (for doubles, to the third failure); "
        "default: their own judgement",
    )

    play = sub.add_parser("play", help="play one table of bots, printing each turn")
    play.add_argument("--players", type=int, default=4)
    play.add_argument("--seed", type=int, default=1)
    play.add_argument("--bots", choices=sorted(BOTS), default="heuristic")
    play.add_argument("--ruleset", choices=sorted(RULESETS), default="online")
    play.add_argument("--mode", choices=MODE_NAMES, default=None)
    play.add_argument("--round-cap", type=_round_cap, default=DEFAULT_ROUND_CAP)
    play.add_argument("--think-seconds", type=float, default=DEFAULT_THINK_MS / 1000)
    play.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each turn")
    run = sub.add_parser("run", help="start the platform (embedded NATS and Postgres unless set) with bot tables")
    run.add_argument("--tables", type=int, default=3, help="bot tables playing at a time (default 3)")
    run.add_argument("--clock-scale", type=int, default=60, help="game seconds per real second (default 60)")
    run.add_argument("--data-dir", type=Path, default=Path(".platform"), help="where embedded servers keep data")
    run.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: Ctrl-C)")
    run.add_argument("--ruleset", choices=sorted(RULESETS), default=None, help=PLATFORM_RULESET_HELP)
    run.add_argument("--mode", choices=sorted(QUEUED_MODES), default=None, help=PLATFORM_MODE_HELP)

    demo = sub.add_parser("demo", help="play N bot tables through the platform to the end and verify their records")
    demo.add_argument("--tables", type=int, default=20)
    demo.add_argument("--ruleset", choices=sorted(RULESETS), default=None, help=PLATFORM_RULESET_HELP)
    demo.add_argument("--mode", choices=sorted(QUEUED_MODES), default=None, help=PLATFORM_MODE_HELP)
    demo.add_argument("--clock-scale", type=int, default=60)
    demo.add_argument("--data-dir", type=Path, default=Path(".platform"))

    casino = sub.add_parser("casino", help="casino service tools: `casino verify BET_ID` (reads DATABASE_URL)")
    casino.add_argument("args", nargs=argparse.REMAINDER)

    verify = sub.add_parser(
        "verify", help="scan tables for seq gaps, replay mismatches and ledger imbalance (reads DATABASE_URL)"
    )
    verify.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "casino":
            return _casino(args.args)
        if args.command == "verify":
            return _verify(args.args)
        if args.command in ("run", "demo"):
            return _platform(args)
        if args.command == "play":
            think_ms = int(args.think_seconds * 1000)
            mode = preset_name(args.ruleset, args.mode)
            return play_and_narrate(mode, args.players, args.seed, args.bots, args.round_cap, args.delay, think_ms)
        return _simulate(args)
    except BrokenPipeError:  # `monopoly play | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _platform(args: argparse.Namespace) -> int:
    import asyncio

    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # before gRPC starts: no core chatter in the view
    from client.demo import demo, run  # the platform's dependencies load only for these commands

    if args.tables < 1 or args.clock_scale < 1:
        print(f"monopoly {args.command}: --tables and --clock-scale must be at least 1", file=sys.stderr)
        return 2
    mode = args.mode or RULESETS[args.ruleset or "online"]
    if args.ruleset is not None and PRESETS[mode]().ruleset != args.ruleset:
        print(f"monopoly {args.command}: {mode} is not a mode of the {args.ruleset} rule set", file=sys.stderr)
        return 2
    if args.command == "demo":
        return asyncio.run(demo(args.tables, args.data_dir, mode, args.clock_scale))
    return asyncio.run(run(args.data_dir, args.tables, args.clock_scale, args.duration, mode))


def _services_on_path() -> None:
    root = str(Path(__file__).resolve().parents[2])  # the services live beside libs/
    if root not in sys.path:
        sys.path.insert(0, root)


def _casino(args: list[str]) -> int:
    _services_on_path()
    from services.casino.verify import main as casino_main

    return int(casino_main(args))


def _verify(args: list[str]) -> int:
    _services_on_path()
    from services.table.verify import main as verify_main

    return int(verify_main(args))


def _simulate(args: argparse.Namespace) -> int:
    if args.games < 1:
        print("monopoly simulate: --games must be at least 1", file=sys.stderr)
        return 2
    workers = args.workers or os.cpu_count() or 1
    mode = preset_name(args.ruleset, args.mode)
    spec = RunSpec(
        games=args.games,
        players=args.players,
        seed=args.seed,
        bots=args.bots,
        mode=mode,
        round_cap=args.round_cap,
        hash_events=not args.no_hash,
        think_ms=int(args.think_seconds * 1000),
        leave_rate=args.leave_rate,
        landing_stats=args.landing_stats,
        jail_policy=args.jail_policy,
    )
    try:
        config = spec.config()
    except (TypeError, ValueError) as exc:
        print(f"monopoly simulate: {exc}", file=sys.stderr)
        return 2
    if config.ruleset != args.ruleset:
        print(f"monopoly simulate: {mode} is a preset of the {config.ruleset} rule set", file=sys.stderr)
        return 2
    if args.think_seconds < 0 or not 0 <= args.leave_rate <= 1:
        print("monopoly simulate: --think-seconds must be >= 0 and --leave-rate from 0 to 1", file=sys.stderr)
        return 2
    if not config.min_players <= args.players <= config.max_players:
        print(
            f"monopoly simulate: {mode} takes {config.min_players}-{config.max_players} players",
            file=sys.stderr,
        )
        return 2
    step = max(1, args.games // 20)
    interactive = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if done % step == 0 or done == total:
            end = "\r" if interactive and done != total else "\n"
            print(f"  {done}/{total} games", end=end, file=sys.stderr, flush=True)

    print(
        f"simulating {args.games} {mode} games of {args.players} {args.bots} bots "
        f"(seed {args.seed}, {workers} worker(s))",
        file=sys.stderr,
    )
    summary = simulate(spec, workers, progress).as_dict()
    if args.json:
        print(json.dumps(summary))
    else:
        _print_summary(summary)
    return 0


def _print_summary(s: dict[str, object]) -> None:
    rows = [
        ("games", s["games"]),
        ("finished (by the rules: last player, short game, time limit)", s["finished"]),
        ("capped (round cap, by net worth)", s["capped"]),
        ("end reasons", s["end_reasons"]),
        ("bankruptcies by cause", s["bankruptcies"]),
        ("turn time-outs", s["turn_timeouts"]),
        ("game minutes", s["game_minutes"]),
        ("rounds mean / median", f"{s['rounds_mean']} / {s['rounds_median']}"),
        ("player-turns per game mean / median", f"{s['turns_mean']} / {s['turns_median']}"),
        ("player-turns", s["player_turns"]),
        ("dice rolls", s["rolls"]),
        ("events", s["events"]),
        ("win share by seat", s["win_share_by_seat"]),
        ("events hash", s["events_hash"] or "(not computed)"),
        ("elapsed", f"{s['elapsed_s']} s"),
        ("games/s", s["games_per_s"]),
        ("player-turns/s", s["player_turns_per_s"]),
        ("dice rolls/s", s["rolls_per_s"]),
        ("events/s", s["events_per_s"]),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    landing = s.get("landing")
    if isinstance(landing, dict):
        print(f"\nlanding shares, % of {s['landing_rolls']:,} dice rolls (jail policy: {s['jail_policy'] or 'bots'})")
        for key, share in landing.items():
            label = "in jail" if key == "jail" else f"square {key}"
            print(f"  {label:<10} {share:7.3f}")


if __name__ == "__main__":
    sys.exit(main())
