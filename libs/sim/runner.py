"""Play games of bots through the engine and summarise them.

A game's seed and its bots' seeds derive from (run seed, game index), so a
run gives the same games whatever the number of workers, and the events
hash over all games is the same byte for byte.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import orjson

from bots import make_bot
from engine import Event, Roll, TableConfig, TableState, apply, new_game, preset
from engine.rng import draw

#: Round cap used until the clock and economy rules end games on their own.
DEFAULT_ROUND_CAP = 300


@dataclass(frozen=True, slots=True)
class GameResult:
    index: int
    seed: int
    finished: bool  # ended by the rules (last player standing)
    reason: str
    winner: int
    rounds: int
    player_turns: int
    rolls: int  # dice rolls (re-rolls after doubles and jail rolls count)
    commands: int
    events: int
    events_hash: str


@dataclass(frozen=True, slots=True)
class RunSpec:
    games: int
    players: int = 4
    seed: int = 0
    bots: str = "heuristic"
    mode: str = "classic"
    round_cap: int | None = DEFAULT_ROUND_CAP
    hash_events: bool = True

    def config(self) -> TableConfig:
        return preset(self.mode, round_cap=self.round_cap)


def game_seed(run_seed: int, index: int) -> int:
    return draw(run_seed & ((1 << 64) - 1), index)


def event_bytes(event: Event) -> bytes:
    """A canonical encoding of one event for hashing."""
    return type(event).__name__.encode() + orjson.dumps(event)


def play_game(
    config: TableConfig,
    players: int,
    seed: int,
    bots: str,
    on_events: Callable[[TableState, list[Event]], None] | None = None,
    hash_events: bool = True,
    max_commands: int = 200_000,
) -> tuple[TableState, GameResult]:
    """Play one game to its end; `on_events` sees every command's events."""
    state, events = new_game(config, [f"{bots}-{i}" for i in range(players)], seed)
    seat_bots = [make_bot(bots, draw(seed, 1000 + i)) for i in range(players)]
    digest = hashlib.blake2b(digest_size=16)
    n_events = len(events)
    if hash_events:
        for e in events:
            digest.update(event_bytes(e))
    if on_events:
        on_events(state, events)
    commands = rolls = 0
    while not state.finished:
        seat = state.actor
        command = seat_bots[seat].choose(state, seat)
        new = apply(state, command)
        commands += 1
        if type(command) is Roll:
            rolls += 1
        n_events += len(new)
        if hash_events:
            for e in new:
                digest.update(event_bytes(e))
        if on_events:
            on_events(state, new)
        if commands >= max_commands:
            raise RuntimeError(f"game seed {seed} did not end within {max_commands} commands")
    return state, GameResult(
        index=-1,
        seed=seed,
        finished=state.end_reason == "last_player",
        reason=state.end_reason,
        winner=state.winner,
        rounds=state.round,
        player_turns=state.turn_no,
        rolls=rolls,
        commands=commands,
        events=n_events,
        events_hash=digest.hexdigest() if hash_events else "",
    )


def _play_indexed(args: tuple[RunSpec, int]) -> GameResult:
    spec, index = args
    seed = game_seed(spec.seed, index)
    _, result = play_game(spec.config(), spec.players, seed, spec.bots, hash_events=spec.hash_events)
    return GameResult(index, *[getattr(result, f) for f in GameResult.__slots__[1:]])


def run_games(spec: RunSpec, workers: int = 1) -> Iterator[GameResult]:
    """Results in game order, played in `workers` processes."""
    jobs = ((spec, i) for i in range(spec.games))
    if workers <= 1:
        yield from map(_play_indexed, jobs)
        return
    with ProcessPoolExecutor(workers) as pool:
        yield from pool.map(_play_indexed, jobs, chunksize=max(1, min(50, spec.games // (workers * 8) or 1)))


@dataclass
class Summary:
    spec: RunSpec
    results: list[GameResult] = field(default_factory=list)
    elapsed_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        r = self.results
        games = len(r)
        rounds = [g.rounds for g in r] or [0]
        turns = [g.player_turns for g in r] or [0]
        player_turns = sum(g.player_turns for g in r)
        events = sum(g.events for g in r)
        wins = [0] * self.spec.players
        reasons: dict[str, int] = {}
        for g in r:
            wins[g.winner] += 1
            reasons[g.reason] = reasons.get(g.reason, 0) + 1
        digest = hashlib.blake2b(digest_size=16)
        for g in r:
            digest.update(g.events_hash.encode())
        elapsed = self.elapsed_s or 1e-9
        return {
            "games": games,
            "players": self.spec.players,
            "seed": self.spec.seed,
            "bots": self.spec.bots,
            "mode": self.spec.mode,
            "round_cap": self.spec.round_cap,
            "finished": sum(g.finished for g in r),
            "capped": sum(g.reason == "round_cap" for g in r),
            "end_reasons": dict(sorted(reasons.items())),
            "rounds_mean": round(statistics.fmean(rounds), 3),
            "rounds_median": statistics.median(rounds),
            "turns_mean": round(statistics.fmean(turns), 3),
            "turns_median": statistics.median(turns),
            "player_turns": player_turns,
            "rolls": sum(g.rolls for g in r),
            "commands": sum(g.commands for g in r),
            "events": events,
            "win_share_by_seat": [round(w / games, 4) if games else 0.0 for w in wins],
            "events_hash": digest.hexdigest() if self.spec.hash_events else "",
            "elapsed_s": round(elapsed, 3),
            "games_per_s": round(games / elapsed, 2),
            "player_turns_per_s": round(player_turns / elapsed, 1),
            "rolls_per_s": round(sum(g.rolls for g in r) / elapsed, 1),
            "events_per_s": round(events / elapsed, 1),
        }


#: Keys of the summary that measure time and so differ between identical runs.
TIMING_KEYS = frozenset({"elapsed_s", "games_per_s", "player_turns_per_s", "rolls_per_s", "events_per_s"})


def simulate(spec: RunSpec, workers: int = 1, progress: Callable[[int, int], None] | None = None) -> Summary:
    summary = Summary(spec)
    start = time.perf_counter()
    for result in run_games(spec, workers):
        summary.results.append(result)
        if progress:
            progress(len(summary.results), spec.games)
    summary.elapsed_s = time.perf_counter() - start
    return summary


__all__ = [
    "DEFAULT_ROUND_CAP",
    "TIMING_KEYS",
    "GameResult",
    "RunSpec",
    "Summary",
    "event_bytes",
    "game_seed",
    "play_game",
    "run_games",
    "simulate",
]
