"""The codec's field types come from the sources: the same with or without the native build."""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pytest

from engine import COMMAND_TYPES, EVENT_TYPES, codec, native
from engine.auction import AuctionStarted
from engine.board import Board, Square
from engine.config import TableConfig
from engine.state import AuctionState, Payment, PlayerState, TableState, TradeOffer

CLASSES = [
    *EVENT_TYPES.values(),
    *COMMAND_TYPES.values(),
    TableState,
    PlayerState,
    AuctionState,
    TradeOffer,
    Payment,
    TableConfig,
    Board,
    Square,
]


def test_field_types_are_the_declared_generic_types() -> None:
    assert codec.field_types(EVENT_TYPES["TurnOrderSet"]) == {"order": tuple[int, ...]}
    assert codec.field_types(AuctionStarted)["limits"] == tuple[int, ...]
    hints = codec.field_types(TableState)
    assert hints["dice"] == tuple[int, int]
    assert hints["players"] == list[PlayerState]
    assert hints["auction"] == AuctionState | None
    assert hints["config"] is TableConfig
    assert codec.field_types(Board)["members"] == tuple[tuple[int, ...], ...]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_field_has_its_type(cls: type) -> None:
    hints = codec.field_types(cls)
    assert {f.name for f in dataclasses.fields(cls)} <= set(hints)
    assert "_evolve" not in hints  # a ClassVar is no field


@pytest.mark.skipif(native.is_compiled(), reason="the native build erases runtime annotations")
@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_field_types_agree_with_the_runtime_annotations(cls: type) -> None:
    hints = typing.get_type_hints(cls)
    assert {f.name: codec.field_types(cls)[f.name] for f in dataclasses.fields(cls)} == {
        f.name: hints[f.name] for f in dataclasses.fields(cls)
    }


OWN_INIT = [cls for cls in CLASSES if not cls.__dataclass_params__.init]  # type: ignore[attr-defined]


def test_the_hot_events_have_their_own_constructors() -> None:
    assert {"DiceRolled", "Moved", "TurnStarted", "PaymentDue", "Payment"} <= {cls.__name__ for cls in OWN_INIT}


@pytest.mark.skipif(native.is_compiled(), reason="the native build's signatures are not introspectable")
@pytest.mark.parametrize("cls", OWN_INIT, ids=lambda cls: cls.__name__)
def test_an_own_constructor_takes_the_fields_in_order_with_their_defaults(cls: type) -> None:
    """A class that writes its `__init__` (see engine.events.Event) takes what `dataclass` would."""
    params = list(inspect.signature(cls).parameters.values())
    assert [(p.name, p.default) for p in params] == [
        (f.name, inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(cls)
    ]
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)
    names = [f.name for f in dataclasses.fields(cls)]
    made = cls(*range(len(names)))  # every field set, in order
    assert [getattr(made, name) for name in names] == list(range(len(names)))
