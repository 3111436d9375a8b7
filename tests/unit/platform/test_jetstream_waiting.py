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


async def test_a_tool_gives_up_on_nats_out_of_reach_and_says_why() -> None:
    """A service waits for NATS without end; a command-line tool (`give_up_after_s`) is told why in
    one exception when the first connection has not succeeded in time."""
    from servicekit.embedded import free_port

    with pytest.raises(bus.NatsOutOfReach, match=r"within 1 s \(ConnectionRefusedError"):
        await bus.connect(f"nats://127.0.0.1:{free_port()}", give_up_after_s=1, streams=())
