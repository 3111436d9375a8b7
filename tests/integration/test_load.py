"""`monopoly load` against a running platform (the session's): every table it meant to run is counted.

A run reports what it measured, latency from an HDR histogram, and the tables that never started:
a non-zero count fails the run (exit 1), so a load whose tables silently wait is never a figure.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from client import BotTable, SubProtocolStubs, connect
from client.load import Generator, LoadSpec, Targets
from client.matchmaking import MatchmakingClient, Player
from client.platform import Platform
from monopoly.v1 import matchmaking_pb2, table_pb2
from servicekit.embedded import free_port

pytestmark = pytest.mark.integration


def load(tmp_path: Path, *args: str) -> tuple[int, dict[str, object], str]:
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "monopoly_cli", "load", "--json", str(out), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stderr


async def test_tables_of_bots_through_two_generator_processes_are_all_counted(
    platform: Platform, tmp_path: Path
) -> None:
    code, report, err = load(
        tmp_path,
        *("--table", platform.table_target, "--via", "create", "--tables", "4", "--processes", "2"),
        *("--think", "0", "--ramp", "20", "--duration", "6"),
    )
    assert code == 0, err
    assert report["ok"] is True
    statuses = report["statuses"]
    assert isinstance(statuses, dict)
    assert statuses.get("playing", 0) + statuses.get("finished", 0) == 4, statuses
    assert report["never_started"] == 0 and report["stalled"] == 0 and report["failed"] == 0
    commands = report["commands"]
    assert isinstance(commands, int) and commands > 20
    # At no think time nothing is corrected: one latency per command the table answered (committed or
    # refused: a timer moved the table on first).
    codes = report["errors_by_code"]
    assert isinstance(codes, dict)
    assert report["latency_count"] == commands + sum(n for code, n in codes.items() if " " not in code)
    latency = report["latency_ms"]
    assert isinstance(latency, dict) and 0 < latency["p50"] <= latency["p99"] <= latency["p100"]
    assert "4 classic tables" in str(report["measured"])


async def test_a_run_stopped_at_its_duration_leaves_its_tables_ended_unless_asked_to_keep_them(
    platform: Platform, tmp_path: Path
) -> None:
    """At --duration the bots leave the game with their seats (R3): the platform is not left running the
    tables by time-outs. The count comes from the table service's own view of each table."""
    args = ("--table", platform.table_target, "--via", "create", "--tables", "3", "--think", "0.5", "--duration", "5")
    code, report, err = load(tmp_path, *args)
    assert code == 0, err
    statuses = report["statuses"]
    assert isinstance(statuses, dict) and statuses.get("playing", 0) >= 1, statuses
    assert report["left"] == statuses["playing"]  # every table still playing ended by its bots leaving
    code, kept, err = load(tmp_path, *args, "--keep-tables")
    assert code == 0, err
    assert kept["left"] == 0


async def test_tables_that_never_commit_a_command_fail_the_run(platform: Platform, tmp_path: Path) -> None:
    # Bots that think a minute before their first move, in a run of 4 s: created, never started.
    code, report, _ = load(
        tmp_path,
        *("--table", platform.table_target, "--via", "create", "--tables", "2"),
        *("--think", "60", "--duration", "4"),
    )
    assert code == 1
    assert report["ok"] is False
    assert report["never_started"] == 2 and report["commands"] == 0


async def test_tables_that_end_without_a_command_of_the_bots_fail_the_run(platform: Platform, tmp_path: Path) -> None:
    # At clock scale 600 a turn lasts 0.125 real s, less than the bots' 3 s of thought: every turn times
    # out (E2) and the game ends by bankruptcies without one command of theirs. That is no finished table.
    code, report, _ = load(
        tmp_path,
        *("--table", platform.table_target, "--via", "create", "--tables", "2", "--clock-scale", "600"),
        *("--think", "3", "--duration", "60"),
    )
    assert code == 1
    assert report["ok"] is False
    assert report["failed"] == 2 and report["commands"] == 0
    assert report["statuses"] == {"failed": 2}
    failures = report["failures"]
    assert isinstance(failures, list) and len(failures) == 2
    assert "ended without one command of its bots committed" in failures[0]
    assert "clock scale 600" in failures[0] and "less than the bots' --think 3 s" in failures[0]


async def test_a_platform_that_is_not_there_fails_every_table(tmp_path: Path) -> None:
    code, report, _ = load(
        tmp_path,
        *("--table", f"127.0.0.1:{free_port()}", "--via", "create", "--tables", "3"),
        *("--think", "0", "--duration", "20"),
    )
    assert code == 1
    assert report["failed"] == 3
    failures = report["failures"]
    assert isinstance(failures, list) and len(failures) == 3 and "UNAVAILABLE" in failures[0]


def test_without_an_address_it_says_where_to_find_one(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "monopoly_cli", "load", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2
    assert "targets.json" in proc.stderr


async def test_players_queued_through_matchmaking_are_seated_and_play(platform: Platform, tmp_path: Path) -> None:
    code, report, err = load(
        tmp_path,
        *("--table", platform.table_target, "--matchmaking", platform.target("matchmaking")),
        *("--auction", platform.target("auction"), "--trade", platform.target("trade")),
        *("--casino", platform.target("casino"), "--tables", "2", "--think", "0", "--duration", "20"),
    )
    assert code == 0, err
    statuses = report["statuses"]
    assert isinstance(statuses, dict)
    assert statuses.get("playing", 0) + statuses.get("finished", 0) == 2, (statuses, report["failures"])
    assert report["never_started"] == 0 and report["commands"] > 0  # type: ignore[operator]


def test_a_think_time_longer_than_the_platforms_turns_is_refused_up_front(tmp_path: Path) -> None:
    """`monopoly run` at its default clock scale of 60 runs 1.25 s turns: 3 s bots would lose every
    turn to E2. The load reads the scale from the platform's targets.json and says what to change."""
    data = tmp_path / "platform"
    data.mkdir()
    port = free_port()
    (data / "targets.json").write_text(
        json.dumps({"table": f"127.0.0.1:{port}", "matchmaking": f"127.0.0.1:{port}", "clock_scale": 60})
    )
    proc = subprocess.run(
        [sys.executable, "-m", "monopoly_cli", "load", "--data-dir", str(data), "--think", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "clock scale 60" in proc.stderr and "1.25 real s" in proc.stderr and "CLOCK_SCALE=1" in proc.stderr
    faster = subprocess.run(
        [sys.executable, "-m", "monopoly_cli", "load", "--data-dir", str(data), "--think", "3", "--via", "create"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "clock scale" not in faster.stderr  # CreateTable sets its own clock: not refused for it


async def test_a_process_opens_no_more_tables_at_once_than_its_opening_slots(platform: Platform) -> None:
    """A table holds its opening slot until it is open (its driver has the table's first view: the
    service took its calls): with one slot, a table is created only once the one before it is open
    (calls never pile up in a busy service), and not held back until a first commit, which a bot's
    think time puts seconds later."""
    spec = LoadSpec(
        targets=Targets(table=platform.table_target),
        tables=3,
        think_s=4,
        ramp=50,
        duration_s=12,
        via="create",
        opening=1,
    )
    generator = Generator(spec, 0)
    forming = 0
    # At each table's opening: the tables forming, and for each earlier one whether it is open and
    # how many commands it committed.
    seen: list[tuple[int, list[tuple[bool, int]]]] = []
    form = generator._form

    async def counted(number: int) -> list[BotTable]:
        nonlocal forming
        earlier = [(all(g.opened.is_set() for g in gs), sum(g.commands for g in gs)) for gs in generator.games.values()]
        seen.append((forming, earlier))
        forming += 1
        try:
            return await form(number)
        finally:
            forming -= 1

    generator._form = counted  # type: ignore[method-assign]
    snapshot = await generator.run(None)
    assert snapshot.failures == [] and snapshot.never_started == 0, snapshot
    assert [n for n, _ in seen] == [0, 0, 0]
    assert [[is_open for is_open, _ in earlier] for _, earlier in seen] == [[], [True], [True, True]]
    # The third table opened while the first one's bot still thought over its first move (4 s).
    assert seen[2][1][0][1] == 0, seen


async def test_a_table_service_frozen_mid_run_is_a_stall_and_its_wait_is_in_the_latency(platform: Platform) -> None:
    """The table service stops answering for 4 s (SIGSTOP, under its lease's 5 s) while bots play at
    0.2 s a decision, each command waiting 1.5 s for its answer: every table went silent for longer
    than the 2.5 s stall limit, and the commands that got no answer count their 1.5 s in the latency
    (their status DEADLINE_EXCEEDED), though the tables played on afterwards."""
    spec = LoadSpec(
        targets=Targets(table=platform.table_target),
        tables=2,
        think_s=0.2,
        ramp=50,
        duration_s=12,
        via="create",
        stall_s=2.5,
        deadline_s=1.5,
    )
    run = asyncio.create_task(Generator(spec, 0).run(None))
    proc = platform.processes["table"].proc
    assert proc is not None
    await asyncio.sleep(4)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(4)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    snapshot = await run
    assert snapshot.stalled == 2, snapshot
    assert snapshot.errors_by_code.get("DEADLINE_EXCEEDED", 0) >= 2, snapshot.errors_by_code
    histogram = HdrHistogram.decode(base64.b64decode(snapshot.histogram))
    assert histogram.get_max_value() >= 1_500_000  # us: a command's whole wait


async def test_players_still_queued_when_a_run_stops_are_taken_out_of_the_queue(platform: Platform) -> None:
    """A run that stops while its players wait in the queue cancels their tickets (matchmaking would
    seat them later at a table no bot plays); a player seated meanwhile leaves that table (R3)."""
    spec = LoadSpec(
        targets=Targets(table=platform.table_target, matchmaking=platform.target("matchmaking")),
        tables=1,
        think_s=0,
    )
    generator = Generator(spec, 0)
    mm = generator.mm = MatchmakingClient(platform.target("matchmaking"))
    generator.channel, generator.stub = connect(platform.table_target)
    generator.services = SubProtocolStubs()
    try:
        waiting = await mm.register("load-unqueue-waiting")
        await mm.enqueue(waiting, "duel")  # alone in the duel queue: not seated
        seated = [await mm.register(f"load-unqueue-{i}") for i in range(4)]
        tickets = await mm.queue_and_wait(seated, "classic", timeout=30)
        await generator._unqueue([waiting, *seated])
        assert generator.failures == []
        async for status in mm.stub.WatchQueue(matchmaking_pb2.WatchQueueRequest(player_token=waiting.token)):
            assert status.status == "cancelled", status
            break
        view = await generator.stub.GetTable(table_pb2.GetTableRequest(table_id=tickets[0].table_id), timeout=10)
        assert view.finished  # every seat left
    finally:
        await mm.close()
        await generator.channel.close()


async def test_a_tables_players_queue_as_a_party_so_players_already_waiting_cannot_split_them(
    platform: Platform,
) -> None:
    """Two players wait alone in the classic queue. Queued one by one, three of the table's four would
    be seated with them at a table of five (R4), the fourth left to wait for ever; as a party the four
    sit together at one table (with one of those waiting: a fifth fits)."""
    spec = LoadSpec(
        targets=Targets(table=platform.table_target, matchmaking=platform.target("matchmaking")), tables=1, seed=71
    )
    generator = Generator(spec, 0)
    mm = generator.mm = MatchmakingClient(platform.target("matchmaking"))
    generator.channel, generator.stub = connect(platform.table_target)
    generator.services = SubProtocolStubs()
    waiting = [await mm.register(f"load-party-waiting-{i}") for i in range(2)]
    try:
        for player in waiting:
            await mm.enqueue(player, "classic")
        games = await generator._form(0)
        assert len(games) == 1, [g.table_id for g in games]
        assert len(games[0].tokens) == 4
        for game in games:
            await game.resign(patience_s=0)
    finally:
        await generator._unqueue(waiting)
        await mm.close()
        await generator.channel.close()


def test_a_tables_players_are_split_into_parties_no_larger_than_the_mode_allows() -> None:
    """R4: a party of up to 4 in Classic, 2 in Duel (3 players) and Team (two parties of two)."""
    players = [Player(f"p{i}", "", f"p{i}") for i in range(4)]
    targets = Targets(table="")

    def sizes(mode: str, n: int, parties: bool = True) -> list[int]:
        generator = Generator(LoadSpec(targets, 1, mode=mode, players=n, parties=parties, via="create"), 0)
        return [len(p) for p in generator._parties(players[:n])]

    assert sizes("classic", 4) == [4]
    assert sizes("hasbro", 4) == [4]
    assert sizes("duel", 3) == [2, 1]
    assert sizes("team", 4) == [2, 2]
    assert sizes("classic", 4, parties=False) == [1, 1, 1, 1]
