"""Chance cards as data (C4): an effect kind and its parameters, no code per card."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache


class Effect(StrEnum):
    BANK_PAYS = "bank_pays"  # receive `amount` from the bank
    PAY_BANK = "pay_bank"  # pay `amount` to the bank
    COLLECT_EACH = "collect_each"  # every other active player pays `amount`
    PAY_EACH = "pay_each"  # pay `amount` to every other active player
    ADVANCE_TO = "advance_to"  # move forward to `target` (salary when passing start)
    GO_TO_JAIL = "go_to_jail"
    NEAREST_RAILROAD = "nearest_railroad"  # move on to it; owned: pay `multiplier` x rent
    NEAREST_UTILITY = "nearest_utility"  # move on to it; owned: pay dice x the higher multiplier
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
