"""Durable JetStream consumers with an explicit ack after the effect is committed.

FastStream's default acknowledgement would ack (or drop) a message whose
handler failed; here a handler that raises is NACKed with a growing delay and
redelivered, at most `MAX_DELIVER` times in all, so a Postgres hiccup never
loses a message. Messages are handled one after the other in stream order
(FastStream would run a fetched batch concurrently); a failed one comes back
after the delay, so a failure can reorder it behind later messages.
Handlers must be idempotent: the same message may come twice
(a crash between commit and ack), so each one records what it did in the
same transaction as its effect (a natural key or a processed-message row).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from faststream import AckPolicy
from faststream.nats import JStream, NatsMessage, NatsRouter, PullSub
from nats.js.api import ConsumerConfig, DeliverPolicy
from prometheus_client import Counter

log = logging.getLogger(__name__)

#: Deliveries of one message before JetStream gives up on it (an advisory is published then).
MAX_DELIVER = 20
#: Seconds a fetch waits for a message before it asks again.
FETCH_TIMEOUT_S = 5.0
#: Seconds JetStream waits for the ack before it redelivers.
ACK_WAIT_S = 30.0

CONSUMED = Counter(
    "consumer_messages_total", "Messages consumed, by durable consumer and outcome", ["consumer", "outcome"]
)

Handler = Callable[[bytes], Awaitable[None]]


def nack_delay(delivered: int) -> float:
    """Seconds before the next delivery of a failed message: 0.2 s doubling, at most 5 s."""
    return float(min(5.0, 0.2 * 2 ** max(0, delivered - 1)))


def durable_consumer(
    router: NatsRouter, subject: str, stream: JStream, durable: str, max_deliver: int = MAX_DELIVER
) -> Callable[[Handler], Handler]:
    """Register `handler(payload)` as a durable pull consumer of `subject` named `durable`.

    Every instance of a service shares the durable consumer, so each message goes to one of them.
    """

    def register(handler: Handler) -> Handler:
        @router.subscriber(  # type: ignore[untyped-decorator]
            subject,
            stream=stream,
            durable=durable,
            # One message per fetch, handled before the next is fetched: FastStream runs the messages
            # of a fetched batch concurrently (a table's events must be seen in order), and its batch
            # mode waits for a full batch or the timeout (up to a second of latency per message).
            pull_sub=PullSub(batch_size=1, timeout=FETCH_TIMEOUT_S),
            deliver_policy=DeliverPolicy.ALL,
            config=ConsumerConfig(max_deliver=max_deliver, ack_wait=ACK_WAIT_S),
            ack_policy=AckPolicy.MANUAL,
        )
        async def consume(msg: NatsMessage) -> None:  # NatsMessage is FastStream's injected message
            raw = msg.raw_message
            try:
                await handler(raw.data)
            except Exception:
                delivered = raw.metadata.num_delivered
                log.exception("%s: message failed (delivery %d of %d); redelivering", durable, delivered, max_deliver)
                CONSUMED.labels(durable, "nacked").inc()
                await msg.nack(delay=nack_delay(delivered))
                return
            CONSUMED.labels(durable, "acked").inc()
            await msg.ack()

        return handler

    return register
