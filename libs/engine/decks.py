"""Cards (C): drawing from the chance and community chest decks and carrying the card out.

Rules owned here: C1, C2 (hasbro) the printed Chance and Community Chest
effects, C1's utility throw (`DiceThrown`); C3 a drawn card to the bottom of
its deck, a kept jail card back when used; C4 (online) the shuffled chance
deck, reshuffled when empty, and Duel's demolition card (`Demolish`); C5 a
card payment one cannot cover starts debt resolution (`flow.charge`). The
cards themselves are data (cards.py); a used jail card is J2's (jail.py).
"""

from __future__ import annotations

from typing import Final

from . import rng
from .board import Kind
from .cards import CHEST_BASE, Effect
from .commands import Demolish
from .errors import RuleViolation
from .events import (
    BankPaid,
    BuildingDemolished,
    CardDrawn,
    ChoiceOffered,
    DeckShuffled,
    DiceThrown,
    Moved,
    PaymentDue,
    SentToJail,
)
from .flow import (
    ONLY_CHOICE,
    ApplyFn,
    CheckFn,
    Ctx,
    EffectFn,
    actor,
    bankrupt,
    charge,
    deck_ids,
    demolition_targets,
    end_turn,
    land,
    move_to,
    nearest,
    others,
    reshuffle_if_empty,
)
from .reasons import BankPaidReason, ChoiceKind, JailReason, PaymentReason
from .state import BANK, TableState

_JAIL_FREE: Final = Effect.JAIL_FREE
_UTILITY_THROW: Final = Effect.NEAREST_UTILITY_THROW


def shuffle_decks(ctx: Ctx) -> None:
    """C1, C2, C4: the decks shuffled at the start (the chest only where there is one)."""
    state = ctx.state
    config = state.config
    ctx.emit(DeckShuffled("chance", rng.shuffled(deck_ids(config), state.rng_seed, state.rng_counter)))
    if config.chest_deck:  # C2
        chest = tuple(card.id for card in config.chest_deck)
        ctx.emit(DeckShuffled("chest", rng.shuffled(chest, state.rng_seed, state.rng_counter)))


def draw_card(ctx: Ctx, seat: int, deck: str) -> None:
    state = ctx.state
    cfg = state.config
    chance = deck == "chance"
    reshuffle_if_empty(ctx, deck)  # C4: reshuffled when empty (kept jail cards stay out)
    card = cfg.chance_deck[state.deck[0]] if chance else cfg.chest_deck[state.chest[0] - CHEST_BASE]
    ctx.emit(CardDrawn(seat, deck, card.id))
    here = state.players[seat].position  # the card's square: where its payments arise
    effect = card.effect
    if effect is Effect.BANK_PAYS:
        ctx.emit(BankPaid(seat, card.amount, BankPaidReason.CARD))
    elif effect is Effect.PAY_BANK:
        charge(ctx, seat, BANK, card.amount, PaymentReason.CARD, here)
    elif effect is Effect.COLLECT_EACH:
        for other in others(state, seat):
            if state.finished or state.players[seat].bankrupt:  # D5, H3/H4, X4: a payer's bankruptcy ended
                break  # the game, or (M4) the fees on what it passed to the drawer bankrupted the drawer
            charge(ctx, other, seat, card.amount, PaymentReason.CARD, here)
    elif effect is Effect.PAY_EACH:
        payees = others(state, seat)
        if state.raisable(seat) < card.amount * len(payees):
            bankrupt(ctx, seat, BANK)  # decision: several creditors -> bankrupt to the bank
            return
        for other in payees:
            ctx.emit(PaymentDue(seat, other, card.amount, PaymentReason.CARD, square=here))
    elif effect is Effect.ADVANCE_TO:
        move_to(ctx, seat, card.target)
        land(ctx, seat)
    elif effect is Effect.GO_TO_JAIL:
        ctx.emit(SentToJail(seat, JailReason.CARD))
        end_turn(ctx)
    elif effect is Effect.NEAREST_RAILROAD or effect is Effect.NEAREST_UTILITY or effect is _UTILITY_THROW:
        kind = Kind.RAILROAD if effect is Effect.NEAREST_RAILROAD else Kind.UTILITY
        move_to(ctx, seat, nearest(state, state.players[seat].position, kind))
        land(ctx, seat, card)
    elif effect is Effect.BACK:
        start = state.players[seat].position
        ctx.emit(Moved(seat, start, (start - card.amount) % 40))
        land(ctx, seat)
    elif effect is Effect.REPAIRS:
        houses = hotels = 0
        for sq in cfg.board.purchasable:
            if state.owner[sq] == seat:
                level = state.buildings[sq]
                if level == 5:
                    hotels += 1
                else:
                    houses += level
        charge(ctx, seat, BANK, houses * card.amount + hotels * card.amount2, PaymentReason.REPAIRS, here)
    elif effect is Effect.DEMOLISH and demolition_targets(state, seat):
        ctx.emit(ChoiceOffered(seat, ChoiceKind.DEMOLISH))
    # JAIL_FREE: kept by the drawer (evolve); nothing else happens.


def _check_demolish(state: TableState, cmd: Demolish) -> None:
    actor(state, cmd.seat, ONLY_CHOICE, rule="C4")
    if state.choice != "demolish":
        raise RuleViolation("C4", "no demolition to choose")
    if cmd.square not in demolition_targets(state, cmd.seat):
        raise RuleViolation("C4", "choose an opponent's property with a building")


def do_demolish(ctx: Ctx, cmd: Demolish) -> None:
    ctx.emit(BuildingDemolished(cmd.seat, cmd.square, ctx.state.buildings[cmd.square] - 1))


def _ev_deck(s: TableState, e: DeckShuffled) -> None:
    if e.deck == "chance":
        s.deck = list(e.cards)
    else:
        s.chest = list(e.cards)
    s.rng_counter += rng.shuffle_draws(len(e.cards))


def _ev_card(s: TableState, e: CardDrawn) -> None:
    card_id = e.card
    if e.deck == "chance":
        pile = s.deck
        card = s.config.chance_deck[card_id]
    else:
        pile = s.chest
        card = s.config.chest_deck[card_id - CHEST_BASE]
    # The drawn card by its id, not the pile's first: at the table they are the same card, and a client's
    # replica, which is never shown the piles' order (G10, `codec.public_state_data`), holds it elsewhere.
    pile.remove(card_id)
    if card.effect is _JAIL_FREE:
        s.players[e.seat].jail_cards.append(card_id)
    elif s.config.cards_to_bottom:  # C3: to the bottom of its deck
        pile.append(card_id)


def _ev_dice_thrown(s: TableState, e: DiceThrown) -> None:
    s.rng_counter += 2
    s.throw = e.d1 + e.d2


def _ev_demolished(s: TableState, e: BuildingDemolished) -> None:
    s.choice = ""
    s.buildings[e.square] = e.level


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    Demolish: (_check_demolish, do_demolish),
}

EVENTS: dict[type, ApplyFn] = {
    DeckShuffled: _ev_deck,
    CardDrawn: _ev_card,
    DiceThrown: _ev_dice_thrown,
    BuildingDemolished: _ev_demolished,
}
