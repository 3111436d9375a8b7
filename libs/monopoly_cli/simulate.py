"""`monopoly simulate`: many bot games, a summary (or one JSON object) on stdout."""

from __future__ import annotations

import argparse
import json
import os
import sys

from bots import BOTS, JAIL_POLICIES
from engine import PRESETS, RULESETS
from sim.runner import DEFAULT_ROUND_CAP, DEFAULT_THINK_MS, RunSpec, simulate

from .options import MODE_NAMES, Subcommands, preset_name, round_cap


def add(sub: Subcommands) -> None:
    sim = sub.add_parser("simulate", help="play many bot games and summarise them")
    sim.set_defaults(handler=run)
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
        type=round_cap,
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


def run(args: argparse.Namespace) -> int:
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
        hint = ""
        other = [r for r in RULESETS if r != args.ruleset and preset_name(r, args.mode) in PRESETS]
        if other:  # `--mode short-8` without `--ruleset hasbro`
            hint = f" (with --ruleset {other[0]}: {preset_name(other[0], args.mode)})"
        print(f"monopoly simulate: {exc}{hint}", file=sys.stderr)
        return 2
    if config.ruleset != args.ruleset:
        print(
            f"monopoly simulate: {mode} is a preset of the {config.ruleset} rule set: add --ruleset {config.ruleset}",
            file=sys.stderr,
        )
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
        print_summary(summary)
    return 0


def print_summary(s: dict[str, object]) -> None:
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
