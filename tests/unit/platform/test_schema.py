"""The event schema is frozen: numbers never move, old bytes decode, and buf's gate bites."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from engine import EVENT_TYPES, codec
from monopoly.v1 import common_pb2, events_pb2
from servicekit.errors import BadRequest
from servicekit.wire import MIN_SCHEMA_VERSION, SCHEMA_VERSION, SchemaMismatch, check_envelope, event_from_proto

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import gen_proto  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"
BUF = ROOT / "build" / "node" / "node_modules" / ".bin" / "buf"


def _batches(data: bytes) -> list[common_pb2.EventBatch]:
    out, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        out.append(common_pb2.EventBatch.FromString(data[at + 4 : at + 4 + size]))
        at += 4 + size
    return out


def _holds(decoded: Any, recorded: Any) -> bool:
    """`decoded` has every value `recorded` has; a key the recording lacks (added since) is free."""
    if isinstance(recorded, dict):
        return isinstance(decoded, dict) and all(k in decoded and _holds(decoded[k], v) for k, v in recorded.items())
    return bool(decoded == recorded)


def _default(type_name: str, field: str) -> Any:
    """The engine's default of an event field: what a field added after a sample reads as."""
    (f,) = [f for f in dataclasses.fields(EVENT_TYPES[type_name]) if f.name == field]
    return codec.to_data(f.default)


#: Every sample ever written; each keeps decoding (tools/gen_golden.py adds one per released version).
SAMPLES = sorted(int(p.stem.removeprefix("event_batches_v")) for p in GOLDEN.glob("event_batches_v*.bin"))


@pytest.mark.parametrize("version", SAMPLES)
def test_the_golden_event_batches_decode_to_the_same_events(version: int) -> None:
    """Bytes written by an earlier schema version (2: the first frozen one) read back as the same events today."""
    batches = _batches((GOLDEN / f"event_batches_v{version}.bin").read_bytes())
    recorded = [json.loads(line) for line in (GOLDEN / f"event_batches_v{version}.jsonl").read_text().splitlines()]
    envelopes = [env for batch in batches for env in batch.events]
    assert len(envelopes) == len(recorded) > 1000
    types = set()
    for env, want in zip(envelopes, recorded, strict=True):
        check_envelope(env)
        assert (env.table_id, env.seq, env.schema_version) == (want["table_id"], want["seq"], version)
        event = event_from_proto(env.payload)
        assert env.type == type(event).__name__ == want["event"]["type"]
        data = codec.event_to_data(event)
        assert _holds(data, want["event"]), (env.event_id, data, want["event"])
        for key in set(data) - set(want["event"]):  # a field added after the sample: its default
            assert data[key] == _default(want["event"]["type"], key), (env.event_id, key)
        types.add(want["event"]["type"])
    assert {"TableCreated", "GameEnded", "PaymentMade", "AuctionSettled"} <= types
    assert SAMPLES[0] == 2 and SAMPLES[-1] == SCHEMA_VERSION, "a released version without its sample"


def test_the_envelope_carries_the_locks_schema_version_and_readers_refuse_unfrozen_ones() -> None:
    lock = json.loads((ROOT / "proto" / "monopoly" / "v1" / "field_numbers.json").read_text())
    assert SCHEMA_VERSION == lock["schema_version"] >= MIN_SCHEMA_VERSION == 2
    old = common_pb2.Envelope(event_id="t:1", schema_version=1)
    with pytest.raises(SchemaMismatch, match="schema version 1"):
        check_envelope(old)
    check_envelope(common_pb2.Envelope(event_id="t:1", schema_version=SCHEMA_VERSION + 5))  # newer: readable


def test_an_empty_or_unknown_payload_is_a_bad_request() -> None:
    with pytest.raises(BadRequest):
        event_from_proto(events_pb2.EventPayload())
    future = events_pb2.EventPayload.FromString(bytes([0xFA, 0x3F, 0x00]))  # field 1023, a type not known yet
    with pytest.raises(BadRequest):
        event_from_proto(future)


# -- the generator keeps numbers ------------------------------------------------------------


@dataclass(slots=True)
class Alpha:
    seat: int
    amount: int


@dataclass(slots=True)
class AlphaGrown:
    seat: int
    note: str  # a new field declared in the middle: it still takes the next free number
    amount: int


@dataclass(slots=True)
class Beta:
    square: int


@dataclass(slots=True)
class Aardvark:
    seat: int


def _lock_of(registry: dict[str, type], lock: gen_proto.Lock | None = None) -> gen_proto.Lock:
    return gen_proto.update_lock(lock or {"schema_version": 1, "messages": {}, "reserved": {}}, {"Event": registry})


def test_a_new_type_is_appended_and_sorting_first_moves_no_number() -> None:
    lock = _lock_of({"Alpha": Alpha, "Beta": Beta})
    assert lock["messages"]["EventPayload"] == {"alpha": 1, "beta": 2}
    grown = _lock_of({"Aardvark": Aardvark, "Alpha": Alpha, "Beta": Beta}, lock)
    assert grown["messages"]["EventPayload"] == {"alpha": 1, "beta": 2, "aardvark": 3}
    assert grown["schema_version"] == 3
    assert _lock_of({"Aardvark": Aardvark, "Alpha": Alpha, "Beta": Beta}, grown) == grown  # stable: no bump


def test_a_new_field_takes_the_next_number_and_a_removed_one_is_reserved_forever() -> None:
    lock = _lock_of({"Alpha": Alpha})
    grown = _lock_of({"Alpha": AlphaGrown}, lock)
    assert grown["messages"]["Alpha"] == {"seat": 1, "amount": 2, "note": 3}
    shrunk = _lock_of({"Alpha": Beta}, grown)  # Alpha now has only `square`
    assert shrunk["messages"]["Alpha"] == {"square": 4}
    assert shrunk["reserved"]["Alpha"] == {"seat": 1, "amount": 2, "note": 3}
    assert shrunk["schema_version"] == 4
    text = gen_proto.render("Event", {"Alpha": Beta}, "doc", shrunk)
    assert "reserved 1, 2, 3;" in text and 'reserved "seat", "amount", "note";' in text
    assert "int64 square = 4;" in text
    with pytest.raises(SystemExit, match="removed before"):
        _lock_of({"Alpha": Alpha}, shrunk)  # `seat` may not come back under its old name


def test_a_removed_type_keeps_its_case_number_reserved() -> None:
    lock = _lock_of({"Alpha": Alpha, "Beta": Beta})
    shrunk = _lock_of({"Beta": Beta}, lock)
    assert shrunk["reserved"]["EventPayload"] == {"alpha": 1}
    assert "Alpha" not in shrunk["messages"] and shrunk["reserved"]["Alpha"] == {"seat": 1, "amount": 2}
    again = _lock_of({"Beta": Beta, "Aardvark": Aardvark}, shrunk)
    assert again["messages"]["EventPayload"] == {"beta": 2, "aardvark": 3}


def test_the_lock_was_seeded_from_the_committed_numbers() -> None:
    """The numbers of the released files are the lock's: freezing moved none of them."""
    lock = json.loads((ROOT / "proto" / "monopoly" / "v1" / "field_numbers.json").read_text())
    events = gen_proto.numbers_from_proto((ROOT / "proto" / "monopoly" / "v1" / "events.proto").read_text())
    for message, numbers in events["messages"].items():
        assert lock["messages"][message] == numbers
    assert lock["messages"]["EventPayload"]["dice_rolled"] == 23
    assert lock["messages"]["EventPayload"]["game_ended"] == 25


# -- buf's breaking-change gate ---------------------------------------------------------------


def _buf_breaking(tmp_path: Path, edit: tuple[str, str] | None) -> subprocess.CompletedProcess[str]:
    assert BUF.exists(), "buf is missing: `make proto-check` (or `make test`) installs it"
    work = tmp_path / "schema"
    shutil.copytree(ROOT / "proto", work / "proto", ignore=shutil.ignore_patterns("released"))
    shutil.copy(ROOT / "buf.yaml", work / "buf.yaml")
    if edit is not None:
        events = work / "proto" / "monopoly" / "v1" / "events.proto"
        text, n = re.subn(edit[0], edit[1], events.read_text())
        assert n == 1, edit
        events.write_text(text)
    against = ROOT / "proto" / "released" / "monopoly-v1.binpb"
    return subprocess.run(
        [str(BUF), "breaking", "--against", str(against)], cwd=work, capture_output=True, text=True, check=False
    )


def test_buf_breaking_passes_on_the_committed_schema(tmp_path: Path) -> None:
    result = _buf_breaking(tmp_path, None)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        ((r"DiceRolled dice_rolled = 23;", "DiceRolled dice_rolled = 999;"), "dice_rolled"),  # renumbered case
        ((r"(message PaymentMade \{[^}]*int64 amount = )3;", r"\g<1>30;"), "amount"),  # renumbered field
        ((r"(message PaymentMade \{[^}]*)int64 amount = 3;", r"\1string amount = 3;"), "amount"),  # retyped
    ],
    ids=["renumbered-event", "renumbered-field", "retyped-field"],
)
def test_buf_breaking_fails_on_a_renumbering(tmp_path: Path, edit: tuple[str, str], complaint: str) -> None:
    result = _buf_breaking(tmp_path, edit)
    assert result.returncode != 0
    assert complaint in result.stdout + result.stderr


def _fields(image: bytes) -> set[tuple[str, str, int]]:
    """Every field of a buf image, (message, field, number), nested messages by their full name."""
    found: set[tuple[str, str, int]] = set()

    def walk(prefix: str, messages: Any) -> None:
        for message in messages:
            name = f"{prefix}.{message.name}"
            found.update((name, f.name, f.number) for f in message.field)
            walk(name, message.nested_type)

    for file in descriptor_pb2.FileDescriptorSet.FromString(image).file:  # a buf image reads as one
        walk(file.package, file.message_type)
    return found


def test_every_field_of_the_schema_is_in_the_released_baseline(tmp_path: Path) -> None:
    """A field that landed without `make proto-release` is not guarded by buf breaking: its number could
    still move. Service-API fields are released with the commit that adds them (docs/SCHEMA.md)."""
    assert BUF.exists(), "buf is missing: `make proto-check` (or `make test`) installs it"
    built = tmp_path / "now.binpb"
    subprocess.run([str(BUF), "build", "--exclude-source-info", "-o", str(built)], cwd=ROOT, check=True)
    released = (ROOT / "proto" / "released" / "monopoly-v1.binpb").read_bytes()
    unreleased = _fields(built.read_bytes()) - _fields(released)
    assert not unreleased, f"fields not in the released baseline (run make proto-release): {sorted(unreleased)}"
