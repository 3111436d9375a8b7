"""What a browser is shown of a table: the board, the players, the decision and its legal commands.

Pure functions of the engine state the gateway replicated from `WatchTable`: the
table stays the authority (every command the browser sends is decided there), the
gateway only tells the browser what the rules offer the seat now, so it can draw
buttons instead of guessing.
"""

from __future__ import annotations

from typing import Any

from engine import (
    SYSTEM_COMMANDS,
    Command,
    Leave,
    PlaceBet,
    RuleViolation,
    TableState,
    Tick,
    check,
    codec,
    legal_commands,
    pause_commands,
)
from engine.game import COMMAND_TYPES, EXTERNAL_COMMANDS, trade_window

#: Commands a browser may send: every player command of the engine (never a system command or a tick).
PLAYER_COMMANDS = frozenset(set(COMMAND_TYPES) - {c.__name__ for c in SYSTEM_COMMANDS} - {Tick.__name__})


def board(state: TableState) -> list[dict[str, Any]]:
    """The table's 40 squares, sent once per watch (they never change)."""
    cfg = state.config
    groups = cfg.board.group_names
    return [
        {
            "index": sq.index,
            "kind": sq.kind.value,
            "name": sq.name,
            "price": sq.price,
            "group": sq.group,
            "group_name": groups[sq.group - 1] if sq.group and sq.group <= len(groups) else "",
            "house_cost": sq.house_cost,
            "rents": list(sq.rents),
        }
        for sq in cfg.board.squares
    ]


def table_view(state: TableState) -> dict[str, Any]:
    """The live part of the table: money, ownership, buildings, tokens, the phase and whose move it is."""
    auction = state.auction
    trade = state.trade
    return {
        "seq": state.seq,
        "mode": state.config.mode,
        "ruleset": state.config.ruleset,
        "phase": state.phase.value,
        "actor": state.actor,
        "current": state.current,
        "round": state.round,
        "turn_no": state.turn_no,
        "dice": list(state.dice),
        "offer": state.offer,
        "finished": state.finished,
        "winner": state.winner,
        "end_reason": state.end_reason,
        "paused": state.paused,
        "pause_votes": list(state.pause_votes),
        "vote_open": state.vote_deadline >= 0,
        "jackpot": state.jackpot,
        "casino_open": state.casino,
        "external": list(state.config.external),
        "max_numbers": state.config.casino.max_numbers,
        "players": [
            {
                "seat": p.seat,
                "name": p.name,
                "cash": p.cash,
                "position": p.position,
                "in_jail": p.in_jail,
                "jail_cards": len(p.jail_cards),
                "bankrupt": p.bankrupt,
                "place": p.place,
                "properties": [i for i, owner in enumerate(state.owner) if owner == p.seat],
            }
            for p in state.players
        ],
        "owner": list(state.owner),
        "buildings": list(state.buildings),
        "mortgaged": [r >= 0 for r in state.mortgaged_round],
        "auction": None
        if auction is None
        else {
            "auction_id": auction.auction_id,
            "square": auction.square,
            "reason": auction.reason,
            "bidders": list(auction.bidders),
            "high_bid": auction.high_bid,
            "high_bidder": auction.high_bidder,
            "min_bid": auction.min_bid,
        },
        "trade": None if trade is None else codec.to_data(trade),
    }


def _data(command: Command) -> dict[str, Any]:
    data = codec.command_to_data(command)
    data.pop("seat", None)  # the gateway puts the token's seat in; the browser never says which seat
    return data


def legal(state: TableState, seat: int) -> list[dict[str, Any]]:
    """The commands `seat` may send now, as the browser sends them back (without the seat).

    The casino's many number combinations (K1) are one entry with `max_numbers`; moves a
    service takes (bids at an external auction: the browser reads the auction service's view)
    are left out; a trade proposal (T1/T6) is one entry when the window is open; leaving (R3)
    is the last entry while the seat plays.
    """
    if seat < 0 or state.finished:
        return []
    external: set[str] = set()
    for name in state.config.external:
        external |= {c.__name__ for c in EXTERNAL_COMMANDS.get(name, frozenset())}
    out: list[dict[str, Any]] = []
    bet = False
    for command in [*legal_commands(state, seat), *pause_commands(state, seat)]:
        if isinstance(command, PlaceBet):
            if not bet:
                out.append({"type": "PlaceBet", "numbers": [], "max_numbers": state.config.casino.max_numbers})
                bet = True
            continue
        name = type(command).__name__
        if name in external and name in ("Bid", "PassBid"):
            continue
        out.append(_data(command))
    try:
        trade_window(state, seat)
        out.append({"type": "ProposeTrade"})
    except RuleViolation:
        pass
    try:
        check(state, Leave(seat))  # R3: open to every active player at any time
        out.append({"type": "Leave"})
    except RuleViolation:
        pass
    return out


def event_data(seq: int, event: object) -> dict[str, Any]:
    return {"seq": seq, **codec.public_event_data(event)}  # type: ignore[arg-type]  # G10: no seed
