"""What each event means, for the generated events.proto and docs/SCHEMA-REFERENCE.md.

tools/gen_proto.py writes a message's comment from `MESSAGE_DOCS`, else the
dataclass's own docstring; a field's from `FIELD_DOCS`, else its comment in the
engine's source, else `NAME_DOCS` by field name (a seat, a square, an amount
mean the same in every event). Units: seats are indexes 0..players-1 (-1: the
bank, or nobody); squares are board indexes 0..39 counted from Go; money is
whole dollars in the table's scale (TableConfig.money_scale); times are game
milliseconds since the table was created (E6).
"""

from __future__ import annotations

MESSAGE_DOCS: dict[str, str] = {}
FIELD_DOCS: dict[tuple[str, str], str] = {}
NAME_DOCS: dict[str, str] = {}
