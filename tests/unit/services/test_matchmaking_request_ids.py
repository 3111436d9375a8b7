"""A planned table's CreateTable request id: the same plan of the same tickets gives the same id (a
retry gets the table made before), any other seating another id (never another group's table)."""

from __future__ import annotations

from services.matchmaking.matcher import plan_request_id
from services.matchmaking.queues import Plan, SeatPlan, Ticket


def ticket(n: int) -> Ticket:
    return Ticket(f"t{n}", f"p{n}", f"player {n}", None, 1, False, 1.0)


def seats(*numbers: int) -> tuple[SeatPlan, ...]:
    return tuple(SeatPlan(i, ticket(n), f"player {n}", -1) for i, n in enumerate(numbers))


def test_the_same_plan_of_the_same_tickets_has_the_same_request_id() -> None:
    assert plan_request_id(Plan("classic", seats(1, 2, 3))) == plan_request_id(Plan("classic", seats(1, 2, 3)))
    assert plan_request_id(Plan("classic", seats(1, 2, 3))).startswith("match:")
    assert len(plan_request_id(Plan("classic", seats(1, 2, 3)))) <= 128


def test_another_seating_mode_or_group_has_another_request_id() -> None:
    base = plan_request_id(Plan("classic", seats(1, 2, 3)))
    assert plan_request_id(Plan("classic", seats(2, 1, 3))) != base  # the same tickets seated otherwise
    assert plan_request_id(Plan("speed", seats(1, 2, 3))) != base
    assert plan_request_id(Plan("classic", seats(1, 2, 4))) != base
    with_bot = (*seats(1, 2), SeatPlan(2, None, "bot 1", -1))
    assert plan_request_id(Plan("classic", with_bot)) != base
