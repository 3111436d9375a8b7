"""The trade service's event subscribers: the table's signals close proposals.

One durable consumer (`trade-table-signals`) reads the table signals of topics
"turn", "trade" and "lifecycle" (`servicekit.signals`): a `TurnEnded` or
`GameEnded` expires the open proposals of the turn that ended, a `PlayerBankrupt` those of the
bankrupt seat, and a `TradeExecuted` settles its trade as executed. Each
batch's changes and their TradeEvents (outbox) commit in one transaction and
only then is the message acked; the updates touch open trades only, so a
redelivered or late batch changes nothing. A message that is not an
EventBatch is logged and acked (it would fail the same way every time).
"""

from __future__ import annotations

import logging

from google.protobuf.message import DecodeError

from monopoly.v1 import common_pb2
from servicekit import bus, signals
from servicekit.consumers import LAZY_GATHER_S, Consumers, durable_consumer

from .trades import Trades

log = logging.getLogger(__name__)

DURABLE = "trade-table-signals"
#: The table signals this service acts on (`servicekit.signals`).
TOPICS = ("turn", "trade", "lifecycle")


def build_consumers(trades: Trades) -> Consumers:
    consumers = Consumers()

    @durable_consumer(consumers, signals.subjects(*TOPICS), bus.TABLE_SIGNALS, DURABLE, gather_s=LAZY_GATHER_S)
    async def on_table_events(body: bytes) -> None:
        try:
            batch = common_pb2.EventBatch.FromString(body)
        except DecodeError:  # not the table's: redelivering it would never help
            log.warning("a table signal that is not an EventBatch (%d bytes) skipped", len(body))
            return
        await trades.on_table_batch(batch)

    return consumers
