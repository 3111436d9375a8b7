"""The table service's commit path, per event, without Postgres: what a table's actor spends encoding a
command's events before the group commit sends them.

    python bench/commit_bench.py [GAMES] [RUNS]   (default 20 games, 7 runs)

Plays bot games with the simulator once, keeping each command's state and events as the table's actor
has them when it commits; then RUNS times over every commit: `TableActor._prepare` (the answer, the
envelopes, the outbox rows) and `store.append_args` (the statement's parameters). Also the read side:
decoding every stored event back into engine events, as `rebuild` does when a table is loaded. Prints
each run and the medians, in microseconds per event. The machine is shared and noisy: compare medians.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from types import SimpleNamespace
from typing import Any, cast

from engine import Event, TableState, preset
from services.table import store
from services.table.tables import TableActor, Tables, stored_events
from sim.runner import play_game

TABLE_ID = "0123456789abcdef"


def commits(games: int) -> list[tuple[TableState, int, list[Event]]]:
    """Every command's (state after it, first seq, events) of `games` classic bot games."""
    out: list[tuple[TableState, int, list[Event]]] = []

    def keep(state: TableState, events: list[Event]) -> None:
        if events:
            out.append((state.copy(), state.seq - len(events) + 1, list(events)))

    for game in range(games):
        play_game(preset("classic"), 4, 7000 + game, "heuristic", on_events=keep, hash_events=False, think_ms=3000)
    return out


def encode(actor: TableActor, recorded: list[tuple[TableState, int, list[Event]]]) -> list[store.AppendArgs]:
    """What the actor hands the group commit for each recorded command."""
    out = []
    for state, first_seq, events in recorded:
        prepared = actor._prepare(state, first_seq, events, "")
        out.append(
            store.append_args(
                TABLE_ID, first_seq, events, prepared.encoded, state.clock, state, prepared.snapshot, prepared.outbox
            )
        )
    return out


def main(games: int, runs: int) -> None:
    recorded = commits(games)
    gc.collect()
    gc.freeze()  # the recorded states are many objects: kept out of the collector's passes, as they are not timed
    n_events = sum(len(events) for _, _, events in recorded)
    tables = cast(Tables, SimpleNamespace(snapshot_every=1 << 30))
    actor = TableActor(tables, TABLE_ID, recorded[0][0], epoch_ms=0, scale=1, snapshot_seq=0)
    print(f"{games} games: {len(recorded)} commits, {n_events} events ({n_events / len(recorded):.2f} per commit)")
    write: list[float] = []
    read: list[float] = []
    for run in range(runs):
        started = time.process_time()
        args = encode(actor, recorded)
        write.append((time.process_time() - started) / n_events * 1e6)
        rows: list[dict[str, Any]] = [
            {"seq": seq, "envelope": blob, "payload": None}
            for a in args
            for seq, blob in zip(a.seqs, a.envelopes, strict=True)
        ]
        started = time.process_time()
        decoded = stored_events(rows)
        read.append((time.process_time() - started) / n_events * 1e6)
        assert len(decoded) == n_events
        print(f"run {run + 1}: commit path {write[-1]:.2f} us/event, decode {read[-1]:.2f} us/event")
    print(f"median: commit path {statistics.median(write):.2f} us/event, decode {statistics.median(read):.2f} us/event")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 7)
