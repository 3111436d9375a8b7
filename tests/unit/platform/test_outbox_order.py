"""The outbox relay keeps each table's messages in order on the stream, whatever happens to a publish."""

from __future__ import annotations

import asyncio
from typing import Any

from servicekit.outbox import Relay, ordering_key


def test_every_outbox_id_is_ordered_by_its_table() -> None:
    for msg_id in ("t1:5", "t1:5:turn", "t1:t1:9:settled", "t1:formed"):
        assert ordering_key(msg_id) == "t1"


class HeldAcks:
    """A JetStream whose acks come only when the test says: what was published, in order."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.acks: list[asyncio.Future[Any]] = []

    async def publish_async(self, subject: str, payload: bytes, headers: dict[str, str]) -> asyncio.Future[Any]:
        self.sent.append(headers["Nats-Msg-Id"])
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.acks.append(future)
        return future


async def test_a_tables_next_message_is_sent_only_once_the_one_before_it_is_acked() -> None:
    """Sent all at once, a message lost with a connection while the next, buffered by the client, was
    stored after the reconnect left that table's events out of order (seen in the chaos test)."""
    js = HeldAcks()
    relay = Relay(None, js, "test")  # type: ignore[arg-type]
    rows = [{"subject": "s", "payload": b"", "msg_id": m} for m in ("a:1", "a:2", "b:1")]
    chains = [
        asyncio.create_task(relay._publish_in_turn(rows[:2])),
        asyncio.create_task(relay._publish_in_turn(rows[2:])),
    ]  # type: ignore[arg-type]
    await asyncio.sleep(0)
    assert js.sent == ["a:1", "b:1"]  # the other table goes side by side; a:2 waits for a:1's ack
    js.acks[0].set_result("ack a:1")
    await asyncio.sleep(0)
    assert js.sent == ["a:1", "b:1", "a:2"]
    for future in js.acks[1:]:
        future.set_result("ack")
    assert [await c for c in chains] == [["ack a:1", "ack"], ["ack"]]
    # an ack that never comes (the connection went): the chain is cancelled, its next row never sent
    stuck = asyncio.create_task(
        relay._publish_in_turn([{"subject": "s", "payload": b"", "msg_id": m} for m in ("c:1", "c:2")])
    )  # type: ignore[misc]
    await asyncio.sleep(0)
    stuck.cancel()
    await asyncio.gather(stuck, return_exceptions=True)
    assert js.sent[-1] == "c:1" and js.acks[-1].cancelled()
