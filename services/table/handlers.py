"""The table service's event subscribers.

The table publishes every fact and consumes none yet: auction, trade and
casino results will arrive here as durable JetStream consumers (FastStream)
when those services take their sub-protocols over.
"""

from __future__ import annotations

from faststream.nats import NatsRouter

router = NatsRouter()
