"""The auction service's reading of the table's signals: a bankruptcy that ends the game (D5) leaves
the auction to `GameEnded` (cancelled, as the table leaves it), while one that does not takes the
bidder out (A1)."""

from __future__ import annotations

from typing import Any

from engine import GameEnded, PlayerBankrupt
from monopoly.v1 import common_pb2
from servicekit.wire import envelope
from services.auction.handlers import handle_batch


class Recorder:
    """The calls `handle_batch` makes on the service's auctions, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def withdraw(self, table_id: str, seat: int) -> None:
        self.calls.append(("withdraw", table_id, seat))

    async def game_ended(self, table_id: str) -> None:
        self.calls.append(("game_ended", table_id))


def batch(*events: Any) -> bytes:
    return common_pb2.EventBatch(
        events=[envelope("t1", 40 + i, e, 0, 1, 0) for i, e in enumerate(events)]
    ).SerializeToString()


async def test_D5_a_bankruptcy_that_ends_the_game_withdraws_nobody() -> None:
    auctions = Recorder()
    await handle_batch(auctions, batch(PlayerBankrupt(2, -1, 2), GameEnded(0, (1, 3, 2), "last_player")))  # type: ignore[arg-type]
    assert auctions.calls == [("game_ended", "t1")]


async def test_A1_a_bankruptcy_while_the_game_goes_on_takes_the_bidder_out() -> None:
    auctions = Recorder()
    await handle_batch(auctions, batch(PlayerBankrupt(2, -1, 3)))  # type: ignore[arg-type]
    assert auctions.calls == [("withdraw", "t1", 2)]
