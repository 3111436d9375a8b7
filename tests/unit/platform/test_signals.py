"""Table signals: which events each service reads, cut into messages in commit order."""

from __future__ import annotations

import pytest

from engine.game import EVENT_TYPES
from monopoly.v1 import common_pb2
from servicekit import signals
from services.auction import handlers as auction_handlers
from services.casino import handlers as casino_handlers
from services.matchmaking import handlers as matchmaking_handlers
from services.rating import games as rating_games
from services.rating import handlers as rating_handlers
from services.trade import handlers as trade_handlers
from services.trade import trades


def envelopes(*types: str, table_id: str = "t1") -> list[common_pb2.Envelope]:
    return [common_pb2.Envelope(table_id=table_id, seq=10 + i, type=t) for i, t in enumerate(types)]


def split(envs: list[common_pb2.Envelope]) -> list[tuple[str, str, bytes]]:
    """`signals.split` given each envelope serialized, as the table service has them."""
    return signals.split(envs, [e.SerializeToString() for e in envs])


def decoded(rows: list[tuple[str, str, bytes]]) -> list[tuple[str, str, list[tuple[int, str]]]]:
    return [
        (subject, msg_id, [(e.seq, e.type) for e in common_pb2.EventBatch.FromString(body).events])
        for subject, msg_id, body in rows
    ]


def test_a_command_s_signals_are_runs_of_one_topic_in_commit_order() -> None:
    rows = split(
        envelopes("DiceRolled", "TurnEnded", "Moved", "TurnStarted", "CasinoOpened", "PlayerBankrupt", "GameEnded")
    )
    assert decoded(rows) == [
        ("monopoly.signals.turn.t1", "t1:11:turn", [(11, "TurnEnded"), (13, "TurnStarted")]),
        ("monopoly.signals.casino.t1", "t1:14:casino", [(14, "CasinoOpened")]),
        ("monopoly.signals.lifecycle.t1", "t1:15:lifecycle", [(15, "PlayerBankrupt"), (16, "GameEnded")]),
    ]


def test_a_command_without_signalled_events_publishes_no_signal() -> None:
    assert split(envelopes("DiceRolled", "Moved", "RentPaid")) == []
    assert split([]) == []


def test_a_signal_is_the_batch_its_envelopes_make() -> None:
    envs = envelopes("TurnEnded", "TurnStarted")
    [(_, _, body)] = split(envs)
    assert body == common_pb2.EventBatch(events=envs).SerializeToString()


def test_a_topic_coming_back_after_another_is_a_message_of_its_own() -> None:
    rows = split(envelopes("TurnEnded", "AuctionStarted", "TurnStarted"))
    assert [msg_id for _, msg_id, _ in rows] == ["t1:10:turn", "t1:11:auction", "t1:12:turn"]


def test_every_signalled_type_is_an_engine_event() -> None:
    assert set(signals.TOPICS) <= set(EVENT_TYPES)
    assert signals.subjects("turn", "lifecycle") == ["monopoly.signals.turn.*", "monopoly.signals.lifecycle.*"]


@pytest.mark.parametrize(
    ("service", "reads", "topics"),
    [
        ("auction", auction_handlers.RELEVANT, auction_handlers.TOPICS),
        ("casino", casino_handlers.RELEVANT, casino_handlers.TOPICS),
        ("trade", trades.WATCHED, trade_handlers.TOPICS),
        ("rating", rating_games.RELEVANT, rating_handlers.TOPICS),
        ("matchmaking", frozenset({"GameEnded"}), matchmaking_handlers.TOPICS),
    ],
)
def test_each_service_s_topics_carry_every_event_it_acts_on(
    service: str, reads: frozenset[str], topics: tuple[str, ...]
) -> None:
    carried = {t for t, topic in signals.TOPICS.items() if topic in topics}
    assert reads <= carried, f"{service} acts on {sorted(reads - carried)}, which its topics do not carry"
