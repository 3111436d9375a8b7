"""Write proto/monopoly/v1/events.proto and commands.proto from the engine's dataclasses.

One message per engine event and per command and an `EventPayload` /
`CommandPayload` oneof over all of them. An engine enum becomes a proto enum
(values `<ENUM>_<MEMBER>`, 0 the unspecified one) and its field travels twice:
its value as the string field of the field's name (as before the values were
typed) and the enum as `<name>_code`. An event's properties are facts derived
from its fields (`TableCreated.mode`), written as typed fields after them; a
tuple of dataclasses (the board's squares) becomes a repeated message of its
own. Field numbers are frozen: they live in
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
import enum
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

from engine import COMMAND_TYPES, EVENT_TYPES, Event, codec  # noqa: E402

OUT = ROOT / "proto" / "monopoly" / "v1"
LOCK = OUT / "field_numbers.json"
SCALARS = {int: "int64", str: "string", bool: "bool", float: "double"}
#: The envelope's schema_version of events written before the numbers were frozen (docs/SCHEMA.md).
UNFROZEN_SCHEMA_VERSION = 1
#: Proto names of engine classes whose own name is too general for the package (board.Kind).
PROTO_NAMES = {"Kind": "SquareKind", "Square": "BoardSquare"}
#: Fields appended after events with them were stored, whose default is not the proto zero: `optional`
#: on the wire, so a reader tells "not recorded" (absent: the dataclass default) from 0 (Start).
OPTIONAL = frozenset({("PaymentDue", "square"), ("PaymentMade", "square")})

Lock = dict[str, Any]


def proto_name(cls: type) -> str:
    return PROTO_NAMES.get(cls.__name__, cls.__name__)


def _is_enum(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _fields_of(name: str, tp: object) -> list[tuple[str, str]]:
    """(proto type, proto field name) of each proto field a dataclass field becomes."""
    if tp in SCALARS:
        return [(SCALARS[tp], name)]  # type: ignore[index]
    if _is_enum(tp):  # the value as before it was typed, and the enum
        return [("string", name), (proto_name(tp), f"{name}_code")]  # type: ignore[arg-type]
    origin = typing.get_origin(tp)
    if origin is tuple:
        (inner, *_rest) = typing.get_args(tp)
        if dataclasses.is_dataclass(inner):
            return [(f"repeated {proto_name(inner)}", name)]  # type: ignore[arg-type]
        return [(f"repeated {SCALARS[inner]}", name)]
    # Nested values (a TableConfig) travel as canonical JSON: the engine's codec reads them back.
    return [("string", f"{name}_json")]


def _members(cls: type) -> list[tuple[str, object]]:
    """(name, type) of what a class puts on the wire: its init fields, then an event's properties."""
    hints = codec.field_types(cls)  # as declared in the source, compiled or not
    out: list[tuple[str, object]] = [(f.name, hints[f.name]) for f in _init_fields(cls)]
    if issubclass(cls, Event):
        out += list(codec.derived_types(cls).items())
    return out


def proto_fields(message: str, cls: type) -> list[tuple[str, str, str]]:
    """(proto type, proto name, engine member) of each field of `cls`'s message."""
    out = []
    for member, tp in _members(cls):
        for proto_type, name in _fields_of(member, tp):
            label = "optional " if (message, name) in OPTIONAL else ""
            out.append((label + proto_type, name, member))
    return out


def nested_types(registry: dict[str, type]) -> tuple[dict[str, type], dict[str, type]]:
    """The messages (tuples of dataclasses) and enums the types of `registry` use, by proto name."""
    messages: dict[str, type] = {}
    enums: dict[str, type] = {}

    def visit(tp: object) -> None:
        if isinstance(tp, type) and _is_enum(tp):
            enums[proto_name(tp)] = tp
        elif typing.get_origin(tp) is tuple:
            inner = typing.get_args(tp)[0]
            if isinstance(inner, type) and dataclasses.is_dataclass(inner) and proto_name(inner) not in messages:
                messages[proto_name(inner)] = inner
                for _name, sub in _members(inner):
                    visit(sub)

    for cls in registry.values():
        for _name, tp in _members(cls):
            visit(tp)
    return messages, enums


def enum_prefix(name: str) -> str:
    """`PaymentReason` -> `PAYMENT_REASON`: the prefix of its values (proto enum values share a scope)."""
    return _snake(name).upper()


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


# -- documentation from the engine's source ------------------------------------------------


def _source_comments(cls: type) -> dict[str, str]:
    """The comment of each field (an enum's: member) in the class body: `#:` lines above it, else
    a trailing `# ...`."""
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
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
        else:
            continue
        above: list[str] = []
        line = stmt.lineno - 1
        while line >= 1 and lines[line - 1].strip().startswith("#:"):
            above.insert(0, lines[line - 1].strip().removeprefix("#:").strip())
            line -= 1
        trailing = comments.get(stmt.lineno, "")
        if above:
            out[name] = " ".join(above)
        elif trailing and not lines[stmt.lineno - 1].strip().startswith("#"):
            out[name] = trailing.lstrip("#").strip()
    return out


def _message_doc(name: str, cls: type) -> str:
    """The table's text, else the class's docstring, read from its source: the compiled build's
    classes do not all keep theirs (a dataclass without one has its signature as `__doc__`)."""
    return MESSAGE_DOCS.get(name) or " ".join(inspect.cleandoc(_source_docstring(cls)).split())


def _source_docstring(cls: type) -> str:
    text = Path(codec._source_path(sys.modules[cls.__module__])).read_text()
    (node,) = [n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    return ast.get_docstring(node, clean=False) or ""


def _field_doc(message: str, field: str, comments: dict[str, str], proto: str = "") -> str:
    """The doc of the engine member `field`; its enum twin (`proto` = `<field>_code`) says so."""
    if proto and proto != field and proto.endswith("_code"):
        return f"`{field}` as the enum; UNSPECIFIED in events written before it (read `{field}`)."
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


def _assign_values(lock: Lock, name: str, members: list[str]) -> None:
    """Enum value numbers, like field numbers: kept, appended (from 1; 0 is unspecified), a removed
    value reserved (mutates `lock`)."""
    known: dict[str, int] = lock.setdefault("enums", {}).setdefault(name, {})
    reserved: dict[str, int] = lock.setdefault("reserved_values", {}).setdefault(name, {})
    taken = set(known.values()) | set(reserved.values())
    for member in members:
        if member in reserved:
            raise SystemExit(f"{name}.{member} was removed before; a value that returns needs a new name")
        if member not in known:
            known[member] = max(taken, default=0) + 1
            taken.add(known[member])
    for member in [m for m in known if m not in members]:
        reserved[member] = known.pop(member)
    if not reserved:
        del lock["reserved_values"][name]


def numbers_from_proto(text: str) -> Lock:
    """The numbering of a committed generated .proto: how the lock was first filled."""
    messages: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for raw in text.splitlines():
        line = raw.split("//")[0].strip()
        if m := re.match(r"message (\w+) \{", line):
            current = messages.setdefault(m.group(1), {})
        elif current is not None and (m := re.match(r"(?:repeated |optional )?\w+ (\w+) = (\d+);", line)):
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
    current: set[str] = set()
    for kind, types in registries.items():
        messages, enums = nested_types(types)
        for name, cls in {**types, **messages}.items():
            _assign(new, name, [proto for _t, proto, _m in proto_fields(name, cls)])
            current.add(name)
        for name, cls in enums.items():
            _assign_values(new, name, [m.name for m in cls])  # type: ignore[attr-defined]
        _assign(new, f"{kind}Payload", [_snake(n) for n in sorted(types)])
        current.add(f"{kind}Payload")
    for name in set(new.get("enums", {})) - {n for t in registries.values() for n in nested_types(t)[1]}:
        new.setdefault("reserved_values", {}).setdefault(name, {}).update(new["enums"].pop(name))
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
    def by_number(section: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        return {m: dict(sorted(f.items(), key=lambda kv: kv[1])) for m, f in sorted(section.items())}

    ordered = {
        "schema_version": lock["schema_version"],
        "messages": by_number(lock["messages"]),
        "reserved": by_number(lock["reserved"]),
    }
    if lock.get("enums"):
        ordered["enums"] = by_number(lock["enums"])
    if lock.get("reserved_values"):
        ordered["reserved_values"] = by_number(lock["reserved_values"])
    return json.dumps(ordered, indent=1) + "\n"


# -- rendering -------------------------------------------------------------------------------


def _reserved_lines(lock: Lock, message: str, indent: str) -> list[str]:
    reserved: dict[str, int] = lock["reserved"].get(message, {})
    if not reserved:
        return []
    numbers = ", ".join(str(n) for n in sorted(reserved.values()))
    names = ", ".join(f'"{n}"' for n in sorted(reserved, key=reserved.__getitem__))
    return [f"{indent}reserved {numbers};", f"{indent}reserved {names};"]


def _enum_lines(name: str, cls: type, lock: Lock) -> list[str]:
    comments = _source_comments(cls)
    prefix = enum_prefix(name)
    lines = _comment(_message_doc(name, cls), "")
    lines.append(f"enum {name} {{")
    reserved: dict[str, int] = lock.get("reserved_values", {}).get(name, {})
    if reserved:
        lines.append(f"  reserved {', '.join(str(n) for n in sorted(reserved.values()))};")
        lines.append(f"  reserved {', '.join(f'{chr(34)}{prefix}_{m}{chr(34)}' for m in sorted(reserved))};")
    lines.append("  // Not recorded: a field written before this enum existed (read its string twin).")
    lines.append(f"  {prefix}_UNSPECIFIED = 0;")
    for member, number in lock["enums"][name].items():
        value = cls[member].value  # type: ignore[index]
        doc = f'"{value}"' + (f": {comments[member]}" if member in comments else "")
        lines += _comment(doc, "  ")
        lines.append(f"  {prefix}_{member} = {number};")
    lines.append("}")
    lines.append("")
    return lines


def _message_lines(name: str, cls: type, lock: Lock) -> list[str]:
    comments = _source_comments(cls)
    numbers = lock["messages"][name]
    lines = _comment(_message_doc(name, cls), "")
    lines.append(f"message {name} {{")
    lines += _reserved_lines(lock, name, "  ")
    for proto_type, proto, member in proto_fields(name, cls):
        lines += _comment(_field_doc(name, member, comments, proto), "  ")
        lines.append(f"  {proto_type} {proto} = {numbers[proto]};")
    lines.append("}")
    lines.append("")
    return lines


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
    messages, enums = nested_types(types)
    for name in sorted(enums):
        lines += _enum_lines(name, enums[name], lock)
    for name in sorted({**types, **messages}):
        lines += _message_lines(name, {**types, **messages}[name], lock)
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
    messages, enums = nested_types(types)
    for name in sorted({**types, **messages}):
        cls = {**types, **messages}[name]
        comments = _source_comments(cls)
        numbers = lock["messages"][name]
        out += ["", f"## {name}", "", _message_doc(name, cls), ""]
        fields = proto_fields(name, cls)
        if not fields:
            out.append("No fields.")
            continue
        out += ["| # | field | type | meaning |", "|---|---|---|---|"]
        for proto_type, proto, member in fields:
            doc = _field_doc(name, member, comments, proto).replace("|", "\\|")
            out.append(f"| {numbers[proto]} | `{proto}` | {proto_type} | {doc} |")
        reserved = lock["reserved"].get(name, {})
        if reserved:
            out += ["", "Reserved: " + ", ".join(f"{n} (`{k}`)" for k, n in sorted(reserved.items()))]
    out += ["", "## Enums", "", "Value 0 of every enum is `<PREFIX>_UNSPECIFIED`: not recorded (an event written"]
    out += ["before the field existed; its string twin of the same name holds the value).", ""]
    for name in sorted(enums):
        cls = enums[name]
        comments = _source_comments(cls)
        prefix = enum_prefix(name)
        out += [f"### {name}", "", _message_doc(name, cls), "", "| # | value | string | meaning |", "|---|---|---|---|"]
        for member, number in lock["enums"][name].items():
            doc = comments.get(member, "").replace("|", "\\|")
            out.append(f"| {number} | `{prefix}_{member}` | `{cls[member].value}` | {doc} |")  # type: ignore[index]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


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
