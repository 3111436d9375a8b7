"""Engine events and commands <-> their protobuf messages (proto/monopoly/v1).

The messages are generated from the engine's dataclasses (tools/gen_proto.py)
with the same field names, so one generic mapping serves every type; a
nested value (the config of `TableCreated`) travels as canonical JSON.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from functools import cache
from typing import Any

from google.protobuf.message import Message

from engine import COMMAND_TYPES, EVENT_TYPES, Command, Event, ProposeTrade, codec
from monopoly.v1 import commands_pb2, common_pb2, events_pb2, trade_pb2

from .errors import BadRequest

#: The envelope's `schema_version`: the lock's (proto/monopoly/v1/field_numbers.json), which moves
#: with every field or type the schema gains or loses; a test keeps the two equal.
SCHEMA_VERSION = 3
#: The first version whose field numbers are frozen. Events below it were numbered by the
#: alphabetical order of the types at the time and cannot be read reliably (docs/SCHEMA.md).
MIN_SCHEMA_VERSION = 2


class SchemaMismatch(BadRequest):
    """An envelope this reader cannot decode faithfully: written before the numbers were frozen."""


def check_envelope(env: common_pb2.Envelope) -> None:
    """Refuse an envelope from before the frozen numbering; a newer one is fine (new fields are
    ignored, a new event type fails `event_from_proto` with `BadRequest`)."""
    if env.schema_version < MIN_SCHEMA_VERSION:
        raise SchemaMismatch(
            f"event {env.event_id} has schema version {env.schema_version}: numbered before the "
            f"schema was frozen (version {MIN_SCHEMA_VERSION}), it cannot be decoded reliably"
        )


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


@cache
def _fields(cls: Any) -> tuple[tuple[str, str, Any], ...]:
    """(dataclass field, proto field, how) for each field: how is 'scalar', 'repeated' or a JSON type."""
    hints = codec.field_types(cls)  # from the source: the native build erases runtime annotations
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints[f.name]
        if tp in (int, str, bool, float):
            out.append((f.name, f.name, "scalar"))
        elif typing.get_origin(tp) is tuple:
            out.append((f.name, f.name, "repeated"))
        else:
            out.append((f.name, f.name + "_json", tp))
    return tuple(out)


def _fill(msg: Message, value: Any) -> None:
    for name, proto_name, how in _fields(type(value)):  # type: ignore[arg-type]
        v = getattr(value, name)
        if how == "scalar":
            setattr(msg, proto_name, v)
        elif how == "repeated":
            getattr(msg, proto_name).extend(v)
        else:
            setattr(msg, proto_name, codec.dumps(codec.to_data(v)))


def _read(cls: type, msg: Message) -> Any:
    kwargs: dict[str, Any] = {}
    for name, proto_name, how in _fields(cls):
        v = getattr(msg, proto_name)
        if how == "scalar":
            kwargs[name] = v
        elif how == "repeated":
            kwargs[name] = tuple(v)
        else:
            kwargs[name] = codec.from_data(how, json.loads(v))
    return cls(**kwargs)


def _pack(payload: Message, value: Any) -> Message:
    message = getattr(payload, _snake(type(value).__name__))
    message.SetInParent()  # a value whose fields are all defaults must still select its oneof case
    _fill(message, value)
    return payload


def _unpack(payload: Message, registry: dict[str, type], what: str) -> Any:
    kind = payload.WhichOneof("kind")
    if kind is None:
        raise BadRequest(f"the message carries no {what}")
    message = getattr(payload, kind)
    cls = registry.get(message.DESCRIPTOR.name)
    if cls is None:  # a type of a newer schema this reader's engine does not have
        raise BadRequest(f"unknown {what} type {message.DESCRIPTOR.name}")
    return _read(cls, message)


def event_to_proto(event: Event) -> events_pb2.EventPayload:
    return _pack(events_pb2.EventPayload(), event)  # type: ignore[no-any-return]


def event_from_proto(payload: events_pb2.EventPayload) -> Event:
    return _unpack(payload, EVENT_TYPES, "event")  # type: ignore[no-any-return]


def command_to_proto(command: Command) -> commands_pb2.CommandPayload:
    return _pack(commands_pb2.CommandPayload(), command)  # type: ignore[no-any-return]


def command_from_proto(payload: commands_pb2.CommandPayload) -> Command:
    """A command from the wire; an empty payload is a `BadRequest`."""
    return _unpack(payload, COMMAND_TYPES, "command")  # type: ignore[no-any-return]


def envelope(table_id: str, seq: int, event: Event, game_ms: int, scale: int, wall_ms: int) -> common_pb2.Envelope:
    return common_pb2.Envelope(
        event_id=f"{table_id}:{seq}",
        table_id=table_id,
        seq=seq,
        type=type(event).__name__,
        occurred_at=common_pb2.OccurredAt(game_ms=game_ms, clock_scale=scale, wall_unix_ms=wall_ms),
        schema_version=SCHEMA_VERSION,
        payload=event_to_proto(event),
    )


def trade_terms(command: ProposeTrade) -> trade_pb2.TradeTerms:
    """The terms of a proposal as the trade service takes them (`ProposeTradeRequest.terms`)."""
    return trade_pb2.TradeTerms(
        counterparty=command.counterparty,
        give_cash=command.give_cash,
        give_squares=list(command.give_squares),
        take_cash=command.take_cash,
        take_squares=list(command.take_squares),
        give_cards=list(command.give_cards),
        take_cards=list(command.take_cards),
    )
