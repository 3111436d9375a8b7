"""The bot driver's replica of a table: events come on two streams (its commands' answers and its
watch stream, which leaves the answered batches out), in no order between the two, and the replica
applies them in seq order, each once."""

from __future__ import annotations

import copy
import random

from bots import make_bot
from client import BotTable
from engine import TableState, apply, classic, codec, new_game
from monopoly.v1 import common_pb2
from servicekit.wire import envelope


def played(commands: int, seed: int = 5) -> tuple[TableState, list[common_pb2.Envelope], TableState]:
    """A table as first seen, the envelopes of the events that followed (a bot's commands), and the
    table after them."""
    state, _ = new_game(classic(), ["a", "b", "c", "d"], seed)
    first = copy.deepcopy(state)
    bots = {seat: make_bot("heuristic", seat + 1) for seat in range(4)}
    envelopes = []
    for _ in range(commands):
        for event in apply(state, bots[state.actor].choose(state, state.actor)):
            envelopes.append(envelope("t1", first.seq + len(envelopes) + 1, event, 0, 1, 0))
    assert envelopes[-1].seq == state.seq
    return first, envelopes, state


def driver(state: TableState) -> BotTable:
    bot = BotTable(stub=None, table_id="t1")  # type: ignore[arg-type]
    bot._adopt(codec.state_from_data(codec.state_to_data(state)))
    return bot


def test_events_that_come_out_of_order_are_applied_in_seq_order() -> None:
    first, envelopes, final = played(60)
    batches = [envelopes[i : i + 3] for i in range(0, len(envelopes), 3)]
    random.Random(1).shuffle(batches)
    bot = driver(first)
    for batch in batches:
        bot._apply(batch)
    assert bot.state is not None and bot.state.seq == final.seq
    assert codec.state_to_data(bot.state) == codec.state_to_data(final)
    assert bot._ahead == {}


def test_an_event_given_twice_is_applied_once() -> None:
    first, envelopes, final = played(30)
    bot = driver(first)
    bot._apply(envelopes[:10])
    bot._apply(envelopes[5:])  # the watch stream's catch-up after an answer brought the first ones
    bot._apply(envelopes)
    assert bot.state is not None and codec.state_to_data(bot.state) == codec.state_to_data(final)
    assert sum(bot.event_counts.values()) == len(envelopes)


def test_events_ahead_of_a_gap_wait_and_a_re_read_state_takes_them() -> None:
    first, envelopes, final = played(30)
    bot = driver(first)
    bot._apply(envelopes[:4])
    bot._apply(envelopes[8:])  # the answer with events 5..8 is lost
    assert bot.state is not None and bot.state.seq == first.seq + 4  # nothing past the gap applied
    assert min(bot._ahead) == first.seq + 9
    # The table re-read (GetTable) at the gap's end: what waited beyond it is applied on top.
    at_gap = driver(first)
    at_gap._apply(envelopes[:8])
    assert at_gap.state is not None
    bot._adopt(codec.state_from_data(codec.state_to_data(at_gap.state)))
    assert codec.state_to_data(bot.state) == codec.state_to_data(final)
    assert bot._ahead == {}
