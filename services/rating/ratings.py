"""The rating service's rules, pure: who is a bot, which games count (R1, R2), XP, ratings,
achievements and quests. No I/O: `store` persists what these functions decide."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from openskill.models import PlackettLuce

from bots import BOTS

#: R1: a rated game lasted at least this many rounds ...
MIN_ROUNDS = 10
#: ... and this much real (unscaled) time (the default of `Thresholds`; RATING_MIN_REAL_MINUTES).
MIN_REAL_MS = 10 * 60 * 1000

#: XP by final place (1st, 2nd, ...); places past the list give the last amount.
PLACE_XP = (100, 60, 40, 25, 10)
XP_PER_ROUND = 2
ROUND_XP_CAP = 50

POOLS = ("ffa", "team")

ACHIEVEMENTS = ("first_win", "duel_win", "jackpot")
#: quest -> (what counts, target)
QUESTS: dict[str, tuple[str, int]] = {"play_3": ("games", 3), "win_2": ("wins", 2)}

MODEL = PlackettLuce()
DEFAULT_MU: float = MODEL.mu
DEFAULT_SIGMA: float = MODEL.sigma

_BOT_KINDS = "|".join(re.escape(kind) for kind in sorted(BOTS))
_BOT_NAME = re.compile(rf"^(?:{_BOT_KINDS})-\d+$")
#: "bot" alone or followed by a separator or a digit: "bot", "bot-3", "Bot_Alice", "bot7"; not a
#: name that merely begins with the letters ("Botond", "Bottas", "bothwell").
_BOT_WORD = re.compile(r"^bot(?:$|[\W_\d])", re.IGNORECASE)


def is_bot(name: str) -> bool:
    """R1: the bots at a table matchmaking did not form (its own flags say who they are elsewhere).
    The word "bot" (any case) at the start, alone or before a separator or a digit ("bot", "bot-3",
    "Bot_Alice", "BOT 2"), or "<kind>-<n>" for a bot kind of `libs/bots` ("heuristic-0",
    "random-1"): the names the bot clients seat. A human "Botond" is a human."""
    return _BOT_WORD.match(name) is not None or _BOT_NAME.match(name) is not None


@dataclass(frozen=True, slots=True)
class Thresholds:
    """R1's minimum length of a rated game. The defaults are R1's; a platform whose games are short
    on purpose (tests, demos of bots) lowers the real time with RATING_MIN_REAL_MINUTES."""

    min_rounds: int = MIN_ROUNDS
    min_real_ms: int = MIN_REAL_MS

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Thresholds:
        raw = env.get("RATING_MIN_REAL_MINUTES", "").strip()
        if not raw:
            return cls()
        try:
            minutes = float(raw)
        except ValueError:
            raise SystemExit(f"RATING_MIN_REAL_MINUTES: {raw!r} is not a number of minutes") from None
        if not math.isfinite(minutes) or minutes < 0:
            raise SystemExit(f"RATING_MIN_REAL_MINUTES: {raw!r} is not a number of minutes at least 0")
        return cls(min_real_ms=round(minutes * 60_000))

    @property
    def min_real_minutes(self) -> str:
        """The minimum in minutes as written: "10", "0.05"."""
        return f"{self.min_real_ms / 60_000:g}"


def pool_for(mode: str) -> str:
    return "team" if mode == "team" else "ffa"


@dataclass(frozen=True, slots=True)
class Game:
    """What the rating service knows of a finished game."""

    table_id: str
    mode: str
    ruleset: str
    teams: bool
    players: tuple[str, ...]  # the players' keys by seat: player ids (matchmaking) or display names
    places: tuple[int, ...]  # final place by seat, 1 = winner
    winner: int
    rounds: int
    real_ms: int
    jackpot_seats: frozenset[int] = frozenset()
    #: The seats of bots as matchmaking flagged them; None: a table matchmaking did not form, whose
    #: bots are known by their names (`is_bot`).
    bot_seats: frozenset[int] | None = None
    #: Display names by seat, for the reasons (empty: `players` are the names).
    names: tuple[str, ...] = ()
    #: False when matchmaking formed the table unrated (it filled seats with bots).
    rated_table: bool = True

    def is_bot(self, seat: int) -> bool:
        return seat in self.bot_seats if self.bot_seats is not None else is_bot(self.players[seat])

    def name(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else self.players[seat]


@dataclass(frozen=True, slots=True)
class Verdict:
    rated: bool
    #: XP multiplier in halves: 2 full XP, 1 half XP (R2 custom), 0 none.
    xp_halves: int
    #: Achievements and quest progress are granted.
    rewards: bool
    #: Why the game is not rated (and why it gives less or nothing), "" when rated.
    reason: str
    reasons: tuple[str, ...] = field(default=())


def judge(game: Game, thresholds: Thresholds) -> Verdict:
    """R1 (with the service's `thresholds`), R2 and the decisions of the package docstring."""
    unclean: list[str] = []
    bots = [game.name(seat) for seat in range(len(game.players)) if game.is_bot(seat)]
    if bots:
        unclean.append(f"R1: bot players ({', '.join(bots)})")
    elif not game.rated_table and game.mode != "custom":
        unclean.append("R1: matchmaking formed the table unrated")
    if game.rounds < thresholds.min_rounds:
        unclean.append(f"R1: {game.rounds} rounds (at least {thresholds.min_rounds})")
    if game.real_ms < thresholds.min_real_ms:
        limit = thresholds.min_real_minutes
        decimals = min(3, max(1, len(limit.partition(".")[2])))
        unclean.append(f"R1: {_minutes(game.real_ms, decimals)} real minutes (at least {limit})")
    if len(set(game.players)) != len(game.players):
        unclean.append("players not distinct")
    clean = not unclean
    if game.ruleset != "online":
        return Verdict(False, 0, False, "; ".join([f"R1: {game.ruleset} rule set, not online Classic", *unclean]))
    if game.mode == "custom":
        reasons = ["R2: custom games are never rated", *unclean]
        return Verdict(False, 1 if clean else 0, False, "; ".join(reasons), tuple(reasons))
    if game.mode != "classic":
        reasons = [f"R1: {game.mode} mode, not Classic", *unclean]
        return Verdict(False, 0, clean, "; ".join(reasons), tuple(reasons))
    if not clean:
        return Verdict(False, 0, False, "; ".join(unclean), tuple(unclean))
    return Verdict(True, 2, True, "")


def _minutes(ms: int, decimals: int = 1) -> str:
    """Minutes rounded down to `decimals` places: "9", "9.5", "0.03" (never rounds 9.96 up to a
    limit of 10)."""
    unit = 10**decimals
    parts = max(0, ms) * unit // 60_000
    whole, frac = divmod(parts, unit)
    return f"{whole}.{frac:0{decimals}d}".rstrip("0").rstrip(".")


def xp_for(place: int, rounds: int, halves: int = 2) -> int:
    """XP of one player: by place (100, 60, 40, 25, 10) plus 2 per round played capped at 50; `halves`
    1 gives half of it rounded down (R2), 0 nothing."""
    if halves <= 0 or place < 1:
        return 0
    base = PLACE_XP[min(place, len(PLACE_XP)) - 1] + min(ROUND_XP_CAP, XP_PER_ROUND * max(0, rounds))
    return base * halves // 2


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    games: int = 0

    @property
    def ordinal(self) -> float:
        return ordinal(self.mu, self.sigma)


def ordinal(mu: float, sigma: float) -> float:
    return float(MODEL.rating(mu=mu, sigma=sigma).ordinal())


def team_of(seat: int) -> int:
    """X4: seats 0 and 2 against 1 and 3."""
    return seat % 2


def rate(game: Game, before: dict[str, Rating]) -> dict[str, Rating]:
    """New ratings of the game's players (keyed by name) from the final places: each player a team
    of one, or (Team 2v2) the two teams of two, ranked by place (lower is better)."""
    ratings = {name: MODEL.rating(mu=before[name].mu, sigma=before[name].sigma, name=name) for name in game.players}
    if game.teams:
        seats_by_team: dict[int, list[int]] = {}
        for seat in range(len(game.players)):
            seats_by_team.setdefault(team_of(seat), []).append(seat)
        groups = [seats_by_team[t] for t in sorted(seats_by_team)]
    else:
        groups = [[seat] for seat in range(len(game.players))]
    teams = [[ratings[game.players[s]] for s in group] for group in groups]
    ranks = [float(min(game.places[s] for s in group)) for group in groups]
    rated = MODEL.rate(teams, ranks=ranks)
    out: dict[str, Rating] = {}
    for group, team in zip(groups, rated, strict=True):
        for seat, r in zip(group, team, strict=True):
            name = game.players[seat]
            out[name] = Rating(float(r.mu), float(r.sigma), before[name].games + 1)
    return out


def achievements_for(game: Game, seat: int, already: set[str]) -> list[str]:
    """The achievements this game grants the player at `seat` (only when the verdict rewards)."""
    won = game.places[seat] == 1
    earned = []
    if won:
        earned.append("first_win")
    if won and game.mode == "duel":
        earned.append("duel_win")
    if seat in game.jackpot_seats:
        earned.append("jackpot")
    return [a for a in earned if a not in already]


def quest_steps(game: Game, seat: int) -> dict[str, int]:
    """How far this game moves each quest for the player at `seat`."""
    won = game.places[seat] == 1
    counts = {"games": 1, "wins": 1 if won else 0}
    return {quest: counts[what] for quest, (what, _) in QUESTS.items() if counts[what]}
