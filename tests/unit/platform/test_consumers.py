"""Redelivery pacing of the durable consumers."""

from __future__ import annotations

from servicekit.consumers import MAX_DELIVER, nack_delay


def test_a_failed_message_comes_back_later_each_time_up_to_five_seconds() -> None:
    delays = [nack_delay(n) for n in range(1, MAX_DELIVER + 1)]
    assert delays[:3] == [0.2, 0.4, 0.8]
    assert delays == sorted(delays)
    assert max(delays) == 5.0
    # the whole budget of redeliveries spans about a minute and a half: a Postgres restart fits in it
    assert 60 < sum(delays) < 120
