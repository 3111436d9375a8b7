"""JSON round trip for events, commands, configs and table state.

One generic codec over the dataclasses' field types: a value is written as
plain JSON (dataclasses as objects, tuples as lists, enums as their value)
and read back into the exact types, so `from_json(to_json(x)) == x`.
Events and commands carry their type name under the key ``"type"``.

The field types are read from the classes' source (`field_types`), not from
their runtime annotations: the native build (`make compile`) erases those
(`tuple[int, ...]` reads as `tuple`), and the codec, the wire format and the
proto generator must see the same types compiled or not.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.machinery
import json
import os
import sys
import types
import typing
from enum import Enum
from functools import cache
from typing import Any

from .commands import Command
from .events import Event
from .game import COMMAND_TYPES, EVENT_TYPES
from .state import TableState


@cache
def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    hints = field_types(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls) if f.init)


@cache
def field_types(cls: type) -> dict[str, Any]:
    """The declared type of each field of a dataclass, as `typing.get_type_hints` gives it.

    Read from the source of the class and its bases (the annotated assignments
    in the class body, `ClassVar`s left out) and evaluated in the module's
    namespace, so a class compiled with mypyc, whose runtime annotations are
    erased, gives the same types as the interpreted one.
    """
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[:-1]):  # bases first: a subclass's declaration wins
        module = sys.modules[klass.__module__]
        for name, annotation in _declared(_source_path(module), klass.__qualname__).items():
            hints[name] = eval(annotation, vars(module))  # the project's own source, as get_type_hints does
    return hints


def derived_types(cls: type) -> dict[str, Any]:
    """The return type of each property of an event class, in declaration order: facts derived
    from its fields (`TableCreated.mode` from its config) that the wire also writes as typed
    fields. Read from the source like `field_types`; never part of the JSON or of equality."""
    module = sys.modules[cls.__module__]
    body: list[ast.stmt] = _parse(_source_path(module)).body
    for part in cls.__qualname__.split("."):
        (node,) = [n for n in body if isinstance(n, ast.ClassDef) and n.name == part]
        body = node.body
    out: dict[str, Any] = {}
    for stmt in body:
        if (
            isinstance(stmt, ast.FunctionDef)
            and stmt.returns is not None
            and any(isinstance(d, ast.Name) and d.id == "property" for d in stmt.decorator_list)
        ):
            out[stmt.name] = eval(ast.unparse(stmt.returns), vars(module))  # the project's own source
    return out


def _source_path(module: types.ModuleType) -> str:
    path = module.__file__ or ""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if path.endswith(suffix):
            # The native build: its source lies next to it, in the package's directory. Found from
            # the module's name, since a module another compiled module imports gets its __file__
            # from the build's shared library, not from where it lies.
            top, *rest = module.__name__.split(".")
            return os.path.join(sys.modules[top].__path__[0], *rest) + ".py"
    return path


@cache
def _declared(path: str, qualname: str) -> dict[str, str]:
    """The field annotations (source text) of the class `qualname` defined in the file at `path`."""
    body: list[ast.stmt] = _parse(path).body
    for part in qualname.split("."):
        (node,) = [n for n in body if isinstance(n, ast.ClassDef) and n.name == part]
        body = node.body
    out = {}
    for stmt in body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            annotation = ast.unparse(stmt.annotation)
            if not annotation.startswith(("ClassVar", "typing.ClassVar")):
                out[stmt.target.id] = annotation
    return out


@cache
def _parse(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as source:
        return ast.parse(source.read(), path)


def to_data(value: Any) -> Any:
    """A JSON-ready copy of `value`."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: to_data(getattr(value, name)) for name, _ in _fields(type(value))}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    return value


def from_data(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` from `to_data` output."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return from_data(inner, data)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_data(args[0], v) for v in data)
        return tuple(from_data(a, v) for a, v in zip(args, data, strict=True))
    if origin is list:
        (arg,) = typing.get_args(tp)
        return [from_data(arg, v) for v in data]
    if origin is dict:
        key_t, val_t = typing.get_args(tp)
        return {from_data(key_t, k): from_data(val_t, v) for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return tp(**{name: from_data(ftp, data[name]) for name, ftp in _fields(tp) if name in data})
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    if tp is int and isinstance(data, bool):
        raise TypeError("expected an int, got a bool")
    if tp in (int, str, bool, float) and not isinstance(data, tp):
        raise TypeError(f"expected {tp.__name__}, got {type(data).__name__}")
    return data


def event_to_data(event: Event) -> dict[str, Any]:
    return {"type": type(event).__name__, **to_data(event)}


def event_from_data(data: dict[str, Any]) -> Event:
    return _tagged(EVENT_TYPES, data, "event")  # type: ignore[no-any-return]


def command_to_data(command: Command) -> dict[str, Any]:
    return {"type": type(command).__name__, **to_data(command)}


def command_from_data(data: dict[str, Any]) -> Command:
    """Parse a command; a malformed one raises `ValueError` naming what is wrong."""
    return _tagged(COMMAND_TYPES, data, "command")  # type: ignore[no-any-return]


def _tagged(registry: dict[str, type], data: dict[str, Any], what: str) -> Any:
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError(f"a {what} is an object with a 'type' string")
    cls = registry.get(data["type"])
    if cls is None:
        raise ValueError(f"unknown {what} type {data['type']!r}")
    names = {name for name, _ in _fields(cls)}
    extra = set(data) - names - {"type"}
    if extra:
        raise ValueError(f"unknown field(s) for {data['type']}: {', '.join(sorted(extra))}")
    try:
        return from_data(cls, {k: v for k, v in data.items() if k != "type"})
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"malformed {data['type']}: {exc}") from None


def state_to_data(state: TableState) -> dict[str, Any]:
    return to_data(state)  # type: ignore[no-any-return]


#: G10: the generator's seed and position. With them the next roll is known in advance, so they stay
#: with the table service (Postgres keeps the seed in the first event) and never reach a client.
HIDDEN_STATE_FIELDS = ("seed", "rng_seed", "rng_counter")
#: G10: TableCreated's seed, hidden from clients for the same reason, and a set-up's generator position.
HIDDEN_EVENT_FIELDS = {"TableCreated": ("seed",), "PositionSet": ("rng_counter",)}
#: G10: the draw piles' order is the generator's output before the cards are turned: the next card is as
#: unknown to a player as the next roll. Clients get each pile in id order (the same cards, so a replica
#: still applies every event; a drawn card is found by its id).
HIDDEN_ORDER_STATE_FIELDS = ("deck", "chest")
HIDDEN_ORDER_EVENT_FIELDS = {"DeckShuffled": ("cards",), "PositionSet": ("chance", "chest")}


def public_state_data(state: TableState) -> dict[str, Any]:
    """`state_to_data` with the generator's seed and counter zeroed and the draw piles in id order: what a
    player or spectator may see.

    Zeroed rather than dropped, so `state_from_data` still reads it (a client's replica, a bot).
    """
    data = state_to_data(state)
    for name in HIDDEN_STATE_FIELDS:
        data[name] = 0
    for name in HIDDEN_ORDER_STATE_FIELDS:
        data[name] = sorted(data[name])
    return data


def public_event_data(event: Event) -> dict[str, Any]:
    """`event_to_data` with what `HIDDEN_EVENT_FIELDS` names zeroed and the piles of
    `HIDDEN_ORDER_EVENT_FIELDS` in id order (G10)."""
    data = event_to_data(event)
    for name in HIDDEN_EVENT_FIELDS.get(data["type"], ()):
        data[name] = 0
    for name in HIDDEN_ORDER_EVENT_FIELDS.get(data["type"], ()):
        data[name] = sorted(data[name])
    return data


def state_from_data(data: dict[str, Any]) -> TableState:
    return from_data(TableState, data)  # type: ignore[no-any-return]


def dumps(data: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces): the same value gives the same bytes."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))
