"""R4: who plays whom. Pure planning over the waiting tickets of one mode, no I/O.

A queue holds *units*: a single player, or a complete party (every member has
enqueued with the same party id; a party is seated together). The oldest unit
is the anchor; units join it, oldest first, while their ratings are within
the band, which widens with waiting time, and the table has room:

* Classic, Speed: 2-5 players; a table starts at 4 (5 if a fifth fits at once),
  or with 2-3 once the anchor has waited `small_table_wait_s`.
* Duel: exactly 3. Team: exactly 4, as two parties of two, a party and two
  singles, or four singles; a party sits on one team (seats 0 and 2, or 1 and 3).
* Hasbro (the printed rule set, H1): 2-6 players; a table starts at 4 like
  Classic, or with more when they are waiting at once (never rated, R1).
* Bot fill: when a unit that asked for it has waited `small_table_wait_s` and
  no full table formed, bots ("bot-<n>") take the empty seats up to the start
  size; such a game is unrated. Not in place of a small table without bots
  that could start, unless every unit in it asked for bots.

An anchor that cannot start waits; the units after it may still form tables
among themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ModeSize:
    min_players: int
    start_at: int
    max_players: int
    max_party: int


#: The queued modes (Custom tables are hosted, not queued) and their table sizes.
QUEUE_MODES: dict[str, ModeSize] = {
    "classic": ModeSize(2, 4, 5, 4),
    "speed": ModeSize(2, 4, 5, 4),
    "duel": ModeSize(3, 3, 3, 2),
    "team": ModeSize(4, 4, 4, 2),
    "hasbro": ModeSize(2, 4, 6, 4),
}


@dataclass(frozen=True, slots=True)
class Rules:
    """The matcher's knobs (environment: MATCHMAKING_SMALL_TABLE_WAIT_S, MATCHMAKING_BAND_BASE,
    MATCHMAKING_BAND_PER_S, MATCHMAKING_TICK_MS)."""

    #: Real seconds the oldest unit waits before a table starts below its start size (or bots fill it).
    small_table_wait_s: float = 30.0
    #: Rating distance (mu) accepted at once, and its widening per second waited.
    band_base: float = 5.0
    band_per_s: float = 0.5
    #: Real milliseconds between two matcher passes.
    tick_ms: int = 200

    @staticmethod
    def from_env(e: Mapping[str, str]) -> Rules:
        return Rules(
            small_table_wait_s=float(e.get("MATCHMAKING_SMALL_TABLE_WAIT_S", "30")),
            band_base=float(e.get("MATCHMAKING_BAND_BASE", "5")),
            band_per_s=float(e.get("MATCHMAKING_BAND_PER_S", "0.5")),
            tick_ms=int(e.get("MATCHMAKING_TICK_MS", "200")),
        )

    def band(self, waited_s: float, sigma: float = 0.0) -> float:
        return self.band_base + self.band_per_s * max(0.0, waited_s) + sigma


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket_id: str
    player_id: str
    display_name: str
    party_id: str | None
    party_size: int
    bot_fill: bool
    waited_s: float
    rating: float = 0.0
    sigma: float = 0.0


@dataclass(slots=True)
class Unit:
    tickets: list[Ticket]

    @property
    def size(self) -> int:
        return len(self.tickets)

    @property
    def waited_s(self) -> float:
        return max(t.waited_s for t in self.tickets)

    @property
    def rating(self) -> float:
        return sum(t.rating for t in self.tickets) / len(self.tickets)

    @property
    def sigma(self) -> float:
        return max(t.sigma for t in self.tickets)

    @property
    def bot_fill(self) -> bool:
        return any(t.bot_fill for t in self.tickets)


@dataclass(frozen=True, slots=True)
class SeatPlan:
    seat: int
    ticket: Ticket | None  # None: a bot
    name: str
    team: int  # -1 outside team mode


@dataclass(frozen=True, slots=True)
class Plan:
    mode: str
    seats: tuple[SeatPlan, ...]
    rated: bool = field(default=True)

    @property
    def tickets(self) -> list[Ticket]:
        return [s.ticket for s in self.seats if s.ticket is not None]


def units(tickets: Sequence[Ticket]) -> list[Unit]:
    """Singles and complete parties, the longest waiting first; incomplete parties wait."""
    singles: list[Unit] = []
    parties: dict[str, list[Ticket]] = {}
    for t in tickets:
        if t.party_id:
            parties.setdefault(t.party_id, []).append(t)
        else:
            singles.append(Unit([t]))
    complete = [Unit(members) for members in parties.values() if len(members) == members[0].party_size]
    return sorted(singles + complete, key=lambda u: -u.waited_s)


def compatible(rules: Rules, a: Unit, b: Unit) -> bool:
    """Within the rating band of either unit (the longer one waited, the wider its band)."""
    gap = abs(a.rating - b.rating)
    return gap <= max(rules.band(a.waited_s, a.sigma), rules.band(b.waited_s, b.sigma))


def seat(mode: str, group: list[Unit], bots: int) -> Plan:
    """Seats for a formed group: in team mode each party on one team (0+2 or 1+3)."""
    names: set[str] = set()

    def unique(name: str) -> str:
        candidate, n = name, 2
        while candidate in names:
            candidate, n = f"{name} #{n}", n + 1
        names.add(candidate)
        return candidate

    order: list[Ticket | None]
    teams: list[int]
    if mode == "team":
        slots: list[Ticket | None] = [None] * 4
        free_pairs = [(0, 2), (1, 3)]
        for u in sorted(group, key=lambda u: -u.size):
            if u.size == 2:
                a, b = free_pairs.pop(0)
                slots[a], slots[b] = u.tickets
        singles = [t for u in group if u.size == 1 for t in u.tickets]
        for i in range(4):
            if slots[i] is None and singles:
                slots[i] = singles.pop(0)
        order = slots
        teams = [i % 2 for i in range(4)]
    else:
        order = [t for u in group for t in u.tickets] + [None] * bots
        teams = [-1] * len(order)
    seats = []
    bot_no = 0
    for i, t in enumerate(order):
        if t is None:
            bot_no += 1
            seats.append(SeatPlan(i, None, unique(f"bot-{bot_no}"), teams[i]))
        else:
            seats.append(SeatPlan(i, t, unique(t.display_name), teams[i]))
    return Plan(mode, tuple(seats), rated=all(s.ticket is not None for s in seats))


def plan(mode: str, tickets: Sequence[Ticket], rules: Rules) -> list[Plan]:
    """Every table that can start now from these waiting tickets of `mode`."""
    size = QUEUE_MODES[mode]
    pool = units(tickets)
    plans: list[Plan] = []
    while pool:
        anchor = pool[0]
        group = [anchor]
        total = anchor.size
        for u in pool[1:]:
            if total == size.max_players:
                break
            if total + u.size > size.max_players or not compatible(rules, anchor, u):
                continue
            group.append(u)
            total += u.size
        if total < size.start_at and (other := _filled(anchor, pool[1:], size, rules)) is not None:
            group, total = other, sum(u.size for u in other)
        waited = anchor.waited_s >= rules.small_table_wait_s
        bots = 0
        ready = total >= size.start_at or (waited and total >= size.min_players)
        # Bots for a unit that asked for them once it has itself waited, and never in place of a table
        # without bots that can start: an older player who did not ask keeps the rated small table the
        # wait has earned them (they sit with bots only where no table could start without them).
        filler_waited = any(u.bot_fill and u.waited_s >= rules.small_table_wait_s for u in group)
        if filler_waited and total < size.start_at and (not ready or all(u.bot_fill for u in group)):
            bots = size.start_at - total
            ready = True
        if not ready:
            pool.pop(0)  # the anchor waits; the others may still form a table
            continue
        plans.append(seat(mode, group, bots))
        taken = {id(u) for u in group}
        pool = [u for u in pool if id(u) not in taken]
    return plans


def _filled(anchor: Unit, others: Sequence[Unit], size: ModeSize, rules: Rules) -> list[Unit] | None:
    """The anchor with the oldest units that fill its table to `start_at` when taking each that fits, in
    age order, fell short (a Team 2v2 party, a single, then a party: the single took the seat the second
    party needed); then as many more as fit. None: no such table (a subset sum over at most 6 seats)."""
    chosen: dict[int, list[Unit]] = {anchor.size: [anchor]}  # players seated: the first units found for it
    for u in others:
        if not compatible(rules, anchor, u):
            continue
        for total, picked in list(chosen.items()):
            if total + u.size <= size.max_players and total + u.size not in chosen:
                chosen[total + u.size] = [*picked, u]
        if max(chosen) >= size.start_at:
            break
    if max(chosen) < size.start_at:
        return None
    total = max(chosen)
    group = chosen[total]
    taken = {id(u) for u in group}
    for u in others:  # then more, as the first pass takes them, up to the table's size
        if id(u) not in taken and total + u.size <= size.max_players and compatible(rules, anchor, u):
            group.append(u)
            total += u.size
    return group


def queued_players(tickets: Sequence[Ticket]) -> int:
    """Players waiting in units that could sit at a table now (singles and complete parties)."""
    singles = 0
    parties: dict[str, list[int]] = {}  # party id: [members here, its size]
    for t in tickets:
        if t.party_id:
            party = parties.setdefault(t.party_id, [0, t.party_size])
            party[0] += 1
        else:
            singles += 1
    return singles + sum(n for n, size in parties.values() if n == size)


def estimate_wait_s(
    mode: str, queued: int, waited_s: float, bot_fill: bool, rules: Rules, recent_s: float | None
) -> float:
    """A rough guess for a ticket that has waited `waited_s` among `queued` players (`queued_players`):
    soon when a table could start, the small-table wait when a small one could, else the mode's
    recent average wait (or twice the small-table wait)."""
    size = QUEUE_MODES[mode]
    if queued >= size.start_at:
        return rules.tick_ms / 1000
    left = max(0.0, rules.small_table_wait_s - waited_s)
    if queued >= size.min_players or bot_fill:
        return left
    guess = recent_s if recent_s is not None else 2 * rules.small_table_wait_s
    return max(left, guess - waited_s, 0.0)


def estimated_wait_s(mode: str, tickets: Sequence[Ticket], mine: Ticket, rules: Rules, recent_s: float | None) -> float:
    """`estimate_wait_s` for `mine` among these waiting `tickets`."""
    return estimate_wait_s(mode, queued_players(tickets), mine.waited_s, mine.bot_fill, rules, recent_s)
