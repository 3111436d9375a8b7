"""Instructions per player-turn, counted by valgrind: ours (compiled and pure Python) and the peers.

Wall-clock figures on a shared machine move by 1.5x with its load; the number of instructions a
game executes does not. Each measurement runs whole games in a child process under
`valgrind --tool=cachegrind --cache-sim=no` twice, with GAMES games and with none (the imports
and the setup alone), and divides the difference by the player-turns played:

    .venv/bin/python bench/engine_instructions.py [--games 10] [--which compiled,pure,peer]

Ours is `monopoly simulate`'s loop (`sim.runner.simulate`, heuristic bots, classic, no clock),
with the events hash on and off. "compiled" runs the native build (make compile) when one is in
libs/; "pure" runs a copy of libs/ without the native modules, so both builds are measured in
one run. The peers are bench/peers.py's, run from their checkouts as there.

`--callgrind DIR` instead writes one callgrind profile per measurement into DIR (where the
instructions go: `callgrind_annotate DIR/<name>.out`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import peers  # bench/peers.py

ROOT = Path(__file__).resolve().parents[1]
LIBS = ROOT / "libs"
VALGRIND = shutil.which("valgrind") or "/usr/bin/valgrind"

#: Ours: argv games, seed, hash (0/1); prints {"player_turns", "compiled"}.
OURS = textwrap.dedent(
    """
    import json, sys
    from engine import native
    from sim.runner import RunSpec, simulate
    games, seed, hashed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
    spec = RunSpec(games=games, seed=seed, bots="heuristic", mode="classic", hash_events=hashed, think_ms=0)
    summary = simulate(spec).as_dict() if games else {"player_turns": 0}
    print(json.dumps({"player_turns": summary["player_turns"], "compiled": native.is_compiled()}))
    """
)


def run(argv: list[str], cwd: Path, env: dict[str, str], out: Path, tool: str) -> tuple[int, dict[str, object]]:
    """Run `argv` under valgrind; its instruction count and the JSON it printed last."""
    option = f"--{tool}-out-file={out}"
    extra = ["--cache-sim=no"] if tool == "cachegrind" else []
    proc = subprocess.run(
        [VALGRIND, f"--tool={tool}", *extra, option, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:2]} failed under valgrind: {proc.stderr.strip()[-2000:]}")
    # cachegrind and callgrind both end the file with "summary: <Ir>" (callgrind: "totals:" too)
    match = re.search(r"^summary:\s+(\d+)", out.read_text(), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no instruction count in {out}")
    return int(match.group(1)), json.loads(proc.stdout.strip().splitlines()[-1])


def per_turn(
    argv: Callable[[int], list[str]], games: int, cwd: Path, env: dict[str, str], scratch: Path, name: str, tool: str
) -> tuple[float, int, dict[str, object]]:
    """(instructions per player-turn, player-turns, the child's JSON) for `games` games less none;
    `argv(n)` is the command line playing n games."""
    base, _ = run(argv(0), cwd, env, scratch / f"{name}-0.out", tool)
    total, info = run(argv(games), cwd, env, scratch / f"{name}.out", tool)
    turns = int(str(info["player_turns"]))
    return (total - base) / turns, turns, info


def pure_libs(scratch: Path) -> Path:
    """A copy of libs/ without the native build: Python imports the .py modules from it."""
    copy = scratch / "libs"
    shutil.copytree(LIBS, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return copy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--which", default="compiled,pure,peer", help="comma-separated: compiled, pure, peer")
    parser.add_argument("--hash", default="on,off", help="ours: on, off or on,off")
    parser.add_argument("--callgrind", type=Path, help="write callgrind profiles into this directory instead")
    args = parser.parse_args()
    which = args.which.split(",")
    hashes = [h == "on" for h in args.hash.split(",")]
    tool = "callgrind" if args.callgrind else "cachegrind"
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        outdir = args.callgrind or scratch
        outdir.mkdir(parents=True, exist_ok=True)
        print(f"{args.games} games per measurement (less a run of none), {tool}, python {sys.version.split()[0]}")
        for build in ("compiled", "pure"):
            if build not in which:
                continue
            env = dict(os.environ)
            if build == "pure":
                env["PYTHONPATH"] = str(pure_libs(scratch))
            for hashed in hashes:
                name = f"ours-{build}-hash-{'on' if hashed else 'off'}"
                flag = "1" if hashed else "0"

                def ours(n: int, flag: str = flag) -> list[str]:
                    return [sys.executable, "-c", OURS, str(n), str(args.seed), flag]

                ipt, turns, info = per_turn(ours, args.games, ROOT, env, outdir, name, tool)
                really = "compiled" if info["compiled"] else "pure"
                label = f"ours {really:<8} hash {'on ' if hashed else 'off'}"
                print(f"  {label}: {ipt:>9,.0f} per player-turn ({turns} turns)")
        if "peer" in which:
            for peer in peers.PEERS:
                ok, at = peers.installed(peer)
                if not ok:
                    print(f"  {peer.name}: not measured ({at})")
                    continue

                def theirs(n: int, program: str = peer.program) -> list[str]:
                    return [sys.executable, "-c", program, str(n), str(args.seed)]

                name = f"peer-{peer.folder}"
                cwd = peers.checkout(peer)
                ipt, turns, _ = per_turn(theirs, args.games, cwd, dict(os.environ), outdir, name, tool)
                print(f"  {peer.name}: {ipt:>9,.0f} per player-turn ({turns} turns, {at})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
