"""Write the golden sample of the event stream: EventBatch bytes and the events they hold.

tests/unit/platform/test_schema.py decodes the committed bytes with today's
code and must get the same events: a change that moves a field number or
changes a type fails it. Run this only for a new released schema version (the
old sample stays: old bytes must keep decoding), never to make the test pass.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "libs"))

from engine import PRESETS, Event, codec  # noqa: E402
from engine.state import TableState  # noqa: E402
from monopoly.v1 import common_pb2  # noqa: E402
from servicekit.wire import SCHEMA_VERSION, envelope  # noqa: E402
from sim.runner import play_game  # noqa: E402

OUT = ROOT / "tests" / "unit" / "platform" / "golden"


def sample() -> tuple[bytes, list[dict[str, object]]]:
    """Two short games (the online preset and the printed rules), one batch per command."""
    batches: list[common_pb2.EventBatch] = []
    expected: list[dict[str, object]] = []
    for table_id, preset, seed in (("golden-online", "classic", 7), ("golden-hasbro", "hasbro", 8)):
        seq = 0

        def on_events(state: TableState, new: list[Event], table_id: str = table_id) -> None:
            nonlocal seq
            batch = common_pb2.EventBatch()
            for event in new:
                seq += 1
                batch.events.append(envelope(table_id, seq, event, 1000 * seq, 60, 1_700_000_000_000 + seq))
                expected.append({"table_id": table_id, "seq": seq, "event": codec.event_to_data(event)})
            batches.append(batch)

        play_game(PRESETS[preset](), 2, seed, "heuristic", on_events=on_events)
    # One length-prefixed EventBatch after another: the JetStream messages of the stream.
    data = b"".join(len(b.SerializeToString()).to_bytes(4, "big") + b.SerializeToString() for b in batches)
    return data, expected


def main() -> int:
    data, expected = sample()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"event_batches_v{SCHEMA_VERSION}.bin").write_bytes(data)
    lines = (json.dumps(e, separators=(",", ":")) for e in expected)
    (OUT / f"event_batches_v{SCHEMA_VERSION}.jsonl").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
