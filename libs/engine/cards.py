"""Chance and Community Chest cards as data (C1, C2, C4): an effect kind and its parameters,
no code per card.

A card's id is its index in its deck; Community Chest ids start at `CHEST_BASE`, so a kept
Get Out of Jail Free card names the deck it returns to (C3).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Final


class Effect(StrEnum):
    BANK_PAYS = "bank_pays"  # receive `amount` from the bank
    PAY_BANK = "pay_bank"  # pay `amount` to the bank
    COLLECT_EACH = "collect_each"  # every other active player pays `amount`
    PAY_EACH = "pay_each"  # pay `amount` to every other active player
    ADVANCE_TO = "advance_to"  # move forward to `target` (salary when passing start)
    GO_TO_JAIL = "go_to_jail"
    NEAREST_RAILROAD = "nearest_railroad"  # move on to it; owned: pay `multiplier` x rent
    NEAREST_UTILITY = "nearest_utility"  # move on to it; owned: pay dice x the higher multiplier
    NEAREST_UTILITY_THROW = "nearest_utility_throw"  # C1: the same, on a new throw of the dice
    BACK = "back"  # move back `amount` squares
    REPAIRS = "repairs"  # pay `amount` per house and `amount2` per hotel owned
    JAIL_FREE = "jail_free"  # kept until used, then back to the bottom of the deck
    DEMOLISH = "demolish"  # Duel: remove one building level from an opponent (issue of modes)


@dataclass(frozen=True, slots=True)
class Card:
    id: int
    text: str
    effect: Effect
    amount: int = 0
    amount2: int = 0
    target: int = -1
    multiplier: int = 1


#: C3: ids of Community Chest cards start here (chance ids are 0..n-1).
CHEST_BASE: Final = 100


@cache  # a value (a tuple of frozen cards): built once
def online_chance_deck() -> tuple[Card, ...]:
    """C4: the project's 20 chance cards, amounts in the x10 scale of C1-C2."""
    e = Effect
    return (
        Card(0, "Advance to Start", e.ADVANCE_TO, target=0),
        Card(1, "Go to Jail. Do not pass Start", e.GO_TO_JAIL),
        Card(2, "Take a trip to the Casino", e.ADVANCE_TO, target=20),
        Card(3, "Advance to Quantix", e.ADVANCE_TO, target=39),
        Card(4, "Advance to Cloudhop", e.ADVANCE_TO, target=24),
        Card(5, "Advance to Threadline", e.ADVANCE_TO, target=11),
        Card(6, "Advance to Ledger Bank", e.ADVANCE_TO, target=5),
        Card(7, "Advance to the nearest finance company; pay twice the rent", e.NEAREST_RAILROAD, multiplier=2),
        Card(8, "Advance to the nearest industry", e.NEAREST_UTILITY),
        Card(9, "Go back 3 squares", e.BACK, amount=3),
        Card(10, "Dividend: the bank pays you $500", e.BANK_PAYS, amount=500),
        Card(11, "Your building loan matures: collect $1,500", e.BANK_PAYS, amount=1500),
        Card(12, "Bank error in your favour: collect $2,000", e.BANK_PAYS, amount=2000),
        Card(13, "Speeding fine: pay $150", e.PAY_BANK, amount=150),
        Card(14, "Hospital fees: pay $1,000", e.PAY_BANK, amount=1000),
        Card(15, "Birthday: collect $100 from every player", e.COLLECT_EACH, amount=100),
        Card(16, "Chairman of the board: pay every player $500", e.PAY_EACH, amount=500),
        Card(17, "General repairs: $250 per branch, $1,000 per corporation", e.REPAIRS, amount=250, amount2=1000),
        Card(18, "Street repairs: $400 per branch, $1,150 per corporation", e.REPAIRS, amount=400, amount2=1150),
        Card(19, "Get Out of Jail Free", e.JAIL_FREE),
    )


@cache  # a value (a tuple of frozen cards): built once
def duel_chance_deck() -> tuple[Card, ...]:
    """C4 (Duel): the 20 cards and a 21st that destroys a building."""
    return (
        *online_chance_deck(),
        Card(20, "Demolition: remove one building level from an opponent's property", Effect.DEMOLISH),
    )


@cache  # a value (a tuple of frozen cards): built once
def hasbro_chance_deck() -> tuple[Card, ...]:
    """C1: the 16 Chance cards of the US classic game."""
    e = Effect
    return (
        Card(0, "Advance to Boardwalk", e.ADVANCE_TO, target=39),
        Card(1, "Advance to Go (Collect $200)", e.ADVANCE_TO, target=0),
        Card(2, "Advance to Illinois Avenue. If you pass Go, collect $200", e.ADVANCE_TO, target=24),
        Card(3, "Advance to St. Charles Place. If you pass Go, collect $200", e.ADVANCE_TO, target=11),
        Card(4, "Advance to the nearest Railroad; pay the owner twice the rental", e.NEAREST_RAILROAD, multiplier=2),
        Card(5, "Advance to the nearest Railroad; pay the owner twice the rental", e.NEAREST_RAILROAD, multiplier=2),
        Card(
            6,
            "Advance to the nearest Utility; if owned, throw dice and pay ten times the throw",
            e.NEAREST_UTILITY_THROW,
        ),
        Card(7, "Bank pays you dividend of $50", e.BANK_PAYS, amount=50),
        Card(8, "Get Out of Jail Free", e.JAIL_FREE),
        Card(9, "Go Back 3 Spaces", e.BACK, amount=3),
        Card(10, "Go to Jail. Do not pass Go, do not collect $200", e.GO_TO_JAIL),
        Card(11, "Make general repairs on all your property: $25 per house, $100 per hotel", e.REPAIRS, 25, 100),
        Card(12, "Speeding fine $15", e.PAY_BANK, amount=15),
        Card(13, "Take a trip to Reading Railroad. If you pass Go, collect $200", e.ADVANCE_TO, target=5),
        Card(14, "You have been elected Chairman of the Board. Pay each player $50", e.PAY_EACH, amount=50),
        Card(15, "Your building loan matures. Collect $150", e.BANK_PAYS, amount=150),
    )


@cache  # a value (a tuple of frozen cards): built once
def hasbro_chest_deck() -> tuple[Card, ...]:
    """C2: the 16 Community Chest cards of the US classic game (ids from `CHEST_BASE`)."""
    e = Effect
    b = CHEST_BASE
    return (
        Card(b + 0, "Advance to Go (Collect $200)", e.ADVANCE_TO, target=0),
        Card(b + 1, "Bank error in your favor. Collect $200", e.BANK_PAYS, amount=200),
        Card(b + 2, "Doctor's fee. Pay $50", e.PAY_BANK, amount=50),
        Card(b + 3, "From sale of stock you get $50", e.BANK_PAYS, amount=50),
        Card(b + 4, "Get Out of Jail Free", e.JAIL_FREE),
        Card(b + 5, "Go to Jail. Do not pass Go, do not collect $200", e.GO_TO_JAIL),
        Card(b + 6, "Holiday fund matures. Receive $100", e.BANK_PAYS, amount=100),
        Card(b + 7, "Income tax refund. Collect $20", e.BANK_PAYS, amount=20),
        Card(b + 8, "It is your birthday. Collect $10 from every player", e.COLLECT_EACH, amount=10),
        Card(b + 9, "Life insurance matures. Collect $100", e.BANK_PAYS, amount=100),
        Card(b + 10, "Pay hospital fees of $100", e.PAY_BANK, amount=100),
        Card(b + 11, "Pay school fees of $50", e.PAY_BANK, amount=50),
        Card(b + 12, "Receive $25 consultancy fee", e.BANK_PAYS, amount=25),
        Card(b + 13, "You are assessed for street repair: $40 per house, $115 per hotel", e.REPAIRS, 40, 115),
        Card(b + 14, "You have won second prize in a beauty contest. Collect $10", e.BANK_PAYS, amount=10),
        Card(b + 15, "You inherit $100", e.BANK_PAYS, amount=100),
    )
