"""Board data: the 40 squares of a rule set (B1-B4), as plain values.

The hasbro board (B3, B4) is the US classic board; the online board (B2) is
the same board with every amount x10, brand-like names (one theme per colour
group), six chance squares and the casino at 20.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache


class Kind(StrEnum):
    START = "start"
    PROPERTY = "property"
    RAILROAD = "railroad"  # online: finance company
    UTILITY = "utility"  # online: industry
    CHANCE = "chance"
    CHEST = "chest"
    TAX = "tax"
    JAIL = "jail"
    CASINO = "casino"  # online corner 20; hasbro: free parking
    FREE_PARKING = "free_parking"
    GO_TO_JAIL = "go_to_jail"


PURCHASABLE = frozenset({Kind.PROPERTY, Kind.RAILROAD, Kind.UTILITY})


@dataclass(frozen=True, slots=True)
class Square:
    index: int
    kind: Kind
    name: str
    price: int = 0
    #: Rent with 0..4 houses and with a hotel (properties only).
    rents: tuple[int, ...] = ()
    house_cost: int = 0
    #: Colour group number 1..8 for properties, 0 otherwise.
    group: int = 0
    #: Amount of a tax square.
    tax: int = 0

    @property
    def purchasable(self) -> bool:
        return self.kind in PURCHASABLE

    @property
    def mortgage_value(self) -> int:
        return self.price // 2


@dataclass(frozen=True, slots=True)
class Board:
    name: str
    squares: tuple[Square, ...]
    #: Railroad rent by number owned (1..4).
    railroad_rents: tuple[int, ...]
    #: Utility rent multiplier of the dice sum by number owned (1..2).
    utility_multipliers: tuple[int, ...]
    #: Display names of the colour groups, index = group number - 1.
    group_names: tuple[str, ...]
    # Derived in __post_init__ (not part of the data): members per group, purchasable squares.
    members: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    purchasable: tuple[int, ...] = field(init=False, repr=False, compare=False)
    railroads: tuple[int, ...] = field(init=False, repr=False, compare=False)
    utilities: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.squares) != 40 or any(s.index != i for i, s in enumerate(self.squares)):
            raise ValueError("B1: a board has 40 squares indexed 0..39")
        groups = max(s.group for s in self.squares)
        members = tuple(
            tuple(s.index for s in self.squares if s.group == g and s.kind is Kind.PROPERTY) for g in range(groups + 1)
        )
        object.__setattr__(self, "members", members)
        object.__setattr__(self, "purchasable", tuple(s.index for s in self.squares if s.purchasable))
        object.__setattr__(self, "railroads", self.of_kind(Kind.RAILROAD))
        object.__setattr__(self, "utilities", self.of_kind(Kind.UTILITY))

    def group_members(self, group: int) -> tuple[int, ...]:
        return self.members[group]

    def of_kind(self, kind: Kind) -> tuple[int, ...]:
        return tuple(s.index for s in self.squares if s.kind is kind)


# (square, classic name, price, rents, house cost, group) -- B4, hasbro amounts.
_CLASSIC_PROPERTIES: tuple[tuple[int, str, int, tuple[int, ...], int, int], ...] = (
    (1, "Mediterranean Ave", 60, (2, 10, 30, 90, 160, 250), 50, 1),
    (3, "Baltic Ave", 60, (4, 20, 60, 180, 320, 450), 50, 1),
    (6, "Oriental Ave", 100, (6, 30, 90, 270, 400, 550), 50, 2),
    (8, "Vermont Ave", 100, (6, 30, 90, 270, 400, 550), 50, 2),
    (9, "Connecticut Ave", 120, (8, 40, 100, 300, 450, 600), 50, 2),
    (11, "St. Charles Place", 140, (10, 50, 150, 450, 625, 750), 100, 3),
    (13, "States Ave", 140, (10, 50, 150, 450, 625, 750), 100, 3),
    (14, "Virginia Ave", 160, (12, 60, 180, 500, 700, 900), 100, 3),
    (16, "St. James Place", 180, (14, 70, 200, 550, 750, 950), 100, 4),
    (18, "Tennessee Ave", 180, (14, 70, 200, 550, 750, 950), 100, 4),
    (19, "New York Ave", 200, (16, 80, 220, 600, 800, 1000), 100, 4),
    (21, "Kentucky Ave", 220, (18, 90, 250, 700, 875, 1050), 150, 5),
    (23, "Indiana Ave", 220, (18, 90, 250, 700, 875, 1050), 150, 5),
    (24, "Illinois Ave", 240, (20, 100, 300, 750, 925, 1100), 150, 5),
    (26, "Atlantic Ave", 260, (22, 110, 330, 800, 975, 1150), 150, 6),
    (27, "Ventnor Ave", 260, (22, 110, 330, 800, 975, 1150), 150, 6),
    (29, "Marvin Gardens", 280, (24, 120, 360, 850, 1025, 1200), 150, 6),
    (31, "Pacific Ave", 300, (26, 130, 390, 900, 1100, 1275), 200, 7),
    (32, "North Carolina Ave", 300, (26, 130, 390, 900, 1100, 1275), 200, 7),
    (34, "Pennsylvania Ave", 320, (28, 150, 450, 1000, 1200, 1400), 200, 7),
    (37, "Park Place", 350, (35, 175, 500, 1100, 1300, 1500), 200, 8),
    (39, "Boardwalk", 400, (50, 200, 600, 1400, 1700, 2000), 200, 8),
)

# B2: one brand-like theme per colour group.
_ONLINE_NAMES: dict[int, str] = {
    1: "FreshMart",
    3: "GrocerGo",  # supermarkets
    6: "BeanBrew",
    8: "Roastery Row",
    9: "Cuppa Club",  # coffee
    11: "Threadline",
    13: "Stitch & Co",
    14: "Vogueva",  # fashion
    16: "BurgerBay",
    18: "Pizzaroo",
    19: "Taco Tide",  # fast food
    21: "SkyLark Air",
    23: "AeroNimbus",
    24: "Cloudhop",  # airlines
    26: "Motorra",
    27: "Velocar",
    29: "Autovia",  # car makers
    31: "Broadcastly",
    32: "Newsbyte",
    34: "Reelhouse",  # media
    37: "Nexabyte",
    39: "Quantix",  # tech
    5: "Ledger Bank",
    15: "Pinnacle Credit",
    25: "Northgate Capital",
    35: "Union Trust",
    12: "Voltworks Energy",
    28: "AquaPure Water",
}
_ONLINE_GROUPS = (
    "supermarkets",
    "coffee",
    "fashion",
    "fast food",
    "airlines",
    "car makers",
    "media",
    "tech",
)


@cache  # a value: every table shares the one board (building it cost ~5k instructions a turn)
def online_board() -> Board:
    """B2: the classic board x10 with the online corners and six chance squares."""
    k = 10
    squares: dict[int, Square] = {}
    for idx, _, price, rents, house, group in _CLASSIC_PROPERTIES:
        squares[idx] = Square(
            idx, Kind.PROPERTY, _ONLINE_NAMES[idx], price * k, tuple(r * k for r in rents), house * k, group
        )
    for idx in (5, 15, 25, 35):
        squares[idx] = Square(idx, Kind.RAILROAD, _ONLINE_NAMES[idx], 200 * k)
    for idx in (12, 28):
        squares[idx] = Square(idx, Kind.UTILITY, _ONLINE_NAMES[idx], 150 * k)
    for idx in (2, 7, 17, 22, 33, 36):
        squares[idx] = Square(idx, Kind.CHANCE, "Chance")
    squares[0] = Square(0, Kind.START, "Start")
    squares[4] = Square(4, Kind.TAX, "Income Tax", tax=200 * k)
    squares[10] = Square(10, Kind.JAIL, "Jail")
    squares[20] = Square(20, Kind.CASINO, "Casino")
    squares[30] = Square(30, Kind.GO_TO_JAIL, "Go to Jail")
    squares[38] = Square(38, Kind.TAX, "Luxury Tax", tax=100 * k)
    return Board(
        name="online",
        squares=tuple(squares[i] for i in range(40)),
        railroad_rents=(25 * k, 50 * k, 100 * k, 200 * k),
        utility_multipliers=(4 * k, 10 * k),
        group_names=_ONLINE_GROUPS,
    )


_CLASSIC_GROUPS = ("brown", "light blue", "pink", "orange", "red", "yellow", "green", "dark blue")
_RAILROAD_NAMES = {5: "Reading Railroad", 15: "Pennsylvania Railroad", 25: "B. & O. Railroad", 35: "Short Line"}


@cache  # a value: every hasbro table shares the one board
def hasbro_board() -> Board:
    """B3, B4: the US classic board with the hasbro amounts."""
    squares: dict[int, Square] = {}
    for idx, name, price, rents, house, group in _CLASSIC_PROPERTIES:
        squares[idx] = Square(idx, Kind.PROPERTY, name, price, rents, house, group)
    for idx, name in _RAILROAD_NAMES.items():
        squares[idx] = Square(idx, Kind.RAILROAD, name, 200)
    squares[12] = Square(12, Kind.UTILITY, "Electric Company", 150)
    squares[28] = Square(28, Kind.UTILITY, "Water Works", 150)
    for idx in (7, 22, 36):
        squares[idx] = Square(idx, Kind.CHANCE, "Chance")
    for idx in (2, 17, 33):
        squares[idx] = Square(idx, Kind.CHEST, "Community Chest")
    squares[0] = Square(0, Kind.START, "GO")
    squares[4] = Square(4, Kind.TAX, "Income Tax", tax=200)
    squares[10] = Square(10, Kind.JAIL, "Jail / Just Visiting")
    squares[20] = Square(20, Kind.FREE_PARKING, "Free Parking")
    squares[30] = Square(30, Kind.GO_TO_JAIL, "Go To Jail")
    squares[38] = Square(38, Kind.TAX, "Luxury Tax", tax=100)
    return Board(
        name="hasbro",
        squares=tuple(squares[i] for i in range(40)),
        railroad_rents=(25, 50, 100, 200),
        utility_multipliers=(4, 10),
        group_names=_CLASSIC_GROUPS,
    )
