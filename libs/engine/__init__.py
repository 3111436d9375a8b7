"""The rules engine: pure, deterministic, no I/O, no clock, no asyncio.

OpenSpiel-style API: `new_game` -> state and its first events;
`legal_commands(state, seat)`; `decide(state, command) -> events` (raises
`RuleViolation` with a rule ID); `evolve(state, event)`; `replay(events)`.
`apply` is `decide` + `evolve` in one pass, the fast path for simulation.
"""

from .auction import AuctionSettled, AuctionStarted, Bid, BidPassed, BidPlaced, PassBid
from .board import Board, Kind, Square
from .cards import Card, Effect
from .casino import BetDeclined, BetPlaced, BetSettled, CasinoOpened, DeclineBet, PlaceBet
from .commands import (
    Build,
    BuyProperty,
    Command,
    DeclineProperty,
    EndTurn,
    LiftMortgage,
    Mortgage,
    Pay,
    PayJailFine,
    Roll,
    SellBuilding,
    Surrender,
    UseJailCard,
)
from .config import PRESETS, TableConfig, classic, preset
from .errors import RuleViolation
from .events import *  # noqa: F403 - the event vocabulary is the public API
from .events import Event
from .game import COMMAND_TYPES, EVENT_TYPES, apply, check, decide, evolve, legal_commands, new_game, rent, replay
from .invariants import InvariantBroken, check_invariants
from .state import BANK, AuctionState, Payment, Phase, PlayerState, TableState, TradeOffer
from .trade import AcceptTrade, DeclineTrade, ProposeTrade, TradeDeclined, TradeExecuted, TradeProposed

__all__ = [
    "BANK", "COMMAND_TYPES", "EVENT_TYPES", "PRESETS",
    "AcceptTrade", "AuctionSettled", "AuctionStarted", "AuctionState", "BetDeclined", "BetPlaced",
    "BetSettled", "Bid", "BidPassed", "BidPlaced", "Board", "Build", "BuyProperty", "Card", "CasinoOpened",
    "Command", "DeclineBet", "DeclineProperty", "DeclineTrade", "Effect", "EndTurn", "Event",
    "InvariantBroken", "Kind", "LiftMortgage", "Mortgage", "PassBid", "Pay", "PayJailFine", "Payment",
    "Phase", "PlaceBet", "PlayerState", "ProposeTrade", "Roll", "RuleViolation", "SellBuilding", "Square",
    "Surrender", "TableConfig", "TableState", "TradeDeclined", "TradeExecuted", "TradeOffer",
    "TradeProposed", "UseJailCard",
    "apply", "check", "check_invariants", "classic", "decide", "evolve", "legal_commands", "new_game",
    "preset", "rent", "replay",
]
