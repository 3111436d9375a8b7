"""Where the embedded servers' ports come from (`servicekit.embedded.free_port`)."""

from __future__ import annotations

import pytest

from servicekit import embedded


def test_free_ports_come_from_the_part_of_the_range_a_process_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MONOPOLY_PORT_RANGE", "23000-23100")
    ports = [embedded.free_port() for _ in range(20)]
    assert all(23_000 <= p < 23_100 for p in ports), ports
    assert len(set(ports)) == len(ports)  # never the same twice in a process


def test_without_a_part_the_whole_range_below_the_ephemeral_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MONOPOLY_PORT_RANGE", raising=False)
    assert embedded.port_range() == embedded.PORT_RANGE
    assert embedded.PORT_RANGE[1] <= 32_768  # Linux's ephemeral range starts there


@pytest.mark.parametrize("text", ["23000", "a-b", "19000-21000", "25000-24000"])
def test_a_malformed_or_outside_part_is_refused_with_its_form(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("MONOPOLY_PORT_RANGE", text)
    with pytest.raises(ValueError, match="MONOPOLY_PORT_RANGE"):
        embedded.port_range()
