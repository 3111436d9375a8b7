"""Stream messages -> column batches, driven by the protobuf descriptors of `monopoly.v1`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

import pyarrow as pa
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError

from engine import codec
from engine.config import TableConfig
from monopoly.v1 import common_pb2, events_pb2
from servicekit.errors import BadRequest
from servicekit.wire import check_envelope


@dataclass(frozen=True, slots=True)
class Raw:
    """One stream message: where it sits in the stream, and its bytes (an `EventBatch`)."""

    stream_seq: int
    subject: str
    published: datetime
    data: bytes


_SCALAR: dict[int, pa.DataType] = {
    FieldDescriptor.TYPE_INT64: pa.int64(),
    FieldDescriptor.TYPE_INT32: pa.int32(),
    FieldDescriptor.TYPE_SINT64: pa.int64(),
    FieldDescriptor.TYPE_UINT64: pa.uint64(),
    FieldDescriptor.TYPE_STRING: pa.string(),
    FieldDescriptor.TYPE_BOOL: pa.bool_(),
    FieldDescriptor.TYPE_DOUBLE: pa.float64(),
    FieldDescriptor.TYPE_ENUM: pa.string(),  # the value's name: readable in SQL
}

KEY = [pa.field("table_id", pa.string(), nullable=False), pa.field("seq", pa.int64(), nullable=False)]
ENVELOPE = pa.schema(
    [
        *KEY,
        pa.field("stream_seq", pa.int64()),
        pa.field("type", pa.string()),
        pa.field("game_ms", pa.int64()),
        pa.field("clock_scale", pa.int64()),
        pa.field("wall_time", pa.timestamp("ms", tz="UTC")),
        pa.field("schema_version", pa.int32()),
    ]
)
TABLES = pa.schema(
    [
        pa.field("table_id", pa.string(), nullable=False),
        pa.field("ruleset", pa.string()),
        pa.field("mode", pa.string()),
        pa.field("board", pa.string()),
        pa.field("players", pa.int64()),
        pa.field("player_names", pa.list_(pa.string())),
        pa.field("seed", pa.int64()),
        pa.field("starting_cash", pa.int64()),
        pa.field("casino_stake", pa.int64()),
        pa.field("casino_payout_base", pa.int64()),
    ]
)
SQUARES = pa.schema(
    [
        pa.field("table_id", pa.string(), nullable=False),
        pa.field("square", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("colour_group", pa.int64()),
        pa.field("price", pa.int64()),
        pa.field("group_name", pa.string()),
    ]
)
DEAD = pa.schema(
    [
        pa.field("stream_seq", pa.int64(), nullable=False),
        pa.field("subject", pa.string()),
        pa.field("published", pa.timestamp("ms", tz="UTC")),
        pa.field("error", pa.string()),
        pa.field("data", pa.binary()),
    ]
)


def snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def _arrow_type(f: FieldDescriptor) -> pa.DataType:
    scalar = _SCALAR.get(f.type, pa.string())
    return pa.list_(scalar) if f.is_repeated else scalar


@cache
def event_types() -> dict[str, Descriptor]:
    """Each event type of the schema this reader knows: its table name -> message descriptor."""
    oneof = events_pb2.EventPayload.DESCRIPTOR.oneofs_by_name["kind"]
    return {f.name: f.message_type for f in oneof.fields}


def columns_of(message: Descriptor) -> list[FieldDescriptor]:
    """The fields of an event type that become columns: all but nested messages (the board's squares
    of TableCreated, which are the `board_squares` table)."""
    return [f for f in message.fields if f.type != FieldDescriptor.TYPE_MESSAGE]


@cache
def _columns(kind: str) -> tuple[FieldDescriptor, ...]:
    return tuple(columns_of(event_types()[kind]))


def schema_of(message: Descriptor) -> pa.Schema:
    return pa.schema([*KEY, *(pa.field(f.name, _arrow_type(f)) for f in columns_of(message))])


@dataclass
class Batch:
    """The rows of some stream messages, by table; `last_stream_seq` is the highest seen."""

    envelopes: dict[str, list[Any]] = field(default_factory=lambda: {f.name: [] for f in ENVELOPE})
    by_type: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    tables: list[dict[str, Any]] = field(default_factory=list)
    squares: list[dict[str, Any]] = field(default_factory=list)
    dead: list[dict[str, Any]] = field(default_factory=list)
    last_stream_seq: int = 0
    events: int = 0

    def arrow(self) -> dict[str, pa.Table]:
        """Every non-empty table of the batch as an Arrow table with its schema."""
        types = event_types()
        out: dict[str, pa.Table] = {}
        if self.events:
            out["events"] = pa.table(self.envelopes, schema=ENVELOPE)
        for name, columns in self.by_type.items():
            out[name] = pa.table(columns, schema=schema_of(types[name]))
        if self.tables:
            out["tables"] = pa.Table.from_pylist(self.tables, schema=TABLES)
        if self.squares:
            out["board_squares"] = pa.Table.from_pylist(self.squares, schema=SQUARES)
        if self.dead:
            out["dead_letters"] = pa.Table.from_pylist(self.dead, schema=DEAD)
        return out


def _value(msg: Any, f: FieldDescriptor) -> Any:
    if f.has_presence and not f.is_repeated and not msg.HasField(f.name):
        return None  # an optional field its writer did not have (PaymentMade.square before schema 4): NULL
    v = getattr(msg, f.name)
    if f.type == FieldDescriptor.TYPE_ENUM:
        values = f.enum_type.values_by_number
        if f.is_repeated:
            return [values[x].name if x in values else str(x) for x in v]
        if v == 0 and f.name.endswith("_code"):  # written before the enum: the name of its string twin's value
            text = getattr(msg, f.name.removesuffix("_code"), "")
            prefix = values[0].name.removesuffix("UNSPECIFIED")
            if text and prefix + text.upper() in f.enum_type.values_by_name:
                return prefix + text.upper()
        return values[v].name if v in values else str(v)
    if f.is_repeated:
        return list(v)
    return v


def _table_rows(batch: Batch, env: common_pb2.Envelope, created: Any) -> None:
    """The table's dimension rows from its `TableCreated` (mode, rule set, board, players): its typed
    fields, or for one written before schema 4, its config."""
    config: TableConfig = codec.from_data(TableConfig, json.loads(created.config_json))
    if created.squares:
        ruleset, mode, board, group_names = created.ruleset, created.mode, created.board, list(created.group_names)
        squares = [(s.index, s.name, s.kind, s.group, s.price) for s in created.squares]
    else:
        ruleset, mode, board, group_names = (
            config.ruleset,
            config.mode,
            config.board.name,
            list(config.board.group_names),
        )
        squares = [(s.index, s.name, str(s.kind), s.group, s.price) for s in config.board.squares]
    batch.tables.append(
        {
            "table_id": env.table_id,
            "ruleset": ruleset,
            "mode": mode,
            "board": board,
            "players": len(created.players),
            "player_names": list(created.players),
            "seed": created.seed,
            "starting_cash": config.starting_cash,
            "casino_stake": config.casino.stake,
            "casino_payout_base": config.casino.payout_base,
        }
    )
    for index, name, kind, group, price in squares:
        batch.squares.append(
            {
                "table_id": env.table_id,
                "square": index,
                "name": name,
                "kind": kind,
                "colour_group": group,
                "price": price,
                "group_name": group_names[group - 1] if 0 < group <= len(group_names) else None,
            }
        )


def add(batch: Batch, raw: Raw, seen: set[tuple[str, int]]) -> None:
    """The rows of one message into `batch`; a message that does not decode becomes a dead letter.
    `seen` (table_id, seq) keys are skipped: a message published twice counts once."""
    batch.last_stream_seq = max(batch.last_stream_seq, raw.stream_seq)
    types = event_types()
    try:
        decoded = common_pb2.EventBatch.FromString(raw.data)
        rows = []
        for env in decoded.events:
            check_envelope(env)
            kind = env.payload.WhichOneof("kind")
            if kind is None or kind not in types:
                raise BadRequest(f"event {env.event_id}: no event type this reader knows")
            rows.append((env, kind, getattr(env.payload, kind)))
        if not rows:
            raise BadRequest("an EventBatch without events")
        if rows[0][1] == "table_created":
            created = rows[0][2]
            codec.from_data(TableConfig, json.loads(created.config_json))  # a config that cannot be read: dead
    except (DecodeError, BadRequest, ValueError, KeyError, TypeError) as exc:
        batch.dead.append(
            {
                "stream_seq": raw.stream_seq,
                "subject": raw.subject,
                "published": raw.published,
                "error": f"{type(exc).__name__}: {exc}",
                "data": raw.data,
            }
        )
        return
    for env, kind, msg in rows:
        key = (env.table_id, env.seq)
        if key in seen:
            continue
        seen.add(key)
        batch.events += 1
        e = batch.envelopes
        e["table_id"].append(env.table_id)
        e["seq"].append(env.seq)
        e["stream_seq"].append(raw.stream_seq)
        e["type"].append(env.type)
        e["game_ms"].append(env.occurred_at.game_ms)
        e["clock_scale"].append(env.occurred_at.clock_scale)
        e["wall_time"].append(env.occurred_at.wall_unix_ms)
        e["schema_version"].append(env.schema_version)
        fields = _columns(kind)
        columns = batch.by_type.get(kind)
        if columns is None:
            columns = batch.by_type[kind] = {"table_id": [], "seq": [], **{f.name: [] for f in fields}}
        columns["table_id"].append(env.table_id)
        columns["seq"].append(env.seq)
        for f in fields:
            columns[f.name].append(_value(msg, f))
        if kind == "table_created":
            _table_rows(batch, env, msg)


def build(raws: Iterable[Raw], seen: set[tuple[str, int]]) -> Batch:
    batch = Batch()
    for raw in raws:
        add(batch, raw, seen)
    return batch
