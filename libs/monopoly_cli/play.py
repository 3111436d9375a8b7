"""`monopoly play`: one table of bots in the terminal, turn by turn, no servers."""

from __future__ import annotations

import argparse

from bots import BOTS
from engine import RULESETS
from sim.narrate import play_and_narrate
from sim.runner import DEFAULT_ROUND_CAP, DEFAULT_THINK_MS

from .options import MODE_NAMES, Subcommands, preset_name, round_cap


def add(sub: Subcommands) -> None:
    play = sub.add_parser("play", help="play one table of bots, printing each turn")
    play.set_defaults(handler=run)
    play.add_argument("--players", type=int, default=4)
    play.add_argument("--seed", type=int, default=1)
    play.add_argument("--bots", choices=sorted(BOTS), default="heuristic")
    play.add_argument("--ruleset", choices=sorted(RULESETS), default="online")
    play.add_argument("--mode", choices=MODE_NAMES, default=None)
    play.add_argument("--round-cap", type=round_cap, default=DEFAULT_ROUND_CAP)
    play.add_argument("--think-seconds", type=float, default=DEFAULT_THINK_MS / 1000)
    play.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each turn")


def run(args: argparse.Namespace) -> int:
    think_ms = int(args.think_seconds * 1000)
    mode = preset_name(args.ruleset, args.mode)
    return play_and_narrate(mode, args.players, args.seed, args.bots, args.round_cap, args.delay, think_ms)
