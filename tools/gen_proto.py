"""Write proto/monopoly/v1/events.proto and commands.proto from the engine's dataclasses.

One message per engine event and per command and an `EventPayload` /
`CommandPayload` oneof over all of them. Field numbers are frozen: they live in
`proto/monopoly/v1/field_numbers.json` (the lock), assigned once and never
reused. A field or type the lock does not know gets the next free number of its
message; one that left the engine becomes `reserved` (number and name), so no
later field can take it. Every change of the numbering bumps the lock's
`schema_version`, which the envelope carries (docs/SCHEMA.md).

`make proto` runs this, then protoc; a test fails when the committed files are
stale, and `make proto-check` (buf breaking) against the released baseline
catches what the lock cannot, such as a field changing its type.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import json
import re
import sys
import tokenize
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "libs"))
sys.path.insert(0, str(ROOT / "tools"))

from proto_docs import FIELD_DOCS, MESSAGE_DOCS, NAME_DOCS  # noqa: E402

from engine import COMMAND_TYPES, EVENT_TYPES, codec  # noqa: E402

OUT = ROOT / "proto" / "monopoly" / "v1"
LOCK = OUT / "field_numbers.json"
SCALARS = {int: "int64", str: "string", bool: "bool", float: "double"}
#: The envelope's schema_version of events written before the numbers were frozen (docs/SCHEMA.md).
UNFROZEN_SCHEMA_VERSION = 1

Lock = dict[str, Any]


def _field(name: str, tp: object) -> tuple[str, str]:
    """(proto type, proto field name) of a dataclass field."""
    if tp in SCALARS:
        return SCALARS[tp], name  # type: ignore[index]
    origin = typing.get_origin(tp)
    if origin is tuple:
        (inner, *_rest) = typing.get_args(tp)
        return f"repeated {SCALARS[inner]}", name
    # Nested values (a TableConfig) travel as canonical JSON: the engine's codec reads them back.
    return "string", f"{name}_json"


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


# -- documentation from the engine's source ------------------------------------------------


def _source_comments(cls: type) -> dict[str, str]:
    """The comment of each field in the class body: `#:` lines above it, else a trailing `# ...`."""
    path = codec._source_path(sys.modules[cls.__module__])
    text = Path(path).read_text()
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string
    lines = text.splitlines()
    (node,) = [n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    out: dict[str, str] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        above: list[str] = []
        line = stmt.lineno - 1
        while line >= 1 and lines[line - 1].strip().startswith("#:"):
            above.insert(0, lines[line - 1].strip().removeprefix("#:").strip())
            line -= 1
        trailing = comments.get(stmt.lineno, "")
        if above:
            out[stmt.target.id] = " ".join(above)
        elif trailing and not lines[stmt.lineno - 1].strip().startswith("#"):
            out[stmt.target.id] = trailing.lstrip("#").strip()
    return out


def _message_doc(name: str, cls: type) -> str:
    """The table's text, else the class's own docstring (a dataclass without one has its signature)."""
    own = cls.__dict__.get("__doc__") or ""
    if own.startswith(f"{cls.__name__}("):
        own = ""
    return MESSAGE_DOCS.get(name) or " ".join(inspect.cleandoc(own).split())


def _field_doc(message: str, field: str, comments: dict[str, str]) -> str:
    return FIELD_DOCS.get((message, field)) or comments.get(field) or NAME_DOCS.get(field, "")


def _comment(text: str, indent: str) -> list[str]:
    """`text` as `//` lines of at most 100 columns."""
    if not text:
        return []
    out, line = [], ""
    for word in text.split():
        if line and len(indent) + 3 + len(line) + 1 + len(word) > 100:
            out.append(f"{indent}// {line}")
            line = word
        else:
            line = f"{line} {word}".strip()
    out.append(f"{indent}// {line}")
    return out


# -- the lock --------------------------------------------------------------------------------


def numbers_from_proto(text: str) -> Lock:
    """The numbering of a committed generated .proto: how the lock was first filled."""
    messages: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for raw in text.splitlines():
        line = raw.split("//")[0].strip()
        if m := re.match(r"message (\w+) \{", line):
            current = messages.setdefault(m.group(1), {})
        elif current is not None and (m := re.match(r"(?:repeated )?\w+ (\w+) = (\d+);", line)):
            current[m.group(1)] = int(m.group(2))
    return {"messages": messages, "reserved": {}}


def _assign(lock: Lock, message: str, names: list[str]) -> dict[str, int]:
    """The number of each of `names` in `message`: the lock's, else the next free one. Names the
    lock has that are gone move to its `reserved` (mutates `lock`)."""
    known: dict[str, int] = lock["messages"].setdefault(message, {})
    reserved: dict[str, int] = lock["reserved"].setdefault(message, {})
    taken = set(known.values()) | set(reserved.values())
    for name in names:
        if name in reserved:
            raise SystemExit(f"{message}.{name} was removed before; a field that returns needs a new name")
        if name not in known:
            number = max(taken, default=0) + 1
            known[name] = number
            taken.add(number)
    for name in [n for n in known if n not in names]:
        reserved[name] = known.pop(name)
    if not reserved:
        del lock["reserved"][message]
    else:
        lock["reserved"][message] = reserved
    return dict(known)


def update_lock(lock: Lock, registries: dict[str, dict[str, type]]) -> Lock:
    """The lock after numbering `registries` (kind -> {type name: class}); the schema version
    moves by one when any number was assigned or reserved."""
    new: Lock = json.loads(json.dumps(lock))
    for kind, types in registries.items():
        for name, cls in types.items():
            _assign(new, name, [_field(f.name, codec.field_types(cls)[f.name])[1] for f in _init_fields(cls)])
        _assign(new, f"{kind}Payload", [_snake(n) for n in sorted(types)])
    current = {n for types in registries.values() for n in types} | {f"{k}Payload" for k in registries}
    for message in set(new["messages"]) - current:  # a type that left the engine: its numbers stay reserved forever
        new["reserved"].setdefault(message, {}).update(new["messages"].pop(message))
    if dump_lock(new) != dump_lock(lock):
        new["schema_version"] = lock["schema_version"] + 1
    return new


def _init_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]


def load_lock() -> Lock:
    if LOCK.exists():
        lock: Lock = json.loads(LOCK.read_text())
        return lock
    # The first lock: the numbers of the committed files, frozen as schema version 2 (docs/SCHEMA.md).
    lock = {"schema_version": UNFROZEN_SCHEMA_VERSION + 1, "messages": {}, "reserved": {}}
    for name in ("events.proto", "commands.proto"):
        if (OUT / name).exists():
            lock["messages"].update(numbers_from_proto((OUT / name).read_text())["messages"])
    return lock


def dump_lock(lock: Lock) -> str:
    ordered = {
        "schema_version": lock["schema_version"],
        "messages": {m: dict(sorted(f.items(), key=lambda kv: kv[1])) for m, f in sorted(lock["messages"].items())},
        "reserved": {m: dict(sorted(f.items(), key=lambda kv: kv[1])) for m, f in sorted(lock["reserved"].items())},
    }
    return json.dumps(ordered, indent=1) + "\n"


# -- rendering -------------------------------------------------------------------------------


def _reserved_lines(lock: Lock, message: str, indent: str) -> list[str]:
    reserved: dict[str, int] = lock["reserved"].get(message, {})
    if not reserved:
        return []
    numbers = ", ".join(str(n) for n in sorted(reserved.values()))
    names = ", ".join(f'"{n}"' for n in sorted(reserved, key=reserved.__getitem__))
    return [f"{indent}reserved {numbers};", f"{indent}reserved {names};"]


def render(kind: str, types: dict[str, type], doc: str, lock: Lock) -> str:
    """The .proto of `types` under the numbering of `lock` (which must already number them)."""
    lines = [
        "// Generated by tools/gen_proto.py from the engine's dataclasses: do not edit by hand.",
        "// Field numbers are frozen in field_numbers.json (docs/SCHEMA.md).",
        f"// {doc}",
        'syntax = "proto3";',
        "",
        "package monopoly.v1;",
        "",
    ]
    for name in sorted(types):
        cls = types[name]
        hints = codec.field_types(cls)  # as declared in the source, compiled or not
        comments = _source_comments(cls)
        numbers = lock["messages"][name]
        lines += _comment(_message_doc(name, cls), "")
        lines.append(f"message {name} {{")
        lines += _reserved_lines(lock, name, "  ")
        for f in _init_fields(cls):
            proto_type, proto_name = _field(f.name, hints[f.name])
            lines += _comment(_field_doc(name, f.name, comments), "  ")
            lines.append(f"  {proto_type} {proto_name} = {numbers[proto_name]};")
        lines.append("}")
        lines.append("")
    payload = f"{kind}Payload"
    lines.append(f"// Exactly one {kind.lower()}: the field name is the type in snake_case.")
    lines.append(f"message {payload} {{")
    lines += _reserved_lines(lock, payload, "  ")
    lines.append("  oneof kind {")
    numbers = lock["messages"][payload]
    for name in sorted(types, key=lambda n: numbers[_snake(n)]):
        lines.append(f"    {name} {_snake(name)} = {numbers[_snake(name)]};")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


EVENTS_DOC = "Every fact of a game: the stream analytics consume, wrapped in common.proto's Envelope."
COMMANDS_DOC = "What a seat asks the table to do."
REGISTRIES = {"Event": EVENT_TYPES, "Command": COMMAND_TYPES}


def reference(types: dict[str, type], lock: Lock) -> str:
    """docs/SCHEMA-REFERENCE.md: every event type and field with its number, type and meaning."""
    payload = lock["messages"]["EventPayload"]
    out = [
        "# Event schema reference (monopoly.v1)",
        "",
        "Generated by `tools/gen_proto.py` (`make proto`) from the same text as the comments of",
        "`proto/monopoly/v1/events.proto`: do not edit by hand. Numbering, versions and the",
        f"compatibility promise: [SCHEMA.md](SCHEMA.md). Schema version {lock['schema_version']}.",
        "",
        "Units: seats are indexes 0..players-1 in the order of `TableCreated.players` (-1: the bank or",
        "nobody); squares are board indexes 0-39 from Start (B1); money is whole dollars in the table's",
        "scale (the online board's amounts are the classic ones x10, B2); times are game milliseconds",
        "since the table was created (E6). Rule IDs refer to the rules document.",
        "",
        "| event | case | meaning |",
        "|---|---|---|",
    ]
    for name in sorted(types, key=lambda n: payload[_snake(n)]):
        anchor = name.lower()
        out.append(f"| [{name}](#{anchor}) | {payload[_snake(name)]} | {_message_doc(name, types[name])} |")
    for name in sorted(types):
        cls = types[name]
        hints = codec.field_types(cls)
        comments = _source_comments(cls)
        numbers = lock["messages"][name]
        out += ["", f"## {name}", "", _message_doc(name, cls), ""]
        fields = _init_fields(cls)
        if not fields:
            out.append("No fields.")
            continue
        out += ["| # | field | type | meaning |", "|---|---|---|---|"]
        for f in fields:
            proto_type, proto_name = _field(f.name, hints[f.name])
            doc = _field_doc(name, f.name, comments).replace("|", "\\|")
            out.append(f"| {numbers[proto_name]} | `{proto_name}` | {proto_type} | {doc} |")
        reserved = lock["reserved"].get(name, {})
        if reserved:
            out += ["", "Reserved: " + ", ".join(f"{n} (`{k}`)" for k, n in sorted(reserved.items()))]
    return "\n".join(out) + "\n"


def generate(lock: Lock) -> tuple[Lock, dict[Path, str]]:
    """The new lock and the text of each generated file (by path)."""
    new = update_lock(lock, REGISTRIES)
    return new, {
        OUT / "events.proto": render("Event", EVENT_TYPES, EVENTS_DOC, new),
        OUT / "commands.proto": render("Command", COMMAND_TYPES, COMMANDS_DOC, new),
        LOCK: dump_lock(new),
        ROOT / "docs" / "SCHEMA-REFERENCE.md": reference(EVENT_TYPES, new),
    }


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    _lock, files = generate(load_lock())
    for path, text in files.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
