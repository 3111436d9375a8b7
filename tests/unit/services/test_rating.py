"""The rating service's rules, without I/O: bots, R1/R2 verdicts, XP, ratings, achievements, quests."""

from __future__ import annotations

import pytest

from monopoly.v1 import matchmaking_pb2 as mm_pb
from services.rating.games import match_record
from services.rating.ratings import (
    MIN_REAL_MS,
    Game,
    Rating,
    Thresholds,
    achievements_for,
    is_bot,
    judge,
    pool_for,
    quest_steps,
    rate,
    xp_for,
)

LONG = MIN_REAL_MS + 60_000
R1 = Thresholds()


def game(mode: str = "classic", players: tuple[str, ...] = ("ann", "ben", "cat", "dan"), **kw: object) -> Game:
    values: dict[str, object] = {
        "table_id": "t1",
        "mode": mode,
        "ruleset": "online",
        "teams": mode == "team",
        "players": players,
        "places": (2, 1, 4, 3)[: len(players)] if len(players) == 4 else tuple(range(1, len(players) + 1)),
        "winner": 1,
        "rounds": 12,
        "real_ms": LONG,
    }
    values.update(kw)
    return Game(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "bot"),
    [
        ("heuristic-0", True),
        ("random-12", True),
        ("bot", True),
        ("Bot_Alice", True),
        ("bot-7", True),
        ("BOT 2", True),
        ("bot7", True),
        ("alice", False),
        ("Botond", False),  # a name that only begins with the letters is a human's
        ("bothwell", False),
        ("heuristic", False),
        ("robot", False),
        ("heuristic-fan", False),
    ],
)
def test_R1_bots_are_named_bot_or_after_a_bot_kind(name: str, bot: bool) -> None:
    assert is_bot(name) is bot


def test_R1_a_clean_classic_game_is_rated_with_full_xp_and_rewards() -> None:
    v = judge(game(), R1)
    assert (v.rated, v.xp_halves, v.rewards, v.reason) == (True, 2, True, "")


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"players": ("ann", "heuristic-1", "cat", "dan")}, "R1: bot players (heuristic-1)"),
        ({"rounds": 9}, "R1: 9 rounds"),
        ({"real_ms": MIN_REAL_MS - 1}, "R1: 9.9 real minutes"),
        ({"real_ms": 9 * 60_000}, "R1: 9 real minutes"),
        ({"players": ("ann", "ann", "cat", "dan")}, "players not distinct"),
        ({"ruleset": "hasbro"}, "hasbro rule set"),
    ],
)
def test_R1_failures_are_unrated_without_xp_or_rewards(changes: dict[str, object], why: str) -> None:
    v = judge(game(**changes), R1)
    assert not v.rated and v.xp_halves == 0 and not v.rewards and why in v.reason


def test_the_default_thresholds_are_r1s_ten_rounds_and_ten_real_minutes() -> None:
    assert (R1.min_rounds, R1.min_real_ms) == (10, 10 * 60_000) == (10, MIN_REAL_MS)
    assert Thresholds.from_env({}) == R1 and Thresholds.from_env({"RATING_MIN_REAL_MINUTES": ""}) == R1
    assert R1.min_real_minutes == "10"
    assert "R1: 9.9 real minutes (at least 10)" in judge(game(real_ms=MIN_REAL_MS - 1), R1).reason


def test_the_real_time_minimum_is_a_setting() -> None:
    short = Thresholds.from_env({"RATING_MIN_REAL_MINUTES": "0.05"})
    assert short == Thresholds(min_rounds=10, min_real_ms=3_000) and short.min_real_minutes == "0.05"
    assert judge(game(real_ms=3_000), short).rated and not judge(game(real_ms=3_000), R1).rated
    v = judge(game(real_ms=2_000), short)
    assert not v.rated and "R1: 0.03 real minutes (at least 0.05)" in v.reason
    assert "R1: 9 rounds (at least 10)" in judge(game(rounds=9, real_ms=3_000), short).reason
    assert judge(game(real_ms=0), Thresholds.from_env({"RATING_MIN_REAL_MINUTES": "0"})).rated
    for bad in ("ten", "-1", "nan", "inf"):
        with pytest.raises(SystemExit, match="RATING_MIN_REAL_MINUTES"):
            Thresholds.from_env({"RATING_MIN_REAL_MINUTES": bad})


def test_matchmaking_bot_flags_replace_bot_names() -> None:
    ids = ("p-1", "p-2", "p-3", "p-4")
    names = ("ann", "ben", "bot-1", "dan")
    flagged = judge(game(players=ids, names=names, bot_seats=frozenset({2})), R1)
    assert not flagged.rated and "R1: bot players (bot-1)" in flagged.reason
    # a player registered as a bot is a bot whatever its name; a human named like a bot is not
    assert not judge(game(players=ids, names=("ann", "ben", "cat", "dan"), bot_seats=frozenset({0})), R1).rated
    assert judge(game(players=ids, names=("ann", "ben", "heuristic-2", "dan"), bot_seats=frozenset()), R1).rated
    unrated = judge(game(players=ids, names=names, bot_seats=frozenset(), rated_table=False), R1)
    assert not unrated.rated and "matchmaking formed the table unrated" in unrated.reason


def test_a_formed_match_event_gives_player_ids_and_bot_flags_by_seat() -> None:
    event = mm_pb.MatchEvent(event_id="t9:formed", type="formed")
    event.match.table_id, event.match.mode, event.match.kind, event.match.rated = "t9", "classic", "queue", False
    event.match.seats.add(seat=1, player_id="", display_name="bot-1", is_bot=True)
    event.match.seats.add(seat=0, player_id="p-7", display_name="ann", is_bot=False)
    record = match_record(event)
    assert record is not None and record.table_id == "t9" and not record.rated
    assert record.keys == ("p-7", "bot-1") and record.bot_seats == frozenset({1})
    event.type = "finished"
    assert match_record(event) is None


def test_exactly_ten_rounds_and_ten_minutes_qualify() -> None:
    assert judge(game(rounds=10, real_ms=MIN_REAL_MS), R1).rated


def test_R2_custom_is_never_rated_gives_half_xp_when_clean_and_no_rewards() -> None:
    clean = judge(game("custom"), R1)
    assert (clean.rated, clean.xp_halves, clean.rewards) == (False, 1, False) and clean.reason.startswith("R2")
    dirty = judge(game("custom", rounds=3), R1)
    assert dirty.xp_halves == 0 and "R1: 3 rounds" in dirty.reason


@pytest.mark.parametrize("mode", ["speed", "duel", "team"])
def test_other_modes_are_unrated_without_xp_but_with_rewards_when_clean(mode: str) -> None:
    v = judge(game(mode), R1)
    assert (v.rated, v.xp_halves, v.rewards) == (False, 0, True) and f"R1: {mode} mode" in v.reason
    assert not judge(game(mode, rounds=2), R1).rewards


def test_xp_by_place_and_rounds_capped_and_halved() -> None:
    assert [xp_for(p, 12) for p in range(1, 7)] == [124, 84, 64, 49, 34, 34]
    assert xp_for(1, 100) == 150  # the round bonus stops at 50
    assert xp_for(1, 12, halves=1) == 62 and xp_for(2, 11, halves=1) == 41  # rounded down
    assert xp_for(1, 12, halves=0) == 0


def test_ratings_move_in_the_order_of_places() -> None:
    g = game()
    before = {n: Rating() for n in g.players}
    after = rate(g, before)
    gains = {n: after[n].mu - before[n].mu for n in g.players}
    by_place = sorted(g.players, key=lambda n: g.places[g.players.index(n)])
    assert [gains[n] for n in by_place] == sorted(gains.values(), reverse=True)
    assert all(after[n].games == 1 and after[n].sigma < before[n].sigma for n in g.players)


def test_team_games_rate_the_teams_of_seats_0_2_and_1_3() -> None:
    g = game("team", places=(1, 2, 1, 2), winner=0)
    assert pool_for("team") == "team" and pool_for("classic") == "ffa"
    after = rate(g, {n: Rating() for n in g.players})
    assert after["ann"].mu == pytest.approx(after["cat"].mu) and after["ben"].mu == pytest.approx(after["dan"].mu)
    assert after["ann"].mu > 25 > after["ben"].mu


def test_achievements_and_quests() -> None:
    g = game("duel", players=("ann", "ben", "cat"), places=(2, 1, 3), winner=1, jackpot_seats=frozenset({0}))
    assert achievements_for(g, 1, set()) == ["first_win", "duel_win"]
    assert achievements_for(g, 1, {"first_win"}) == ["duel_win"]
    assert achievements_for(g, 0, set()) == ["jackpot"]
    assert achievements_for(g, 2, set()) == []
    assert quest_steps(g, 1) == {"play_3": 1, "win_2": 1} and quest_steps(g, 2) == {"play_3": 1}
