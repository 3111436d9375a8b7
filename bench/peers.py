"""Other Monopoly simulators, measured on this machine in the same run as the engine (`make bench-peers`).

A peer's figure is only worth comparing when it is measured beside ours, on the same machine at
the same moment: the machine is shared and its speed changes by the hour. So nothing here is a
constant. A peer is run from a checkout at `PEERS_DIR/<name>` (default build/peers) at the commit
given below; nothing is fetched at run time. To install them:

    git clone https://github.com/gamescomputersplay/monopoly build/peers/gamescomputersplay-monopoly
    git -C build/peers/gamescomputersplay-monopoly checkout 7c4df31b7c299c245453b12e9fa327ee38c81d8f

A peer not installed is reported as such, with the figure last measured for it and when and at
which commit, marked as not measured in this run: no ratio is printed against it.

What is measured: whole games in one process, one core, player-turns per second (a player-turn is
one player's turn, its re-rolls after doubles included), with the peer's own logging off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEERS_DIR = Path(os.environ.get("PEERS_DIR", ROOT / "build" / "peers"))


@dataclass(frozen=True)
class Peer:
    name: str  # owner/repo on GitHub
    folder: str
    commit: str
    #: What the peer's games leave out that ours include (the ratio is not like for like).
    scope: str
    #: A program (run with the checkout as its working directory) printing {"player_turns", "seconds"}.
    program: str
    #: The last figure measured for it, for when it is not installed: (player-turns/s, date, machine).
    last: tuple[float, str, str]


GAMESCOMPUTERSPLAY = Peer(
    name="gamescomputersplay/monopoly",
    folder="gamescomputersplay-monopoly",
    commit="7c4df31b7c299c245453b12e9fa327ee38c81d8f",
    scope="no auctions, no command validation, no event stream",
    program=textwrap.dedent(
        """
        import json, pathlib, random, sys, tempfile, time
        sys.path.insert(0, ".")
        from monopoly.log_settings import LogSettings
        LogSettings.KEEP_GAME_LOG = False
        LogSettings.BANKRUPTCIES_PATH = pathlib.Path(tempfile.mkdtemp()) / "bankruptcies.tsv"
        from monopoly.core.game import monopoly_game
        from monopoly.core.player import Player
        turns = 0
        make_a_move = Player.make_a_move
        def counted(self, *args):
            global turns
            if self.had_doubles == 0:  # a turn's first roll; re-rolls after doubles recurse with had_doubles > 0
                turns += 1
            return make_a_move(self, *args)
        Player.make_a_move = counted
        games = int(sys.argv[1])
        rng = random.Random(int(sys.argv[2]))
        started = time.perf_counter()
        for i in range(games):
            monopoly_game((i + 1, rng.getrandbits(32)))
        print(json.dumps({"player_turns": turns, "seconds": time.perf_counter() - started}))
        """
    ),
    last=(101_000.0, "2026-11", "a shared 2-core x86-64 box, Python 3.11"),
)

PEERS = (GAMESCOMPUTERSPLAY,)


@dataclass(frozen=True)
class PeerRun:
    peer: Peer
    player_turns_per_s: float | None  # None: not installed or not at the pinned commit
    note: str


def checkout(peer: Peer) -> Path:
    return PEERS_DIR / peer.folder


def installed(peer: Peer) -> tuple[bool, str]:
    """Whether the peer can be measured, and at what: its checkout at the pinned commit (a copy that is
    not a git checkout is measured too, and said to be unverified)."""
    path = checkout(peer)
    if not path.is_dir():
        return False, f"not installed at {path}"
    if not (path / ".git").exists():
        return True, f"{path}, not a git checkout: commit unverified"
    head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.stdout.strip() != peer.commit:
        return False, f"{path} is at {head.stdout.strip()[:12] or '?'}, not the pinned {peer.commit[:12]}"
    return True, f"at {peer.commit[:12]}"


def measure(peer: Peer, games: int, seed: int) -> PeerRun:
    ok, at = installed(peer)
    if not ok:
        return PeerRun(peer, None, at)
    proc = subprocess.run(
        [sys.executable, "-c", peer.program, str(games), str(seed)],
        cwd=checkout(peer),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        return PeerRun(peer, None, f"failed: {proc.stderr.strip().splitlines()[-1:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return PeerRun(peer, out["player_turns"] / out["seconds"], f"{games} games, {at}")


def describe(run: PeerRun) -> str:
    p = run.peer
    if run.player_turns_per_s is not None:
        return f"{p.name} ({p.scope}): {run.player_turns_per_s:,.0f} player-turns/s, measured now ({run.note})"
    figure, when, machine = p.last
    return (
        f"{p.name} ({p.scope}): NOT measured in this run ({run.note}); last measured {when} at "
        f"{p.commit[:12]} on {machine}: ~{figure:,.0f} player-turns/s (see bench/peers.py to install it)"
    )


def main() -> int:
    games = int(os.environ.get("BENCH_GAMES", 200))
    for peer in PEERS:
        print(describe(measure(peer, games, 2026)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
