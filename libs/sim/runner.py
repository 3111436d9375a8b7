"""Play games of bots through the engine and summarise them.

A game's seed and its bots' seeds derive from (run seed, game index), so a
run gives the same games whatever the number of workers, and the events
hash over all games is the same byte for byte.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import hashlib
import operator
import random
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import orjson

from bots import make_bot
from engine import (
    EVENT_TYPES,
    Event,
    PlayerBankrupt,
    TableConfig,
    TableCreated,
    TableState,
    TurnTimedOut,
    event_values,
    new_game,
    preset,
)
from engine.rng import draw

from .loop import JAIL_STATE, play_out

#: A safety net: the clock and economy rules (E3, E4) end games long before it.
DEFAULT_ROUND_CAP = 500
#: A bot thinks this long per decision on the virtual clock (a person takes a few seconds).
DEFAULT_THINK_MS = 3000
_CAUSES = ("debt", "surrender", "timeout")
#: End reasons of a game the rules ended (not the round cap): D5, X4, H3/H4, H5.
RULE_ENDS = frozenset({"last_player", "last_team", "short_game", "time_limit"})
LANDING_KEYS = (*(str(i) for i in range(40)), "jail")


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
    commands: int  # bots' commands (clock ticks not counted)
    game_ms: int  # game time played on the virtual clock (0 when untimed)
    timeouts: int  # E2: turns that ran out of time
    bankruptcies: tuple[int, int, int]  # by cause: debt, surrender, timeout
    events: int
    events_hash: str
    #: Landing statistics (`RunSpec.landing_stats`): observations per square 0-39 and jail (40).
    landing: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class RunSpec:
    games: int
    players: int = 4
    seed: int = 0
    bots: str = "heuristic"
    mode: str = "classic"
    round_cap: int | None = DEFAULT_ROUND_CAP
    hash_events: bool = True
    #: Virtual clock: game ms a bot takes per decision (0: no clock, no timers).
    think_ms: int = DEFAULT_THINK_MS
    #: Chance per decision that a player walks away for good (its turns then time out, E2).
    leave_rate: float = 0.0
    #: Count where each dice roll leaves the token (the landing statistics).
    landing_stats: bool = False
    #: The bots' way out of jail: "pay" (at once) or "wait" (for doubles); None: their own.
    jail_policy: str | None = None

    def config(self) -> TableConfig:
        return preset(self.mode, round_cap=self.round_cap)


def game_seed(run_seed: int, index: int) -> int:
    return draw(run_seed & ((1 << 64) - 1), index)


def events_bytes(events: list[Event]) -> bytes:
    """The canonical encoding of a game's events that its events hash covers.

    Two lines: the events' type names, space-separated; then a JSON list with one entry per
    event, its field values in declaration order (a list; a one-field event its value).
    `TableCreated` and the events of a type with a field added later (`_WITH_ADDED`) are
    objects instead, leaving out every config or event field added later while it holds its
    default (`engine.config.added`), so the hash of a game does not change when the config or
    an event grows.

    One pass per game, through C-level maps (a getter per type, one `orjson.dumps`): encoded
    event by event in Python, the check cost as much as the rules it checks. In the native build
    the names and values come from compiled code instead (`engine.event_values`, the same ones).
    """
    if _COMPILED_VALUES:
        names, read, special = event_values.values(events)
        for i in special:
            read[i] = _special_value(events[i])
        return b" ".join(names) + b"\n" + orjson.dumps(read)
    kinds = list(map(type, events))
    values: list[Any] = list(map(operator.call, map(_VALUES.__getitem__, kinds), events))
    for cls in _SPECIAL:  # the few events encoded field by field, found by C-level searches
        i = 0
        with contextlib.suppress(ValueError):
            while True:
                i = kinds.index(cls, i)
                values[i] = _special_value(events[i])
                i += 1
    return b" ".join(map(_NAMES.__getitem__, kinds)) + b"\n" + orjson.dumps(values)


def _special_value(event: Event) -> Any:
    if type(event) is TableCreated:
        created: TableCreated = event  # type: ignore[assignment]
        config = _config_without_added_defaults(created.config)
        return {"config": config, "seed": created.seed, "players": created.players}
    return _without_added_defaults(event)


def _no_values(event: Event) -> tuple[()]:
    return ()


#: Event types with fields added later (`engine.config.added`): like the config's, such a field
#: is left out of the hash while it holds its default, so older games keep their hash.
_WITH_ADDED = frozenset(
    cls for cls in EVENT_TYPES.values() if any(f.metadata.get("added") for f in dataclasses.fields(cls))
)
_SPECIAL = (TableCreated, *_WITH_ADDED)  # encoded field by field (`_special_value`)
_NAMES: dict[type, bytes] = {cls: name.encode() for name, cls in EVENT_TYPES.items()}
#: Each event type's field values, read in C (`attrgetter`).
_VALUES: dict[type, Callable[[Any], Any]] = {
    cls: operator.attrgetter(*names) if names else _no_values
    for cls in EVENT_TYPES.values()
    for names in [[f.name for f in dataclasses.fields(cls)]]
}
#: Reading the fields in compiled code beats the getters only when that code is compiled (make compile).
_COMPILED_VALUES = not (event_values.__file__ or "").endswith(".py")
#: The JSON of `_without_added_defaults` of the configs seen lately, by identity (a run plays one).
_CONFIGS: dict[int, tuple[TableConfig, orjson.Fragment]] = {}


def _config_without_added_defaults(config: TableConfig) -> orjson.Fragment:
    seen = _CONFIGS.get(id(config))
    if seen is not None and seen[0] is config:
        return seen[1]
    if len(_CONFIGS) >= 16:
        _CONFIGS.clear()
    encoded = orjson.Fragment(orjson.dumps(_without_added_defaults(config)))
    _CONFIGS[id(config)] = (config, encoded)
    return encoded


def _without_added_defaults(value: Any) -> Any:
    if value is None or isinstance(value, (int, str, float)):  # most values: first, and cheap
        return value
    if isinstance(value, (list, tuple)):
        return [_without_added_defaults(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for name, added, default in _fields(type(value)):
            item = getattr(value, name)
            if added and item == default:
                continue
            out[name] = _without_added_defaults(item)
        return out
    return value


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, bool, Any], ...]:
    """A dataclass's fields: name, whether added later (`engine.config.added`), default."""
    return tuple((f.name, bool(f.metadata.get("added")), f.default) for f in dataclasses.fields(cls))


def play_game(
    config: TableConfig,
    players: int,
    seed: int,
    bots: str,
    on_events: Callable[[TableState, list[Event]], None] | None = None,
    hash_events: bool = True,
    max_commands: int = 200_000,
    think_ms: int = 0,
    leave_rate: float = 0.0,
    landing_stats: bool = False,
    jail_policy: str | None = None,
) -> tuple[TableState, GameResult]:
    """Play one game to its end; `on_events` sees every command's events.

    With `think_ms`, the game runs on a virtual clock: before each decision the
    clock moves on by the bot's thinking time (a `Tick`), so timers, the salary
    stop and the rent tax apply. A player who left is never asked again; the
    clock jumps to its deadlines instead.

    With `landing_stats`, every dice roll is one observation: where the roller's token rests
    once that roll's move is fully resolved (cards, Go To Jail, a forced fine's move), in jail
    counted apart from square 10.
    """
    state, events = new_game(config, [f"{bots}-{i}" for i in range(players)], seed)
    seat_bots = [make_bot(bots, draw(seed, 1000 + i)) for i in range(players)]
    for bot in seat_bots:
        configure = getattr(bot, "configure", None)
        if configure is not None:
            configure(config)  # money thresholds in the rule set's scale
        if jail_policy is not None:
            bot.jail_policy = jail_policy  # type: ignore[attr-defined]
    landing = [0] * (JAIL_STATE + 1) if landing_stats else None
    chance = random.Random(draw(seed, 999))
    played: list[Event] = list(events)  # every event of the game, hashed and counted once it is over
    if on_events is not None:
        on_events(state, events)
    commands, rolls = play_out(state, seat_bots, played, on_events, think_ms, leave_rate, chance, landing, max_commands)
    kinds = list(map(type, played))
    causes = [0, 0, 0]
    i = 0
    with contextlib.suppress(ValueError):  # the few bankruptcies, found by a C-level search
        while True:
            i = kinds.index(PlayerBankrupt, i)
            causes[_CAUSES.index(played[i].cause)] += 1  # type: ignore[attr-defined]
            i += 1
    return state, GameResult(
        index=-1,
        seed=seed,
        finished=state.end_reason in RULE_ENDS,
        reason=state.end_reason,
        winner=state.winner,
        rounds=state.round,
        player_turns=state.turn_no,
        rolls=rolls,
        commands=commands,
        game_ms=state.game_ms,
        timeouts=kinds.count(TurnTimedOut),
        bankruptcies=(causes[0], causes[1], causes[2]),
        events=len(played),
        events_hash=hashlib.blake2b(events_bytes(played), digest_size=16).hexdigest() if hash_events else "",
        landing=tuple(landing) if landing is not None else (),
    )


@functools.lru_cache(maxsize=8)
def _config(spec: RunSpec) -> TableConfig:
    """The run's config, one object for all its games (the events hash encodes it once)."""
    return spec.config()


def _play_indexed(args: tuple[RunSpec, int]) -> GameResult:
    spec, index = args
    seed = game_seed(spec.seed, index)
    _, result = play_game(
        _config(spec),
        spec.players,
        seed,
        spec.bots,
        hash_events=spec.hash_events,
        think_ms=spec.think_ms,
        leave_rate=spec.leave_rate,
        landing_stats=spec.landing_stats,
        jail_policy=spec.jail_policy,
    )
    return GameResult(index, *[getattr(result, f) for f in GameResult.__slots__[1:]])


#: The cyclic garbage collector's thresholds while games are played. A game allocates millions of
#: short-lived objects that form no cycles (events, lists of them, copies of small states), and the
#: default young-generation threshold (700 allocations) runs the collector every few commands with
#: nothing to find. Raised for the run, never turned off, so a cycle is still collected. Measured on
#: the compiled build, classic 4 players, medians of 4 interleaved runs: 700 (the default) 130,800
#: player-turns/s; 5,000 136,500; 20,000 136,700; 100,000 136,600; the collector off 135,500.
GAME_GC_THRESHOLD = (20_000, 10, 10)


@contextlib.contextmanager
def collector_tuned() -> Iterator[None]:
    """`GAME_GC_THRESHOLD` while the block runs; what was allocated before it is frozen (never scanned
    again: the modules, the config) until it ends. Worker processes forked inside inherit both."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GAME_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def run_games(spec: RunSpec, workers: int = 1) -> Iterator[GameResult]:
    """Results in game order, played in `workers` processes."""
    jobs = ((spec, i) for i in range(spec.games))
    with collector_tuned():
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
            reason = str(getattr(g.reason, "value", g.reason))  # the reason's name, as the JSON says it
            reasons[reason] = reasons.get(reason, 0) + 1
        digest = hashlib.blake2b(digest_size=16)
        for g in r:
            digest.update(g.events_hash.encode())
        elapsed = self.elapsed_s or 1e-9
        landing: dict[str, Any] = {}
        if self.spec.landing_stats:
            counts = [sum(g.landing[i] for g in r) for i in range(JAIL_STATE + 1)]
            total = sum(counts)
            shares = {k: round(100 * c / total, 4) if total else 0.0 for k, c in zip(LANDING_KEYS, counts, strict=True)}
            landing = {"landing": shares, "landing_rolls": total, "jail_policy": self.spec.jail_policy}
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
            "bankruptcies": {cause: sum(g.bankruptcies[i] for g in r) for i, cause in enumerate(_CAUSES)},
            "turn_timeouts": sum(g.timeouts for g in r),
            "think_seconds": self.spec.think_ms / 1000,
            "game_minutes": _distribution([g.game_ms / 60_000 for g in r]),
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
            **landing,
        }


def _distribution(values: list[float]) -> dict[str, float]:
    """Mean and quantiles of game minutes (all zero when games ran untimed)."""
    if not values:
        return {}
    ordered = sorted(values)

    def q(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1)

    return {
        "mean": round(statistics.fmean(ordered), 1),
        "min": round(ordered[0], 1),
        "p10": q(0.1),
        "median": round(statistics.median(ordered), 1),
        "p90": q(0.9),
        "max": round(ordered[-1], 1),
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
    "DEFAULT_THINK_MS",
    "GAME_GC_THRESHOLD",
    "LANDING_KEYS",
    "RULE_ENDS",
    "TIMING_KEYS",
    "GameResult",
    "RunSpec",
    "Summary",
    "collector_tuned",
    "events_bytes",
    "game_seed",
    "play_game",
    "run_games",
    "simulate",
]
