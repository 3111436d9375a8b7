"""Table signals: the few table events other services act on, on subjects of their own.

The table publishes every committed command's events on its event stream
(`monopoly.table.<id>.events`, for watchers and analytics). The services
act on a handful of event types only, yet reading that stream meant each of
them receiving, decoding and acking every message of every table: with five
consuming services that was most of the platform's CPU under load. So the
table also publishes, in the same outbox transaction, the events that matter
to others on `monopoly.signals.<topic>.<table_id>` (stream
`bus.TABLE_SIGNALS`), and each service's durable consumer filters the
topics it needs (a multi-subject filter, NATS 2.10 or newer).

A topic groups event types by what they are about, not by who reads them, so
a new consumer picks topics and the table stays unaware of it. The events of
one command are cut into runs of one topic, each run one message: a consumer
of several topics receives its events exactly once, in commit order.
"""

from __future__ import annotations

from collections.abc import Sequence

from monopoly.v1 import common_pb2

from .wire import event_batch

#: Which topic each signalled event type goes to; every other event type is not signalled.
TOPICS: dict[str, str] = {
    "TableCreated": "lifecycle",
    "PlayerBankrupt": "lifecycle",
    "GamePaused": "lifecycle",
    "GameResumed": "lifecycle",
    "GameEnded": "lifecycle",
    "TurnStarted": "turn",
    "TurnEnded": "turn",
    "AuctionStarted": "auction",
    "AuctionLimitsChanged": "auction",
    "AuctionSettled": "auction",
    "CasinoOpened": "casino",
    "BetSettled": "casino",
    "TradeExecuted": "trade",
}


def subject(topic: str, table_id: str = "*") -> str:
    """A topic's subject for one table, or for every table (the default, a consumer's filter)."""
    return f"monopoly.signals.{topic}.{table_id}"


def subjects(*topics: str) -> list[str]:
    """The filter of a consumer of `topics` across every table."""
    return [subject(t) for t in topics]


def split(envelopes: Sequence[common_pb2.Envelope], encoded: Sequence[bytes]) -> list[tuple[str, str, bytes]]:
    """One command's signals as outbox rows (subject, msg id, `EventBatch`): each run of
    consecutive signalled events of one topic is one message; unsignalled events are left out.
    `encoded` holds each envelope serialized (the bytes the table stores): a batch is built from them."""
    rows: list[tuple[str, str, bytes]] = []
    run: list[int] = []
    topic = ""
    for i, env in enumerate(envelopes):
        t = TOPICS.get(env.type)
        if t is None:
            continue
        if run and t != topic:
            rows.append(_row(topic, envelopes[run[0]], [encoded[j] for j in run]))
            run = []
        topic = t
        run.append(i)
    if run:
        rows.append(_row(topic, envelopes[run[0]], [encoded[j] for j in run]))
    return rows


def _row(topic: str, first: common_pb2.Envelope, run: list[bytes]) -> tuple[str, str, bytes]:
    return subject(topic, first.table_id), f"{first.table_id}:{first.seq}:{topic}", event_batch(run)


__all__ = ["TOPICS", "split", "subject", "subjects"]
