"""Messages built from envelopes serialized once are byte for byte the messages protobuf would make,
and a stored event reads back from its envelope or, for rows before migration 005, from its JSON."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from engine import SUB_PROTOCOLS, Event, TableCreated, TableState, codec, preset
from monopoly.v1 import common_pb2, table_pb2
from servicekit import wire
from servicekit.wire import batch_envelopes, envelope, event_batch, repeated, stored_event
from services.table.tables import TableActor, _config
from sim.runner import play_game


def commits(seed: int) -> list[tuple[TableState, int, list[Event]]]:
    out: list[tuple[TableState, int, list[Event]]] = []

    def keep(state: TableState, events: list[Event]) -> None:
        if events:
            out.append((state.copy(), state.seq - len(events) + 1, list(events)))

    play_game(preset("classic"), 3, seed, "heuristic", on_events=keep, hash_events=False, think_ms=3000)
    return out


def test_a_commit_s_messages_are_what_serializing_them_whole_gives() -> None:
    recorded = commits(3)
    actor = TableActor(SimpleNamespace(snapshot_every=100), "t0", recorded[0][0], 0, 1, 0)  # type: ignore[arg-type]
    sizes = set()
    for state, first_seq, events in recorded:
        p = actor._prepare(state, first_seq, events, "")
        assert p.encoded == [e.SerializeToString() for e in p.envelopes]
        sizes |= {len(b) for b in p.encoded}
        whole = table_pb2.SubmitCommandResponse(first_seq=first_seq, last_seq=state.seq, events=p.public)
        assert p.answer == whole.SerializeToString()
        for env, public in zip(p.envelopes, p.public, strict=True):  # G10: only a pile's order is hidden
            if env.type == "DeckShuffled":
                assert list(public.payload.deck_shuffled.cards) == sorted(env.payload.deck_shuffled.cards)
                assert public.payload.deck_shuffled.deck == env.payload.deck_shuffled.deck
            elif env.type == "TableCreated":
                assert public.payload.table_created.seed == 0 and env.payload.table_created.seed == 3
            else:
                assert public is env
        (subject, msg_id, batch), *signalled = p.outbox
        assert (subject, msg_id) == ("monopoly.table.t0.events", f"t0:{first_seq}")
        assert batch == common_pb2.EventBatch(events=p.envelopes).SerializeToString()
        assert batch_envelopes(batch) == p.encoded
        for _, _, body in signalled:
            envs = common_pb2.EventBatch.FromString(body).events
            assert body == common_pb2.EventBatch(events=envs).SerializeToString()
        assert [stored_event(b, None) for b in p.encoded] == events
    assert min(sizes) < 128 <= max(sizes)  # lengths of one varint byte and of more


def test_an_empty_batch_is_no_bytes() -> None:
    assert event_batch([]) == b"" == common_pb2.EventBatch().SerializeToString()
    assert batch_envelopes(b"") == []
    assert repeated(3, [b""]) == table_pb2.SubmitCommandResponse(events=[common_pb2.Envelope()]).SerializeToString()


def test_a_row_before_migration_005_reads_from_its_json() -> None:
    [(state, _, events)] = commits(4)[:1]
    for i, event in enumerate(events, start=1):
        payload = codec.dumps(codec.event_to_data(event))  # what the table service wrote then
        encoded = envelope("t0", i, event, state.clock, 1, 0).SerializeToString()
        assert stored_event(None, payload) == event == stored_event(encoded, None)
        assert stored_event(encoded, payload) == event  # the envelope wins when both are there


def test_a_row_without_its_event_is_refused() -> None:
    with pytest.raises(ValueError):
        stored_event(None, None)


@pytest.mark.parametrize("batch", [b"\x12\x00", b"\x0a\x05abc"])
def test_what_is_not_an_event_batch_is_refused(batch: Any) -> None:
    with pytest.raises((ValueError, IndexError)):
        batch_envelopes(batch)


@pytest.mark.parametrize("mode", ["classic", "speed", "duel", "team", "hasbro"])
@pytest.mark.parametrize("external", [(), ("trade", "auction"), ("auction", "casino", "trade")])
def test_tables_of_a_standard_mode_share_one_config_equal_to_its_preset(mode: str, external: tuple[str, ...]) -> None:
    config = _config(mode, external)
    assert _config(mode, external) is config  # shared: the wire encodes it once
    expected = preset(mode)
    if external:
        expected = expected.with_changes(external=tuple(p for p in SUB_PROTOCOLS if p in external))
    assert config == expected and config.external == expected.external


def test_a_host_s_settings_make_a_config_of_its_own() -> None:
    custom = _config("custom", (), starting_cash=20000)
    assert custom.starting_cash == 20000 and _config("custom", (), starting_cash=20000) is not custom


def test_a_config_encoded_again_is_the_same_json_and_a_new_one_is_encoded_anew() -> None:
    config = preset("classic")
    first = wire.event_to_proto(TableCreated(config, 7, ("a", "b"))).SerializeToString()
    again = wire.event_to_proto(TableCreated(config, 7, ("a", "b"))).SerializeToString()
    wire._CONFIG_JSON.clear()
    assert again == first == wire.event_to_proto(TableCreated(config, 7, ("a", "b"))).SerializeToString()
    richer = config.with_changes(starting_cash=config.starting_cash + 1)
    assert wire.event_to_proto(TableCreated(richer, 7, ("a", "b"))).SerializeToString() != first
