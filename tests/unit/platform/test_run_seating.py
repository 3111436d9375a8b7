"""`monopoly run` drives the seats matchmaking gave its players, by table (R4 decides the tables, not the
order players were queued in), and the embedded platform's data folder admits one platform at a time."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from client.matchmaking import Player, SeatTicket
from client.platform import port_if_free
from client.run import Seating
from monopoly.v1 import matchmaking_pb2 as pb
from servicekit.embedded import DataDirBusy, data_dir_lock
from services.matchmaking.queues import Rules, Ticket, plan

ROOT = Path(__file__).resolve().parents[3]


def tickets_for(plans: list[tuple[str, list[str | None]]]) -> list[SeatTicket]:
    """The seat tickets matchmaking hands out for these tables (player ids by seat; None: a bot)."""
    out = []
    for table_id, players in plans:
        match = pb.MatchView(table_id=table_id)
        for seat, pid in enumerate(players):
            match.seats.add(seat=seat, player_id=pid or "", is_bot=pid is None)
        for seat, pid in enumerate(players):
            if pid is not None:
                out.append(SeatTicket(Player(pid, "token", pid), table_id, seat, f"{table_id}/{seat}", match))
    return out


def test_r4_two_batches_queued_at_once_make_a_table_of_five_and_the_drivers_follow_the_tables() -> None:
    # R4: Classic starts at 4 and takes a fifth who waits at once. Two batches of four queued together
    # (what `monopoly run` does) are seated 5 + 3, not 4 + 4: the table of five holds one of batch b.
    waiting = [
        Ticket(f"t{i}", pid, pid, None, 1, False, 100.0 - i)
        for i, pid in enumerate(["a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"])
    ]
    first = plan("classic", waiting, Rules(small_table_wait_s=1000))
    assert [[s.ticket.player_id for s in p.seats if s.ticket] for p in first] == [["a0", "a1", "a2", "a3", "b0"]]
    seating = Seating()
    seating.ours.update(t.player_id for t in waiting)
    issued = tickets_for([("T1", ["a0", "a1", "a2", "a3", "b0"]), ("T2", ["b1", "b2", "b3"])])
    ready: dict[str, dict[int, str]] = {}
    for ticket in [issued[4], issued[5], issued[0], issued[6], issued[1], issued[2], issued[7], issued[3]]:
        seated = seating.add(ticket)
        if seated is not None:
            assert ticket.table_id not in ready  # one driver per table
            ready[ticket.table_id] = {t.seat: t.seat_token for t in seated}
    # every token a driver holds is for the table it drives, and every seat of ours is driven
    assert ready == {"T1": {s: f"T1/{s}" for s in range(5)}, "T2": {s: f"T2/{s}" for s in range(3)}}
    assert seating.partial == 0


def test_seats_of_other_players_and_bots_do_not_hold_a_table_back() -> None:
    seating = Seating()
    seating.ours.update({"a", "b"})
    a, _x, b = tickets_for([("T", ["a", "x", None, "b"])])  # x queued elsewhere (its own client); seat 2 a bot
    assert seating.add(a) is None and seating.partial == 1
    seated = seating.add(b)
    assert seated is not None and [t.seat for t in seated] == [0, 3]


def test_a_second_platform_on_the_same_data_dir_is_refused_naming_the_first(tmp_path: Path) -> None:
    with data_dir_lock(tmp_path), pytest.raises(DataDirBusy, match=f"pid {os.getpid()}"), data_dir_lock(tmp_path):
        pass
    with data_dir_lock(tmp_path):  # released with its holder
        pass


def test_pgserver_imports_without_a_runtime_dir_warning() -> None:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    code = "from servicekit.embedded import runtime_dir; runtime_dir(); import pgserver"
    done = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", code],
        env={**env, "PYTHONPATH": str(ROOT / "libs")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "RuntimeDirWarning" not in done.stderr


def test_a_default_metrics_port_is_taken_when_free_else_another() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        other = port_if_free(port)
        assert other != port and other > 0
    assert port_if_free(port) == port
