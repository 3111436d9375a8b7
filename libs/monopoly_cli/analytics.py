"""`monopoly export`, `archive` and `report`: the event stream as Parquet, DuckDB and plots (libs/analytics)."""

from __future__ import annotations

from analytics.cli import add_commands

from .options import Subcommands


def add(sub: Subcommands) -> None:
    add_commands(sub)
