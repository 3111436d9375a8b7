"""Gauges read from the tables this process holds, at scrape time (nothing to keep in step).

`table_tables{mode, status}`: tables by mode, `active` (in play), `waiting` (paused, E5: a player
must confirm they are back) and `finished` (held since this process loaded them).
`table_deadline_overdue_seconds`: how far the most late unfinished table is past its next deadline
(E1, E2, E5), evicted ones included (`idle`); its timer should fire within milliseconds, so a table
here for long is stuck.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Protocol

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from engine import next_deadline

from .tables import TableActor, wall_ms

STATUSES = ("active", "waiting", "finished")


class _Tables(Protocol):
    @property
    def actors(self) -> Mapping[str, TableActor]: ...


class TablesCollector(Collector):
    def __init__(self, tables: _Tables) -> None:
        self.tables = tables

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield from self._families()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        counts: Counter[tuple[str, str]] = Counter()
        overdue_ms = 0.0
        now = wall_ms()
        for actor in list(self.tables.actors.values()):
            state = actor.state
            status = "finished" if state.finished else "waiting" if state.paused else "active"
            counts[state.config.mode, status] += 1
            if not state.finished and (due := next_deadline(state)) is not None:
                overdue_ms = max(overdue_ms, now - actor.wall_due_ms(due))
        idle = getattr(self.tables, "idle", None)  # evicted tables wait for their deadline on its heap
        if idle is not None:
            overdue_ms = max(overdue_ms, idle.overdue_s() * 1000)
        tables, overdue = self._families()
        for (mode, status), n in sorted(counts.items()):
            tables.add_metric([mode, status], n)
        overdue.add_metric([], overdue_ms / 1000)
        yield tables
        yield overdue

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
        return (
            GaugeMetricFamily(
                "table_tables", "Tables held by this process, by mode and status", labels=["mode", "status"]
            ),
            GaugeMetricFamily(
                "table_deadline_overdue_seconds", "How far the most late table is past its next deadline (0: none)"
            ),
        )
