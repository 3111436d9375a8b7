"""`TableState.copy`: every field copied, nothing mutable shared (the table service decides on copies)."""

from __future__ import annotations

import dataclasses
from typing import Any

from engine import TableState, classic, hasbro, new_game
from engine.reasons import AuctionReason, PaymentReason
from engine.state import AuctionState, Payment, TradeOffer


def _other_than(name: str, value: Any, state: TableState) -> Any:
    """A value of the field's kind that differs from `value` (its default)."""
    match value:
        case bool():
            return not value
        case int():
            return value + 7
        case str():
            return value + "x"
        case tuple():
            return (*value, 1, 2, 3, 4) if name == "claim" else (value[0] + 1, value[1] + 2)
        case list():
            extra: dict[str, Any] = {
                "payments": Payment(0, 1, 50, PaymentReason.RENT, deadline=9),
                "won_buildings": (1, 5),
            }
            return [*value, extra.get(name, 3)]
        case None if name == "auction":
            return AuctionState(4, 39, AuctionReason.DECLINED, [0, 1], [False, True], 1, 10, 1, high_bid=20)
        case None if name == "trade":
            return TradeOffer(2, 0, 1, 100, (1,), 0, (3,))
    raise AssertionError(f"no other value for {name}={value!r}: extend the test for the new field's type")


def test_copy_holds_every_field_and_shares_nothing_mutable() -> None:
    state, _ = new_game(classic(), ["A", "B", "C"], seed=5)
    for f in dataclasses.fields(TableState):
        if f.name in ("config", "seed", "rng_seed", "rng_counter", "players", "order", "owner"):
            continue  # no default: the constructor needs them, so a copy cannot leave them out
        setattr(state, f.name, _other_than(f.name, getattr(state, f.name), state))
    state.config = hasbro()  # not the default's config either

    twin = state.copy()

    assert twin == state
    for f in dataclasses.fields(TableState):
        value = getattr(state, f.name)
        if isinstance(value, list):
            assert getattr(twin, f.name) is not value, f.name
    assert all(a is not b for a, b in zip(twin.players, state.players, strict=True))
    assert all(a is not b for a, b in zip(twin.payments, state.payments, strict=True))
    assert twin.auction is not None and state.auction is not None
    assert twin.auction is not state.auction and twin.auction.bidders is not state.auction.bidders
    twin.players[0].cash += 1
    twin.payments[-1].deadline += 1
    twin.auction.out[0] = True
    assert (state.players[0].cash, state.payments[-1].deadline, state.auction.out[0]) == (
        twin.players[0].cash - 1,
        9,
        False,
    )
