"""Engine throughput: whole games of heuristic bots in one process, one core.

What is measured: `monopoly simulate`'s game loop (bots choose, the engine
checks and applies every command and emits every event), for GAMES games per
run and RUNS runs per row. Rows: Classic without a clock (the engine alone,
with and without the events hash `monopoly simulate` computes by default),
then every mode on the virtual clock (a Tick before each decision, 3 s of
thinking per decision, so timers and the economy rules apply), and the hasbro
rule set's standard game. Each row gives
the median run, the best run and the spread. The machine is shared and noisy
(runs of the same code differ by up to 1.5x here): compare medians, or best
runs, never single runs. The peers (bench/peers.py) run interleaved with the
classic no-clock rows, one of their runs after each of ours, and the ratio to
them is the median of those pairs' ratios, measured in this run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import peers  # bench/peers.py: the other simulators, measured in the same run when installed

from bots import make_bot
from engine import apply, native, new_game, preset
from engine.rng import draw
from sim.runner import DEFAULT_ROUND_CAP, DEFAULT_THINK_MS, RunSpec, game_seed, simulate

#: (row label, mode, players, virtual clock ms per decision, events hash)
ROWS = (
    ("classic no-clock", "classic", 4, 0, False),
    ("classic no-clock", "classic", 4, 0, True),
    ("classic", "classic", 4, DEFAULT_THINK_MS, False),
    ("speed", "speed", 4, DEFAULT_THINK_MS, False),
    ("duel", "duel", 3, DEFAULT_THINK_MS, False),
    ("team", "team", 4, DEFAULT_THINK_MS, False),
    ("custom", "custom", 4, DEFAULT_THINK_MS, False),
    ("hasbro", "hasbro", 4, DEFAULT_THINK_MS, False),
)


def measure(mode: str, players: int, think_ms: int, games: int, seed: int, hash_events: bool) -> dict[str, float]:
    spec = RunSpec(
        games=games,
        players=players,
        seed=seed,
        bots="heuristic",
        mode=mode,
        hash_events=hash_events,
        think_ms=think_ms,
    )
    summary = simulate(spec).as_dict()
    keys = ("games_per_s", "player_turns_per_s", "rolls_per_s", "events_per_s")
    return {k: float(summary[k]) for k in keys}


def engine_share(games: int, seed: int) -> dict[str, float]:
    """Classic, no clock: the same games, timing the engine (apply) and the bots (choose) apart."""
    config = preset("classic", round_cap=DEFAULT_ROUND_CAP)
    engine_s = bots_s = 0.0
    turns = 0
    clock = time.perf_counter
    for index in range(games):
        seed_i = game_seed(seed, index)
        state, _ = new_game(config, [f"bot-{i}" for i in range(4)], seed_i)
        players = [make_bot("heuristic", draw(seed_i, 1000 + i)) for i in range(4)]
        while not state.finished:
            seat = state.actor
            t0 = clock()
            command = players[seat].choose(state, seat)
            t1 = clock()
            apply(state, command)
            t2 = clock()
            bots_s += t1 - t0
            engine_s += t2 - t1
        turns += state.turn_no
    return {"engine_turns_per_s": turns / engine_s, "bots_turns_per_s": turns / bots_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=int(os.environ.get("BENCH_GAMES", 200)))
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 5)))
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rows", default="all", help="comma-separated row labels, or all")
    args = parser.parse_args()
    if args.runs < 3:
        parser.error("--runs must be at least 3 (the table reports medians)")

    print(__doc__.strip())
    build = "compiled with mypyc (make compile)" if native.is_compiled() else "pure Python (no native build)"
    print(
        f"\n{args.games} games x {args.runs} runs per row, heuristic bots (4, Duel 3), seed {args.seed}, "
        f"python {sys.version.split()[0]}, engine and bots {build}\n",
        flush=True,
    )
    header = (
        f"{'mode':<18} {'hash':<5} {'games/s':>8} {'player-turns/s':>15} {'best':>8} "
        f"{'min-max':>15} {'rolls/s':>8} {'events/s':>9}"
    )
    print(header)
    print("-" * len(header))
    wanted = None if args.rows == "all" else set(args.rows.split(","))
    # The peers run interleaved with our classic no-clock rows, one peer run after each of ours, so
    # a change in the machine's load hits both sides of a ratio alike; the ratio is the median of
    # the runs' own ratios.
    peer_runs: dict[str, list[peers.PeerRun]] = {peer.name: [] for peer in peers.PEERS}
    ratios: dict[tuple[str, bool], list[float]] = {}
    for label, mode, players, think_ms, hashed in ROWS:
        if wanted is not None and label not in wanted:
            continue
        runs = []
        for i in range(args.runs):
            runs.append(measure(mode, players, think_ms, args.games, args.seed, hashed))
            if label == "classic no-clock":
                for peer in peers.PEERS:
                    run = peers.measure(peer, args.games, args.seed + i)
                    peer_runs[peer.name].append(run)
                    if run.player_turns_per_s is not None:
                        ours = runs[-1]["player_turns_per_s"]
                        ratios.setdefault((peer.name, hashed), []).append(ours / run.player_turns_per_s)
            if sys.stderr.isatty():
                print(f"  run {i + 1}/{args.runs}...", end="\r", file=sys.stderr, flush=True)
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        turns = [r["player_turns_per_s"] for r in runs]
        print(
            f"{label:<18} {'on' if hashed else 'off':<5} {med['games_per_s']:>8.1f} "
            f"{med['player_turns_per_s']:>15,.0f} {max(turns):>8,.0f} "
            f"{f'{min(turns):,.0f}-{max(turns):,.0f}':>15} {med['rolls_per_s']:>8,.0f} "
            f"{med['events_per_s']:>9,.0f}",
            flush=True,
        )
    shares = [engine_share(args.games, args.seed) for _ in range(args.runs)]
    engine = statistics.median(x["engine_turns_per_s"] for x in shares)
    bots = statistics.median(x["bots_turns_per_s"] for x in shares)
    print(
        f"\nclassic, no clock, engine and bots timed apart (median of {args.runs}): the engine alone "
        f"(check + apply + every event) {engine:,.0f} player-turns/s, the heuristic bots alone "
        f"{bots:,.0f} player-turns/s",
        flush=True,
    )
    print(
        f"\npeers (bench/peers.py), same games per run, each run right after one of our classic no-clock runs, "
        f"measured now ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}):"
    )
    for peer in peers.PEERS:
        measured = peer_runs[peer.name] or [peers.measure(peer, args.games, args.seed)]
        figures = [m.player_turns_per_s for m in measured if m.player_turns_per_s is not None]
        if len(figures) < len(measured):
            print(f"  {peers.describe(measured[-1])}", flush=True)
            continue
        theirs = statistics.median(figures)
        both = ", ".join(
            f"hash {'on' if h else 'off'} {statistics.median(ratios[peer.name, h]):.2f}x"
            for h in (True, False)
            if (peer.name, h) in ratios
        )
        print(
            f"  {peers.describe(peers.PeerRun(peer, theirs, measured[-1].note))}; "
            f"ours/theirs (median of the runs' ratios): {both or 'no classic no-clock row run'}",
            flush=True,
        )
    print(
        "\nplayer-turn: one player's turn (TurnStarted), re-rolls after doubles included in it.\n"
        "rolls: every dice roll (a turn with doubles has several).\n"
        "events: every engine event emitted. Medians except 'best' and 'min-max'.\n"
        "hash on: plus the events hash `monopoly simulate` computes by default (sim.runner.events_bytes)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
