"""The matchmaking planner (services/matchmaking/queues.py), R4: pure, no servers."""

from __future__ import annotations

from services.matchmaking.queues import Rules, Ticket, estimated_wait_s, plan

RULES = Rules(small_table_wait_s=30, band_base=5, band_per_s=0.5)


def t(
    n: int, waited: float = 1.0, rating: float = 0.0, party: str | None = None, size: int = 1, bots: bool = False
) -> Ticket:
    return Ticket(f"t{n}", f"p{n}", f"name{n}", party, size if party else 1, bots, waited, rating)


def test_classic_starts_at_four_and_takes_a_fifth_at_once() -> None:
    assert plan("classic", [t(i) for i in range(3)], RULES) == []
    (four,) = plan("classic", [t(i) for i in range(4)], RULES)
    assert [s.seat for s in four.seats] == [0, 1, 2, 3] and four.rated
    (five,) = plan("classic", [t(i) for i in range(6)], RULES)
    assert len(five.seats) == 5


def test_small_table_only_after_the_wait() -> None:
    assert plan("speed", [t(0, 29), t(1, 1)], RULES) == []
    (two,) = plan("speed", [t(0, 31), t(1, 1)], RULES)
    assert len(two.seats) == 2
    assert plan("speed", [t(0, 31)], RULES) == []


def test_duel_exactly_three_and_team_exactly_four() -> None:
    assert plan("duel", [t(0, 100), t(1, 100)], RULES) == []
    (duel,) = plan("duel", [t(i) for i in range(4)], RULES)
    assert len(duel.seats) == 3
    assert plan("team", [t(i, 100) for i in range(3)], RULES) == []
    (team,) = plan("team", [t(i) for i in range(4)], RULES)
    assert [s.team for s in team.seats] == [0, 1, 0, 1]


def test_hasbro_queues_like_classic_up_to_six_players() -> None:
    assert plan("hasbro", [t(i) for i in range(3)], RULES) == []
    (four,) = plan("hasbro", [t(i) for i in range(4)], RULES)
    assert len(four.seats) == 4
    (six,) = plan("hasbro", [t(i) for i in range(7)], RULES)
    assert len(six.seats) == 6  # H1: 2-6 players


def test_parties_sit_together_on_one_team_and_wait_until_complete() -> None:
    a = [t(0, 5, party="a", size=2), t(1, 4, party="a", size=2)]
    b = [t(2, 3, party="b", size=2)]
    assert plan("team", a + b, RULES) == []
    (team,) = plan("team", [*a, *b, t(3, 1, party="b", size=2)], RULES)
    seat_of = {s.ticket.player_id: s.seat for s in team.seats if s.ticket}
    assert sorted([seat_of["p0"], seat_of["p1"]]) in ([0, 2], [1, 3])
    assert sorted([seat_of["p2"], seat_of["p3"]]) in ([0, 2], [1, 3])
    (mixed,) = plan("team", [t(5, 9), *a, t(6, 1)], RULES)
    seat_of = {s.ticket.player_id: s.seat for s in mixed.seats if s.ticket}
    assert sorted([seat_of["p0"], seat_of["p1"]]) == [0, 2]


def test_R4_two_parties_make_a_team_table_though_a_single_waits_between_them() -> None:
    """Taking each unit that fits in age order seats the single beside the first party, and the second
    party no longer fits: the two parties, a full 2v2 table, start anyway; the single waits."""
    first = [t(1, 100, party="P1", size=2), t(2, 100, party="P1", size=2)]
    second = [t(4, 80, party="P2", size=2), t(5, 80, party="P2", size=2)]
    (team,) = plan("team", [*first, t(3, 90), *second], RULES)
    seat_of = {s.ticket.player_id: s.seat for s in team.seats if s.ticket}
    assert set(seat_of) == {"p1", "p2", "p4", "p5"} and team.rated
    assert sorted([seat_of["p1"], seat_of["p2"]]) in ([0, 2], [1, 3])
    # Classic: a party of two, a single, then a party of three: the two parties fill a table of five.
    pair = [t(1, 9, party="A", size=2), t(2, 9, party="A", size=2)]
    trio = [t(4, 7, party="B", size=3), t(5, 7, party="B", size=3), t(6, 7, party="B", size=3)]
    (classic,) = plan("classic", [*pair, t(3, 8), *trio], RULES)
    assert {s.ticket.player_id for s in classic.seats if s.ticket} == {"p1", "p2", "p4", "p5", "p6"}


def test_rating_band_widens_with_waiting() -> None:
    assert plan("duel", [t(0, 1, 0), t(1, 1, 0), t(2, 1, 50)], RULES) == []
    (duel,) = plan("duel", [t(0, 100, 0), t(1, 1, 0), t(2, 1, 50)], RULES)  # band 5 + 50
    assert len(duel.seats) == 3


def test_bot_fill_after_the_wait_is_unrated() -> None:
    assert plan("duel", [t(0, 10, bots=True)], RULES) == []
    (duel,) = plan("duel", [t(0, 31, bots=True)], RULES)
    assert [s.name for s in duel.seats] == ["name0", "bot-1", "bot-2"] and not duel.rated
    (team,) = plan("team", [t(0, 31, party="x", size=2, bots=True), t(1, 31, party="x", size=2)], RULES)
    assert [s.ticket is None for s in team.seats] == [False, True, False, True]


def test_R4_bots_wait_for_the_player_who_asked_and_never_take_a_rated_small_table_from_one_who_did_not() -> None:
    """alice (no bots) has waited; bob (bots) just came: the small rated table of the two, not four with bots."""
    (pair,) = plan("classic", [t(0, 40), t(1, 1, bots=True)], RULES)
    assert [s.name for s in pair.seats] == ["name0", "name1"] and pair.rated
    (pair,) = plan("classic", [t(0, 40), t(1, 35, bots=True)], RULES)  # both waited: still the rated pair
    assert len(pair.seats) == 2 and pair.rated
    (filled,) = plan("classic", [t(0, 40, bots=True), t(1, 35, bots=True)], RULES)  # both asked: bots
    assert len(filled.seats) == 4 and not filled.rated
    # in Duel nobody sits without a third player: there, a player who asked for bots has them after their wait
    assert plan("duel", [t(0, 40), t(1, 1, bots=True)], RULES) == []
    (duel,) = plan("duel", [t(0, 40), t(1, 31, bots=True)], RULES)
    assert [s.name for s in duel.seats] == ["name0", "name1", "bot-1"] and not duel.rated


def test_duplicate_names_are_told_apart() -> None:
    same = [Ticket(f"t{i}", f"p{i}", "ann", None, 1, False, 1.0) for i in range(4)]
    (table,) = plan("classic", same, RULES)
    assert [s.name for s in table.seats] == ["ann", "ann #2", "ann #3", "ann #4"]


def test_estimated_wait() -> None:
    mine = t(0, 10)
    assert estimated_wait_s("classic", [mine, t(1)], mine, RULES, None) == 20
    assert estimated_wait_s("duel", [mine], mine, RULES, 12.0) == 20
    assert estimated_wait_s("classic", [mine, t(1), t(2), t(3)], mine, RULES, None) < 1
