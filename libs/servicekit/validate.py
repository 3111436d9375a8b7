"""Checks of request fields at the edge, before anything is written: a refused request changes nothing.

Postgres refuses NUL in text and bigint beyond 2^63-1, Python's json recursion-fails on deep
nesting and a display name is shown to other players and written to logs: each check turns what
would be an INTERNAL error (or a stored control sequence) into a clear `BadRequest`.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from google.protobuf.message import Message

from .errors import BadRequest

#: The largest value a Postgres bigint (and a proto int64) holds.
INT63_MAX = 2**63 - 1
#: Settings are flat objects of numbers and short lists: deeper nesting is refused before parsing.
JSON_MAX_DEPTH = 8
JSON_MAX_BYTES = 64 * 1024
#: Bidirectional overrides, embeddings and isolates (Trojan Source): they reorder what others read.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Letters and symbols that draw nothing (the Hangul fillers, the blank Braille pattern): a name of them
#: alone is as invisible as one of spaces.
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: The longest table id a call may name (the service's own ids are 16 hex digits).
MAX_TABLE_ID = 64


def name(value: str, field: str, max_length: int) -> str:
    """A display name or seat name: NFC-normalised and stripped; refused if empty, too long, or holding
    a control character (NUL, newline, ANSI escape...), a bidi control, or nothing visible."""
    text = unicodedata.normalize("NFC", value).strip()
    if not text or len(text) > max_length:
        raise BadRequest(f"{field}: 1 to {max_length} characters")
    for ch in text:
        if unicodedata.category(ch) == "Cc":
            raise BadRequest(f"{field}: no control characters (found U+{ord(ch):04X})")
        if ch in _BIDI:
            raise BadRequest(f"{field}: no bidirectional controls (found U+{ord(ch):04X})")
    if all(ch in _BLANK or unicodedata.category(ch) in {"Cf", "Zs", "Zl", "Zp", "Mn", "Me"} for ch in text):
        raise BadRequest(f"{field}: a name needs a visible character")
    return text


def table_id(value: str) -> str:
    """A table id a call names: given, and not longer than any table's."""
    if not value:
        raise BadRequest("table_id is required")
    if len(value) > MAX_TABLE_ID:
        raise BadRequest(f"table_id is at most {MAX_TABLE_ID} characters, not {len(value)}")
    return value


def seed(value: int, field: str = "seed") -> int:
    """A seed that fits a bigint (0: the service picks one)."""
    if not 0 <= value <= INT63_MAX:
        raise BadRequest(f"{field}: 0 to 2^63-1")
    return value


def int_range(value: int, field: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise BadRequest(f"{field}: {low} to {high}")
    return value


def _depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text, strings skipped (no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def json_object(text: str, field: str) -> dict[str, Any]:
    """A JSON object of settings ("" is none): bounded in size and depth, no NUL anywhere (Postgres's
    jsonb refuses it), parsed without a RecursionError."""
    if not text:
        return {}
    if "\x00" in text or "\\u0000" in text:  # raw or escaped: jsonb refuses both
        raise BadRequest(f"{field}: no NUL characters")
    if len(text) > JSON_MAX_BYTES:
        raise BadRequest(f"{field}: at most {JSON_MAX_BYTES} characters")
    if _depth(text) > JSON_MAX_DEPTH:
        raise BadRequest(f"{field}: nested deeper than {JSON_MAX_DEPTH} levels")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise BadRequest(f"{field} is not JSON") from None
    if not isinstance(value, dict):
        raise BadRequest(f"{field} is an object of settings")
    return value


def no_nul(message: Message, path: str = "") -> None:
    """Refuse a request with a NUL in any of its strings (Postgres text cannot hold it)."""
    for descriptor, value in message.ListFields():
        where = f"{path}{descriptor.name}"
        if descriptor.type == descriptor.TYPE_STRING:
            values = value if descriptor.is_repeated else [value]
            if any("\x00" in v for v in values):
                raise BadRequest(f"{where}: no NUL characters")
        elif descriptor.type == descriptor.TYPE_MESSAGE:
            if descriptor.message_type.GetOptions().map_entry:
                for k, v in value.items():
                    if (isinstance(k, str) and "\x00" in k) or (isinstance(v, str) and "\x00" in v):
                        raise BadRequest(f"{where}: no NUL characters")
                    if isinstance(v, Message):
                        no_nul(v, f"{where}.")
            elif descriptor.is_repeated:
                for item in value:
                    no_nul(item, f"{where}.")
            else:
                no_nul(value, f"{where}.")
