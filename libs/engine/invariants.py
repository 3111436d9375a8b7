"""Invariants the tests check after every event (DESIGN: money, owners, buildings, seq)."""

from __future__ import annotations

from .board import Kind
from .cards import Effect as CardEffect
from .state import BANK, TableState


class InvariantBroken(AssertionError):
    pass


def check_invariants(state: TableState, events_applied: int | None = None) -> None:
    """Raise `InvariantBroken` naming the first invariant `state` breaks."""
    cfg = state.config
    board = cfg.board
    players = state.players

    def fail(msg: str) -> None:
        raise InvariantBroken(f"seq {state.seq}: {msg}")

    # Money is conserved against the bank ledger.
    held = sum(p.cash for p in players) + state.jackpot
    issued = cfg.starting_cash * len(players) + state.bank_out - state.bank_in
    if held != issued:
        fail(f"money: players + pool hold {held}, the ledger says {issued}")
    for p in players:
        if p.cash < 0:
            fail(f"seat {p.seat} has negative cash {p.cash}")
        if p.bankrupt and (p.cash or p.jail_cards or any(o == p.seat for o in state.owner)):
            fail(f"bankrupt seat {p.seat} still holds assets")
    if state.jackpot < 0:
        fail("negative jackpot pool")
    # D4: the properties waiting for their bank auction are the bank's.
    if any(state.owner[sq] != BANK for sq in state.auction_queue):
        fail(f"a square waiting for its D4 auction is owned: {list(state.auction_queue)}")
    # D5: a finished game owes nothing more (a payment left pending would have a timer on a game that is over).
    if state.finished and state.payments:
        fail(f"the game is over with {len(state.payments)} payments pending")

    # At most one owner per property, and only active players own.
    for sq, square in enumerate(board.squares):
        owner = state.owner[sq]
        if owner != BANK and (not square.purchasable or players[owner].bankrupt):
            fail(f"square {sq} owned by {owner}")
        if state.mortgaged_round[sq] >= 0 and owner == BANK:
            fail(f"square {sq} mortgaged but unowned")
        level = state.buildings[sq]
        if level and (square.kind is not Kind.PROPERTY or not 0 < level <= 5):
            fail(f"square {sq} has {level} buildings")

    # Buildings only on whole unmortgaged groups, even where required.
    for group in range(1, len(board.members)):
        members = board.members[group]
        levels = [state.buildings[sq] for sq in members]
        if not any(levels):
            continue
        owners = {state.owner[sq] for sq in members}
        if len(owners) != 1 or BANK in owners:
            fail(f"group {group} has buildings but {len(owners)} owners")
        if any(state.mortgaged_round[sq] >= 0 for sq in members):
            fail(f"group {group} has buildings and a mortgage")
        hotel = cfg.hotel_after_houses + 1  # H3: a hotel stands one step above the last house
        ranks = [hotel if level == 5 else level for level in levels]
        if cfg.even_build and max(ranks) - min(ranks) > 1:
            fail(f"group {group} built unevenly: {levels}")
        if any(cfg.hotel_after_houses < level < 5 for level in levels):
            fail(f"group {group} has more houses than a hotel needs: {levels}")

    # P10: never more houses and hotels on the board (or won and not yet placed) than the bank had.
    if cfg.house_supply is not None and state.bank_houses() < 0:
        fail(f"{cfg.house_supply - state.bank_houses()} houses out, the bank had {cfg.house_supply}")
    if cfg.hotel_supply is not None and state.bank_hotels() < 0:
        fail(f"{cfg.hotel_supply - state.bank_hotels()} hotels out, the bank had {cfg.hotel_supply}")

    # Cards: the piles and the held cards never hold a card twice; C3: nor lose one.
    cards = list(state.deck) + list(state.chest) + [c for p in players for c in p.jail_cards]
    if len(cards) != len(set(cards)):
        fail("a card is in two places")
    in_hand = {c for p in players for c in p.jail_cards}
    if in_hand:  # C1, C2: only a Get Out of Jail Free card is kept in hand
        keepable = {c.id for c in (*cfg.chance_deck, *cfg.chest_deck) if c.effect is CardEffect.JAIL_FREE}
        if in_hand - keepable:
            fail(f"cards {sorted(in_hand - keepable)} are held, and only Get Out of Jail Free cards are kept")
    if cfg.cards_to_bottom:
        every = sorted(c.id for c in (*cfg.chance_deck, *cfg.chest_deck))
        if sorted(cards) != every:
            fail("a card is missing from its deck and from the players' hands")

    if events_applied is not None and state.seq != events_applied:
        fail(f"seq {state.seq} but {events_applied} events applied")
