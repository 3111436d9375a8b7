"""A starting service asks JetStream again while it cannot answer yet, and only then."""

from __future__ import annotations

import asyncio

import pytest
from nats.js.errors import BadRequestError, ServiceUnavailableError

from servicekit import bus


def test_a_stream_not_yet_placed_is_asked_for_again() -> None:
    """A new cluster answers 10005 until every node has reported: the call is made again, then answers."""
    calls = 0

    async def add_stream() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise BadRequestError(code=400, err_code=10005, description="no suitable peers for placement")
        return "created"

    assert asyncio.run(bus.when_jetstream_answers(add_stream, "stream PROBE", wait_s=5)) == "created"
    assert calls == 3


def test_any_other_refusal_is_raised_at_once() -> None:
    calls = 0

    async def add_stream() -> str:
        nonlocal calls
        calls += 1
        raise BadRequestError(code=400, err_code=10058, description="stream name already in use")

    with pytest.raises(BadRequestError):
        asyncio.run(bus.when_jetstream_answers(add_stream, "stream PROBE", wait_s=5))
    assert calls == 1


def test_jetstream_busy_tells_a_wait_from_a_refusal() -> None:
    assert bus.jetstream_busy(ServiceUnavailableError())
    assert bus.jetstream_busy(TimeoutError())
    assert bus.jetstream_busy(BadRequestError(err_code=bus.PLACEMENT_PENDING))
    assert not bus.jetstream_busy(BadRequestError(err_code=10058))
    assert not bus.jetstream_busy(ValueError())
