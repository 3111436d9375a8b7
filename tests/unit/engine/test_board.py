"""B1, B2, B4: the online board is the classic board x10 with its own names and corners."""

from __future__ import annotations

import pytest

from engine import Kind, classic
from engine.board import online_board

# B4, hasbro amounts: square -> (price, rents, house cost, group)
B4 = {
    1: (60, (2, 10, 30, 90, 160, 250), 50, 1),
    3: (60, (4, 20, 60, 180, 320, 450), 50, 1),
    6: (100, (6, 30, 90, 270, 400, 550), 50, 2),
    8: (100, (6, 30, 90, 270, 400, 550), 50, 2),
    9: (120, (8, 40, 100, 300, 450, 600), 50, 2),
    11: (140, (10, 50, 150, 450, 625, 750), 100, 3),
    13: (140, (10, 50, 150, 450, 625, 750), 100, 3),
    14: (160, (12, 60, 180, 500, 700, 900), 100, 3),
    16: (180, (14, 70, 200, 550, 750, 950), 100, 4),
    18: (180, (14, 70, 200, 550, 750, 950), 100, 4),
    19: (200, (16, 80, 220, 600, 800, 1000), 100, 4),
    21: (220, (18, 90, 250, 700, 875, 1050), 150, 5),
    23: (220, (18, 90, 250, 700, 875, 1050), 150, 5),
    24: (240, (20, 100, 300, 750, 925, 1100), 150, 5),
    26: (260, (22, 110, 330, 800, 975, 1150), 150, 6),
    27: (260, (22, 110, 330, 800, 975, 1150), 150, 6),
    29: (280, (24, 120, 360, 850, 1025, 1200), 150, 6),
    31: (300, (26, 130, 390, 900, 1100, 1275), 200, 7),
    32: (300, (26, 130, 390, 900, 1100, 1275), 200, 7),
    34: (320, (28, 150, 450, 1000, 1200, 1400), 200, 7),
    37: (350, (35, 175, 500, 1100, 1300, 1500), 200, 8),
    39: (400, (50, 200, 600, 1400, 1700, 2000), 200, 8),
}


def test_B1_forty_squares_in_a_ring_from_start() -> None:
    board = online_board()
    assert [s.index for s in board.squares] == list(range(40))
    assert board.squares[0].kind is Kind.START


def test_B2_online_board_layout() -> None:
    board = online_board()
    kinds = [s.kind for s in board.squares]
    assert kinds.count(Kind.PROPERTY) == 22
    assert [len(board.group_members(g)) for g in range(1, 9)] == [2, 3, 3, 3, 3, 3, 3, 2]
    assert board.of_kind(Kind.RAILROAD) == (5, 15, 25, 35)
    assert board.of_kind(Kind.UTILITY) == (12, 28)
    assert [board.squares[i].kind for i in (0, 10, 20, 30)] == [Kind.START, Kind.JAIL, Kind.CASINO, Kind.GO_TO_JAIL]
    assert board.of_kind(Kind.CHANCE) == (2, 7, 17, 22, 33, 36)
    assert (board.squares[4].tax, board.squares[38].tax) == (2000, 1000)
    assert board.of_kind(Kind.CHEST) == ()


@pytest.mark.parametrize("square", sorted(B4))
def test_B2_B4_online_amounts_are_classic_times_ten(square: int) -> None:
    price, rents, house, group = B4[square]
    s = online_board().squares[square]
    assert (s.price, s.rents, s.house_cost, s.group) == (price * 10, tuple(r * 10 for r in rents), house * 10, group)
    assert s.mortgage_value == price * 10 // 2


def test_B2_building_costs_by_group() -> None:
    board = online_board()
    costs = [board.squares[board.group_members(g)[0]].house_cost for g in range(1, 9)]
    assert costs == [500, 500, 1000, 1000, 1500, 1500, 2000, 2000]
    assert board.group_names[0] == "supermarkets" and board.group_names[7] == "tech"


def test_B2_railroads_and_utilities_times_ten() -> None:
    board = online_board()
    assert board.railroad_rents == (250, 500, 1000, 2000)
    assert board.utility_multipliers == (40, 100)
    assert {board.squares[i].price for i in (5, 15, 25, 35)} == {2000}
    assert {board.squares[i].price for i in (12, 28)} == {1500}


def test_B2_invented_names_one_per_square() -> None:
    board = online_board()
    names = [board.squares[i].name for i in board.purchasable]
    assert len(set(names)) == len(names) == 28
    classic_names = {"Boardwalk", "Park Place", "Mediterranean Ave", "Reading Railroad", "Water Works"}
    assert not classic_names & set(names)


def test_B1_a_board_must_have_forty_squares() -> None:
    board = online_board()
    with pytest.raises(ValueError, match="B1"):
        type(board)(board.name, board.squares[:39], board.railroad_rents, board.utility_multipliers, board.group_names)


def test_B2_the_classic_preset_uses_the_online_board() -> None:
    assert classic().board == online_board()
