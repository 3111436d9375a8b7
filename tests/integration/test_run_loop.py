"""`monopoly run` as a user starts it: the real command in a process of its own, on its own embedded
NATS and Postgres, stopped by the signals a terminal or `kill` sends.

* A minute of its loop: every seat matchmaking gave its players is driven by exactly one driver holding
  that table's tokens (no PERMISSION_DENIED, no seat left to E2's time-outs), and no error escapes a
  bot's task; then Ctrl-C (SIGINT to its process group) stops every child, in order, before it returns.
* While it runs, a second platform on the same data folder refuses to start and names the first's pid.
* Started again on that folder, it drives the tables the first left unfinished (resumed); SIGTERM, and
  SIGHUP in a run of its own, each leave no process of the platform behind.
* A service process that dies is started again by the run.

Its own xdist group: it starts platforms of its own, beside the session's.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import psutil
import pytest

from engine import codec
from servicekit.embedded import postgres_server
from servicekit.wire import stored_event

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("run")]

MONOPOLY = Path(sys.executable).parent / "monopoly"
#: Seconds of play the loop test watches (after the first table is driven).
PLAY_S = 50.0
#: Generous: the embedded servers and six services start in seconds, slower on a loaded machine.
START_S = 180.0
STOP_S = 90.0
DRIVING = re.compile(r"driving table (\w+) seats ([\d,]+) \((matched|resumed)\)")


def start(data_dir: Path, *args: str) -> subprocess.Popen[str]:
    """`monopoly run` in a session of its own (as a shell's job), on the embedded servers."""
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL")}
    return subprocess.Popen(
        [str(MONOPOLY), "run", "--data-dir", str(data_dir), "--clock-scale", "30", *args],
        env={**env, "COLUMNS": "160", "MONOPOLY_METRICS_PORTS": "random"},  # beside other test runs
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def size(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


def wait_for(proc: subprocess.Popen[str], log: Path, pattern: str, since: int = 0, timeout: float = START_S) -> str:
    """Wait until `log`, from byte `since` on (logs are appended to), matches `pattern`; that text."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_bytes()[since:].decode(errors="replace") if log.exists() else ""
        if re.search(pattern, text):
            return text
        if proc.poll() is not None:
            _out, err = proc.communicate()
            pytest.fail(f"monopoly run exited with {proc.returncode} before {pattern!r}:\n{err[-3000:]}")
        time.sleep(0.5)
    pytest.fail(f"no {pattern!r} in {log} within {timeout:.0f} s:\n{log.read_text(errors='replace')[-3000:]}")


def platform_pids(proc: subprocess.Popen[str], data_dir: Path) -> set[int]:
    """The command, every process under it, and the Postgres server (pg_ctl detaches it) and its backends."""
    pids = {proc.pid} | {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    pidfile = data_dir / "pgdata" / "postmaster.pid"
    if pidfile.exists():
        postmaster = int(pidfile.read_text().split()[0])
        pids |= {postmaster} | {p.pid for p in psutil.Process(postmaster).children(recursive=True)}
    return pids


def remaining(pids: set[int], data_dir: Path) -> list[str]:
    """Processes of the platform still alive: those pids, and any whose command line names the data folder."""
    alive = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        if p.info["status"] == psutil.STATUS_ZOMBIE:
            continue  # dead; only its parent (init, for the detached Postgres) has not collected it yet
        cmdline = " ".join(p.info["cmdline"] or [])
        if p.info["pid"] in pids or str(data_dir) in cmdline:
            alive.append(f"{p.info['pid']}: {cmdline}")
    return alive


def stop(proc: subprocess.Popen[str], data_dir: Path, sig: signal.Signals, group: bool) -> tuple[str, str]:
    """Send `sig` (to the process group, as a terminal does, or to the command, as `kill` does) and
    check that the command returns with nothing of its platform left running."""
    pids = platform_pids(proc, data_dir)
    assert len(pids) >= 9, pids  # the command, setpriv'd NATS, six services, Postgres
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=STOP_S)
    assert proc.returncode == 0, err[-3000:]
    assert "stopped:" in err
    assert remaining(pids, data_dir) == []
    return out, err


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    # Not under pytest's base temp: each pytest session run as root sets that back to mode 0700, and
    # pgserver's Postgres (run as user "pgserver" under root) would lose its way to its data.
    with tempfile.TemporaryDirectory(prefix="monopoly-run-") as tmp:
        path = Path(tmp)
        yield path
        for line in remaining(set(), path):  # if a test failed half-way, leave nothing running
            psutil.Process(int(line.split(":")[0])).kill()


async def records(
    data_dir: Path, formed_before: float
) -> tuple[dict[str, set[int]], list[dict[str, object]], list[str]]:
    """From the platform's Postgres (started again on its data folder): every matched seat by table of
    the tables formed before `formed_before` (unix time), the E2 events, and the tables left unfinished."""
    with postgres_server(data_dir) as url:
        conn = await asyncpg.connect(url)
        try:
            seats: dict[str, set[int]] = {}
            query = (
                "SELECT table_id, seat FROM matchmaking.match_seats JOIN matchmaking.matches USING (table_id) "
                "WHERE formed_at < to_timestamp($1)"
            )
            for r in await conn.fetch(query, formed_before):
                seats.setdefault(r["table_id"], set()).add(r["seat"])
            e2 = [
                {"table_id": r["table_id"], **codec.event_to_data(stored_event(r["envelope"], r["payload"]))}
                for r in await conn.fetch(
                    "SELECT table_id, envelope, payload FROM table_events"
                    " WHERE type IN ('TurnTimedOut', 'PlayerBankrupt')"
                )
            ]
            unfinished = [r["table_id"] for r in await conn.fetch("SELECT table_id FROM tables WHERE NOT finished")]
        finally:
            await conn.close()
    return seats, e2, unfinished


def driven(log_text: str, kind: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for table_id, seats, how in DRIVING.findall(log_text):
        if how == kind:
            assert table_id not in out, f"table {table_id} got a second driver"
            out[table_id] = {int(s) for s in seats.split(",")}
    return out


def test_r4_e2_a_minute_of_run_drives_every_matched_seat_then_ctrl_c_then_a_rerun_resumes(data_dir: Path) -> None:
    log = data_dir / "run.log"
    proc = start(data_dir, "--tables", "3")
    wait_for(proc, log, r"driving table \w+ seats")
    # a second platform on the same folder is refused, naming the first one's pid
    second = subprocess.run(
        [str(MONOPOLY), "run", "--data-dir", str(data_dir)], capture_output=True, text=True, timeout=120
    )
    assert second.returncode == 1
    assert f"in use by another platform (pid {proc.pid})" in second.stderr
    time.sleep(PLAY_S)  # the loop plays: tables end, new players queue and are seated
    signalled = time.time()
    out, err = stop(proc, data_dir, signal.SIGINT, group=True)  # Ctrl-C
    text = log.read_text(errors="replace")
    for bad in ("PERMISSION_DENIED", "Traceback", "never retrieved", " ERROR "):
        assert bad not in text, text[-4000:]
    assert "Traceback" not in out + err
    assert "RuntimeDirWarning" not in text + err
    matched = driven(text, "matched")
    # a table formed in the last moments may still have been seating when the signal came
    seats, e2, unfinished = asyncio.run(records(data_dir, signalled - 5))
    assert len(seats) >= 3
    assert {t: matched.get(t) for t in seats} == seats  # each formed table: one driver, holding exactly its seats
    for event in e2:
        table_id, seat = str(event["table_id"]), int(str(event["seat"]))
        if table_id not in seats:
            continue
        assert seat in matched[table_id], f"E2 on seat {seat} of {table_id}, which no driver held"
        assert event.get("cause") != "timeout", f"E2 bankruptcy (three missed turns) of a driven seat: {event}"

    # Run again on the same folder: the tables left at play are driven (all seats), then SIGTERM stops it.
    assert unfinished, "tables were at play when the signal came"
    since = size(log)
    proc = start(data_dir, "--tables", "1")
    wait_for(proc, log, rf"driving table ({'|'.join(unfinished)}) seats [\d,]+ \(resumed\)", since)
    time.sleep(3)  # the others are joined one after the other
    stop(proc, data_dir, signal.SIGTERM, group=False)
    text = log.read_bytes()[since:].decode(errors="replace")
    resumed = driven(text, "resumed")
    assert resumed and set(resumed) <= set(unfinished), text[-3000:]
    assert all(resumed[t] == seats.get(t, resumed[t]) for t in resumed)  # every seat of it
    # a table not driven again is one that ended meanwhile; none is left at play with nobody at its seats
    _, _, still = asyncio.run(records(data_dir, signalled - 5))
    assert not (set(unfinished) - set(resumed)) & set(still), "a table left at play that nobody drove"


def test_a_killed_service_is_started_again_and_sighup_stops_everything(data_dir: Path) -> None:
    """As an orchestrator would: a service that dies (here SIGKILL) is started again by the run."""
    since = size(data_dir / "run.log")
    proc = start(data_dir, "--tables", "1")
    wait_for(proc, data_dir / "run.log", r"driving table", since)
    (trade,) = [
        p for p in psutil.Process(proc.pid).children(recursive=True) if "services.trade.main" in " ".join(p.cmdline())
    ]
    trade.kill()
    wait_for(proc, data_dir / "run.log", r"trade exited with code -9; starting it again", since, timeout=30)
    wait_for(proc, data_dir / "run.log", r"trade started again \(1 restarts\)", since, timeout=90)
    assert trade.pid not in {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    stop(proc, data_dir, signal.SIGHUP, group=True)  # the terminal closed


def test_tls_run_starts_with_mtls_everywhere_and_stops() -> None:
    """`make run TLS=1`: the reachability check before the platform starts speaks TLS to the embedded NATS
    too (it once used the system's CAs, and the run never started)."""
    with tempfile.TemporaryDirectory(prefix="monopoly-run-tls-") as tmp:
        folder = Path(tmp)  # made again by the run, as `data_dir`'s
    proc = start(folder, "--tables", "1", "--tls")
    try:
        wait_for(proc, folder / "run.log", r"driving table")
        _, err = stop(proc, folder, signal.SIGINT, group=True)
        assert "out of reach" not in err
    finally:
        for line in remaining(set(), folder):
            psutil.Process(int(line.split(":")[0])).kill()
        shutil.rmtree(folder, ignore_errors=True)
