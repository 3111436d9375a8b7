"""A command id is bound to its command by a digest stored with its first answer
(`services.table.tables.command_digest`): the digests kept by value must be the ones
computed from the command's canonical JSON, for every kind of command and sender."""

from __future__ import annotations

import hashlib

from engine import BuyProperty, EndTurn, ProposeTrade, Roll, Surrender, codec
from services.table import tables
from services.table.tables import command_digest


def plain(command: object, seat: int | None) -> str:
    who = "platform" if seat is None else f"seat:{seat}"
    body = codec.dumps(codec.command_to_data(command)) if command is not None else "clock"  # type: ignore[arg-type]
    return hashlib.sha256(f"{who}\n{body}".encode()).hexdigest()


def test_a_kept_digest_is_the_digest_of_the_commands_canonical_json() -> None:
    commands = [
        Roll(0),
        Roll(1),
        EndTurn(2),
        BuyProperty(3),
        Surrender(0),
        ProposeTrade(0, 1, 100, (1, 3), 0, (6,), (), ()),
        ProposeTrade(0, 1, 100, (1, 3), 0, (8,), (), ()),
    ]
    for _ in range(2):  # the second time from what was kept
        for command in commands:
            for seat in (None, 0, 1):
                assert command_digest(command, seat) == plain(command, seat)
    assert command_digest(None, None) == plain(None, None)


def test_commands_that_differ_in_any_value_type_or_sender_get_different_digests() -> None:
    digests = {
        command_digest(Roll(0), 0),
        command_digest(Roll(1), 0),
        command_digest(Roll(0), 1),
        command_digest(Roll(0), None),
        command_digest(EndTurn(0), 0),
        command_digest(ProposeTrade(0, 1, 100, (1, 3), 0, (6,), (), ()), 0),
        command_digest(ProposeTrade(0, 1, 100, (1, 3), 0, (6, 8), (), ()), 0),
    }
    assert len(digests) == 7


def test_a_bool_where_an_int_belongs_is_not_taken_for_the_int() -> None:
    """`True == 1`: a hostile `Roll(True)` must not get `Roll(1)`'s digest (its JSON differs)."""
    assert command_digest(Roll(1), 0) == plain(Roll(1), 0)
    assert command_digest(Roll(True), 0) == plain(Roll(True), 0) != plain(Roll(1), 0)


def test_the_kept_digests_stay_bounded() -> None:
    for seat in range(tables._DIGESTS_KEPT + 10):
        command_digest(Roll(seat), 0)
    assert 0 < len(tables._DIGESTS) <= tables._DIGESTS_KEPT
