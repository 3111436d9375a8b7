"""The published schema: generated from the engine, committed, and never stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bots import HeuristicBot
from engine import COMMAND_TYPES, EVENT_TYPES, Roll, apply, classic, new_game
from monopoly.v1 import commands_pb2, events_pb2
from servicekit.wire import command_from_proto, command_to_proto, event_from_proto, event_to_proto

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import gen_proto  # noqa: E402


def test_proto_files_match_the_engine() -> None:
    """Generated under the committed lock: a new field or type shows up as a stale file (and lock)."""
    _lock, files = gen_proto.generate(gen_proto.load_lock())
    for path, text in files.items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} is stale: run `make proto`"


def test_every_event_and_field_is_documented() -> None:
    """docs/SCHEMA-REFERENCE.md and the proto comments: each event says what it is and which rule emits it."""
    import re

    text = (ROOT / "proto" / "monopoly" / "v1" / "events.proto").read_text().splitlines()
    for i, line in enumerate(text):
        declaration = r"(message \w+ \{|enum \w+ \{|  (repeated |optional )?\w+ \w+ = \d+;)"
        if re.match(declaration, line) and "Payload" not in line:
            assert text[i - 1].lstrip().startswith("//"), f"undocumented: {line.strip()}"
    for name in EVENT_TYPES:
        assert re.search(r"\b[A-Z]\d+\b", gen_proto._message_doc(name, EVENT_TYPES[name])), f"{name}: no rule ID"


def test_generated_python_matches_the_proto_files(tmp_path: Path) -> None:
    protos = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto").rglob("*.proto"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-Iproto",
            f"--python_out={tmp_path}",
            f"--pyi_out={tmp_path}",
            f"--grpc_python_out={tmp_path}",
            *protos,
        ],
        cwd=ROOT,
        check=True,
    )
    for generated in sorted(tmp_path.rglob("*.py*")):
        committed = ROOT / "libs" / generated.relative_to(tmp_path)
        assert committed.exists(), f"{committed} missing: run `make proto`"
        assert committed.read_text() == generated.read_text(), f"{committed} is stale: run `make proto`"


def test_every_event_and_command_has_its_message() -> None:
    event_fields = {f.message_type.name for f in events_pb2.EventPayload.DESCRIPTOR.fields}
    command_fields = {f.message_type.name for f in commands_pb2.CommandPayload.DESCRIPTOR.fields}
    assert event_fields == set(EVENT_TYPES)
    assert command_fields == set(COMMAND_TYPES)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_events_round_trip_through_protobuf(seed: int) -> None:
    state, events = new_game(classic(), ["a", "b", "c"], seed)
    for _ in range(30):
        if state.finished:
            break
        seat = state.actor
        events += apply(state, HeuristicBot(seed).choose(state, seat))
    for event in events:
        assert event_from_proto(event_to_proto(event)) == event
    assert command_from_proto(command_to_proto(Roll(2))) == Roll(2)


def _zero(tp: object) -> object:
    """The protobuf default of a field's type: what proto3 does not mark as present."""
    import typing

    if tp is int:
        return 0
    if tp is str:
        return ""
    if tp is bool:
        return False
    if typing.get_origin(tp) is tuple:
        return ()
    return None


@pytest.mark.parametrize("registry", [EVENT_TYPES, COMMAND_TYPES], ids=["events", "commands"])
def test_values_whose_fields_are_all_defaults_keep_their_type_on_the_wire(registry: dict[str, type]) -> None:
    """proto3 sends no bytes for default scalars: the oneof case alone must say which event or command it is."""
    import dataclasses

    from engine import codec

    checked = 0
    for cls in registry.values():
        hints = codec.field_types(cls)
        values = {f.name: _zero(hints[f.name]) for f in dataclasses.fields(cls)}
        if any(v is None for v in values.values()):
            continue  # a field carried as JSON (a config): never all-default
        value = cls(**values)
        wire = event_to_proto(value) if registry is EVENT_TYPES else command_to_proto(value)
        back = event_from_proto(wire) if registry is EVENT_TYPES else command_from_proto(wire)
        assert back == value, cls.__name__
        checked += 1
    assert checked > 10


def test_what_analysts_group_by_travels_as_typed_fields() -> None:
    """Issue of the schema: a payment's square and kind, a table's mode, rule set and board, enums for reasons."""
    from engine import PaymentMade, PaymentReason, TableCreated, hasbro

    config = hasbro()
    created = event_to_proto(TableCreated(config, 7, ("a", "b"))).table_created
    assert (created.ruleset, created.mode, created.board) == ("hasbro", "hasbro", config.board.name)
    assert list(created.group_names) == list(config.board.group_names)
    assert [(s.index, s.kind, s.group, s.price) for s in created.squares] == [
        (s.index, str(s.kind), s.group, s.price) for s in config.board.squares
    ]
    boardwalk = created.squares[39]
    assert events_pb2.SquareKind.Name(boardwalk.kind_code) == "SQUARE_KIND_PROPERTY" and boardwalk.group == 8
    assert event_from_proto(event_to_proto(TableCreated(config, 7, ("a", "b")))) == TableCreated(config, 7, ("a", "b"))

    paid = event_to_proto(PaymentMade(0, 1, 500, PaymentReason.RENT, 0, 39)).payment_made
    assert (paid.square, paid.reason, events_pb2.PaymentReason.Name(paid.reason_code)) == (
        39,
        "rent",
        "PAYMENT_REASON_RENT",
    )
    # A payment written before the square and the enum existed: "not recorded" (-1), the kind from its string.
    old = events_pb2.EventPayload(payment_made=events_pb2.PaymentMade(debtor=0, creditor=-1, amount=2000, reason="tax"))
    assert not old.payment_made.HasField("square")
    assert event_from_proto(old) == PaymentMade(0, -1, 2000, PaymentReason.TAX, 0, -1)
    start = event_to_proto(PaymentMade(0, -1, 100, PaymentReason.CARD, 0, 0))  # square 0 (Start) is a value
    assert start.payment_made.HasField("square") and event_from_proto(start).square == 0  # type: ignore[attr-defined]


def test_an_enum_value_newer_than_the_reader_is_a_clear_bad_request() -> None:
    """Adding an enum value is a compatible change: an older reader takes the value's string when it
    knows it, and otherwise refuses the event with BadRequest (what every consumer handles), naming
    the field and saying to upgrade, instead of a KeyError."""
    from engine import PaymentMade, PaymentReason
    from servicekit.errors import BadRequest

    known = events_pb2.EventPayload(
        payment_made=events_pb2.PaymentMade(debtor=0, creditor=-1, amount=5, reason="tax", reason_code=99)
    )
    assert event_from_proto(known) == PaymentMade(0, -1, 5, PaymentReason.TAX, 0, -1)
    newer = events_pb2.EventPayload(
        payment_made=events_pb2.PaymentMade(debtor=0, creditor=-1, amount=5, reason="lottery", reason_code=99)
    )
    with pytest.raises(BadRequest, match=r"PaymentMade\.reason: value 99 \('lottery'\) is newer"):
        event_from_proto(newer)
