"""Who may send a command to a table (`Tables.authorize`), checked before anything about the command."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from engine import Bid, EndTurn, ProposeTrade, Roll, RuleViolation, SettleAuction, classic, new_game
from servicekit.auth import ANY_TABLE, Claims
from servicekit.errors import Forbidden
from services.table.tables import Tables

EXTERNAL = classic(external=("auction", "trade", "casino"))


def actor(config: Any = EXTERNAL) -> Any:
    state, _ = new_game(config, ["ann", "bob", "cy"], 1)
    return SimpleNamespace(table_id="t1", state=state)


def player(seat: int, table_id: str = "t1") -> Claims:
    return Claims(table_id, seat, f"p{seat}", "player", 0)


@pytest.mark.parametrize("command", [Roll(1), Bid(1, 100), ProposeTrade(1, 2, give_cash=10), EndTurn(1)])
def test_a_token_of_another_seat_is_forbidden_even_for_a_command_the_table_delegates(command: Any) -> None:
    """Seat 0's token acting for seat 1: PERMISSION_DENIED, never the delegated sub-protocol's rule."""
    with pytest.raises(Forbidden, match="seat 0, not seat 1"):
        Tables.authorize(None, actor(), player(0), command)  # type: ignore[arg-type]


def test_a_seats_own_delegated_command_is_sent_to_its_service_with_the_rule() -> None:
    with pytest.raises(RuleViolation) as refused:
        Tables.authorize(None, actor(), player(1), Bid(1, 100))  # type: ignore[arg-type]
    assert refused.value.rule == "A1"
    assert Tables.authorize(None, actor(classic()), player(1), Bid(1, 100)) == 1  # type: ignore[arg-type]


def test_a_services_result_needs_a_service_token() -> None:
    with pytest.raises(Forbidden):
        Tables.authorize(None, actor(), player(1), SettleAuction(-1, 1, 1, 100))  # type: ignore[arg-type]
    auction = Claims(ANY_TABLE, -1, "auction", "service", 0)
    assert Tables.authorize(None, actor(), auction, SettleAuction(-1, 1, 1, 100)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("service", ["gateway", "bots", "casino", "trade"])
def test_a_result_comes_only_from_the_service_that_runs_its_sub_protocol(service: str) -> None:
    """Every service holds a service token: the gateway's, facing the internet, must not settle auctions."""
    claims = Claims(ANY_TABLE, -1, service, "service", 0)
    with pytest.raises(Forbidden, match="only the auction service"):
        Tables.authorize(None, actor(), claims, SettleAuction(-1, 1, 1, 100))  # type: ignore[arg-type]


def test_another_table_instance_may_pass_a_result_on() -> None:
    """The instance that read a result from the bus sends it to the one that runs the table."""
    forwarder = Claims(ANY_TABLE, -1, "table", "service", 0)
    assert Tables.authorize(None, actor(), forwarder, SettleAuction(-1, 1, 1, 100)) is None  # type: ignore[arg-type]


def test_every_result_of_a_sub_protocol_names_the_service_that_sends_it() -> None:
    from engine import SYSTEM_COMMANDS
    from services.table.tables import RESULT_SENDERS

    assert set(RESULT_SENDERS) == SYSTEM_COMMANDS
