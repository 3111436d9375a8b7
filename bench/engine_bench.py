"""Engine throughput: whole games of 4 heuristic bots in one process, one core.

What is measured: `monopoly simulate`'s game loop (bots choose, the engine
checks and applies every command and emits every event) without the events
hash, for GAMES games per run, RUNS runs; the table gives the median run
and the spread. The machine is shared and noisy: compare medians, not single
runs. Figures are for one process on one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from sim.runner import RunSpec, simulate

REFERENCE_TURNS_PER_S = 33_000  # the fastest published Python simulator on this machine, without events


def measure(mode: str, games: int, seed: int, hash_events: bool) -> dict[str, float]:
    spec = RunSpec(games=games, players=4, seed=seed, bots="heuristic", mode=mode, hash_events=hash_events)
    summary = simulate(spec).as_dict()
    return {k: float(summary[k]) for k in ("games_per_s", "player_turns_per_s", "events_per_s", "elapsed_s")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=int(os.environ.get("BENCH_GAMES", 300)))
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 5)))
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--modes", default="classic")
    args = parser.parse_args()
    if args.runs < 3:
        parser.error("--runs must be at least 3 (the table reports medians)")

    print(__doc__.strip().splitlines()[0])
    print(
        f"{args.games} games x {args.runs} runs per row, 4 heuristic bots, seed {args.seed}, "
        f"python {sys.version.split()[0]}\n",
        flush=True,
    )
    header = (
        f"{'mode':<10} {'events hash':<11} {'games/s':>9} {'player-turns/s':>15} {'events/s':>11} "
        f"{'spread (min-max turns/s)':>26} {'vs 33k ref':>10}"
    )
    print(header)
    print("-" * len(header))
    for mode in args.modes.split(","):
        for hashed in (False, True):
            runs = []
            for i in range(args.runs):
                runs.append(measure(mode, args.games, args.seed, hashed))
                if sys.stderr.isatty():
                    print(f"  run {i + 1}/{args.runs}...", end="\r", file=sys.stderr, flush=True)
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            lo = min(r["player_turns_per_s"] for r in runs)
            hi = max(r["player_turns_per_s"] for r in runs)
            print(
                f"{mode:<10} {'on' if hashed else 'off':<11} {med['games_per_s']:>9.1f} "
                f"{med['player_turns_per_s']:>15,.0f} {med['events_per_s']:>11,.0f} "
                f"{f'{lo:,.0f} - {hi:,.0f}':>26} {med['player_turns_per_s'] / REFERENCE_TURNS_PER_S:>9.2f}x",
                flush=True,
            )
    print(
        "\nplayer-turn = one TurnStarted (a player's turn, re-rolls after doubles included); "
        "events = every engine event emitted."
    )
    print("'events hash on' adds what `monopoly simulate` does by default: a blake2b over every event's JSON.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
