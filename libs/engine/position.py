"""Positions set up from readable data (G10): the applier of `PositionSet`.

The builder that turns readable data into these events is `engine.scenario`; this area only
applies the event, so a scenario replays through `evolve` like any game. It registers no command:
no player move sets a position.
"""

from __future__ import annotations

from .events import PositionSet
from .flow import ApplyFn, CheckFn, EffectFn
from .state import TableState


def _ev_position(s: TableState, e: PositionSet) -> None:
    held = sum(p.cash for p in s.players) + s.jackpot
    s.order = list(e.order)
    for seat, player in enumerate(s.players):
        player.cash = e.cash[seat]
        player.position = e.positions[seat]
        player.in_jail = e.in_jail[seat]
        player.jail_turns = e.jail_turns[seat]
        player.jail_cards = [
            card for card, holder in zip(e.jail_cards, e.jail_card_holders, strict=True) if holder == seat
        ]
    for place, seat in enumerate(e.bankrupt):
        s.players[seat].bankrupt = True
        s.players[seat].place = len(s.players) - place  # D5: the first out is last
    s.eliminated = list(e.bankrupt)
    s.owner = list(e.owners)
    s.buildings = list(e.buildings)
    s.mortgaged_round = list(e.mortgaged_round)
    s.deck = list(e.chance)
    s.chest = list(e.chest)
    s.rng_counter = e.rng_counter
    s.clock = e.clock
    s.jackpot = e.jackpot
    change = sum(e.cash) + e.jackpot - held  # the money set, booked with the bank
    if change >= 0:
        s.bank_out += change
    else:
        s.bank_in -= change


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {}

EVENTS: dict[type, ApplyFn] = {
    PositionSet: _ev_position,
}
