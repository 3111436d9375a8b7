"""Quotas: a token bucket per principal and per connection, a cap on open streams, a retry hint."""

from __future__ import annotations

import asyncio

import pytest

from monopoly.v1 import table_pb2
from servicekit import grpcserver
from servicekit.errors import Exhausted, Unauthenticated
from servicekit.quotas import COMMAND, STREAM, Buckets, Quotas, QuotaSettings, Streams


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_takes_its_burst_then_its_rate_and_says_how_long_to_wait() -> None:
    clock = Clock()
    buckets = Buckets(rate=10, burst=3, clock=clock)
    assert [buckets.take("seat:0") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("seat:0") == pytest.approx(0.1)  # one more in a tenth of a second
    assert buckets.take("seat:1") == 0.0  # another key has its own bucket
    clock.now += 0.1
    assert buckets.take("seat:0") == 0.0


def test_the_least_recently_used_keys_go_past_the_cap() -> None:
    buckets = Buckets(rate=1, burst=1, max_keys=2, clock=Clock())
    for key in ("a", "b", "c"):
        buckets.take(key)
    assert buckets.take("a") == 0.0  # forgotten, so full again (at worst one more burst)
    assert buckets.take("c") > 0


def test_a_flooding_seat_is_refused_with_a_retry_hint_and_others_are_not() -> None:
    clock = Clock()
    quotas = Quotas(QuotaSettings(commands_per_s=5, commands_burst=5), clock=clock)
    for _ in range(5):
        quotas.charge(COMMAND, "player:t1:0", "ipv4:127.0.0.1:1")
    with pytest.raises(Exhausted) as refused:
        quotas.charge(COMMAND, "player:t1:0", "ipv4:127.0.0.1:1")
    assert refused.value.retry_after_ms == 200
    quotas.charge(COMMAND, "player:t2:0", "ipv4:127.0.0.1:2")  # another table's seat plays on


def test_one_connection_is_capped_whatever_tokens_it_carries() -> None:
    quotas = Quotas(QuotaSettings(connection_per_s=1, connection_burst=2), clock=Clock())
    quotas.charge(COMMAND, "player:t1:0", "ipv4:127.0.0.1:9")
    quotas.charge(COMMAND, "player:t2:1", "ipv4:127.0.0.1:9")
    with pytest.raises(Exhausted, match="connection"):
        quotas.charge(COMMAND, "player:t3:2", "ipv4:127.0.0.1:9")


def test_open_streams_are_capped_per_key_and_released_when_they_end() -> None:
    streams = Streams(limit=2)
    with streams.hold("spectator:t1", "watch"), streams.hold("spectator:t1", "watch"):
        with pytest.raises(Exhausted, match="at most 2"), streams.hold("spectator:t1", "watch"):
            pass
        with streams.hold("spectator:t2", "watch"):
            pass
    with streams.hold("spectator:t1", "watch"):
        pass


def test_streams_opened_again_and_again_are_refused_past_their_rate() -> None:
    """`WatchTable(from_seq=1)` sends a table's history at each opening: reopened in a loop it made one
    seat's token cost the table service a core."""
    clock = Clock()
    quotas = Quotas(QuotaSettings(stream_opens_per_s=2, stream_opens_burst=3), clock=clock)
    for _ in range(3):
        quotas.charge(STREAM, "player:t1:0", "ipv4:127.0.0.1:1")
    with pytest.raises(Exhausted, match="too many stream calls") as refused:
        quotas.charge(STREAM, "player:t1:0", "ipv4:127.0.0.1:1")
    assert refused.value.retry_after_ms == 500
    quotas.charge(STREAM, "player:t1:1", "ipv4:127.0.0.1:1")  # another seat opens its own
    assert QuotaSettings.from_env({"QUOTA_STREAM_OPENS_PER_S": "4"}).stream_opens_per_s == 4.0


def test_the_numbers_come_from_the_environment() -> None:
    s = QuotaSettings.from_env({"QUOTA_COMMANDS_PER_S": "7", "QUOTA_STREAMS": "3"})
    assert (s.commands_per_s, s.streams, s.creates_per_s) == (7.0, 3, QuotaSettings().creates_per_s)


async def test_a_refusal_is_answered_no_sooner_than_the_refusal_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Held, a flood resent as soon as answered gets a refusal per call in flight per delay at most."""
    quotas = Quotas(QuotaSettings(connection_per_s=0.01, connection_burst=1, refusal_delay_ms=150))
    monkeypatch.setattr(grpcserver, "QUOTAS", quotas)
    method = "/monopoly.v1.TableService/GetTable"
    await grpcserver.charge(method, None, "ipv4:127.0.0.1:9")  # within the burst
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(Exhausted, match="connection") as refused:
        await grpcserver.charge(method, None, "ipv4:127.0.0.1:9")
    assert loop.time() - started >= 0.149
    assert refused.value.retry_after_ms > 0
    assert QuotaSettings.from_env({"QUOTA_REFUSAL_DELAY_MS": "0"}).refusal_delay_ms == 0.0


async def test_a_flood_of_bad_tokens_spends_its_connections_quota_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused token costs its connection a call: after the burst the flood is RESOURCE_EXHAUSTED, not
    answered UNAUTHENTICATED as fast as it is sent."""
    quotas = Quotas(QuotaSettings(connection_per_s=0.01, connection_burst=3, refusal_delay_ms=0))
    monkeypatch.setattr(grpcserver, "QUOTAS", quotas)
    method = "/monopoly.v1.TableService/GetTable"
    request = table_pb2.GetTableRequest(table_id="t1")
    forged = (("authorization", "Bearer e30.forged"),)
    for _ in range(3):
        with pytest.raises(Unauthenticated):
            await grpcserver.admit("key", method, request, forged, "ipv4:127.0.0.1:9")
    with pytest.raises(Exhausted, match="connection"):
        await grpcserver.admit("key", method, request, forged, "ipv4:127.0.0.1:9")
