"""The export without servers: archive files of the golden stream sample into DuckDB, and bad input."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from analytics import archive, export, report, sources
from analytics.rows import Raw
from monopoly.v1 import common_pb2

GOLDEN = Path(__file__).parents[1] / "platform" / "golden"


def _golden(version: int = 2) -> list[Raw]:
    data = (GOLDEN / f"event_batches_v{version}.bin").read_bytes()
    raws, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        batch = data[at + 4 : at + 4 + size]
        table = common_pb2.EventBatch.FromString(batch).events[0].table_id
        day = datetime(2026, 11, 30, tzinfo=UTC) if len(raws) < 300 else datetime(2026, 12, 1, tzinfo=UTC)
        raws.append(Raw(len(raws) + 1, f"monopoly.table.{table}.events", day, batch))
        at += 4 + size
    return raws


def _recorded(version: int = 2) -> list[dict[str, object]]:
    return [json.loads(line) for line in (GOLDEN / f"event_batches_v{version}.jsonl").read_text().splitlines()]


def _future_type() -> bytes:
    """An EventBatch of a newer schema: one envelope whose payload is an event type (field 1023)
    this reader does not know."""
    env = common_pb2.Envelope(event_id="z:1", table_id="z", seq=1, type="Future", schema_version=9)
    payload = bytes([0x3A, 0x03, 0xFA, 0x3F, 0x00])  # field 7 (payload) holding field 1023, empty
    inner = env.SerializeToString() + payload
    return bytes([0x0A, len(inner)]) + inner


def _export(db: Path, root: Path, batch: int = 100) -> export.Result:
    return asyncio.run(export.export(db, archive=root, batch=batch, progress=False))


@pytest.mark.parametrize("version", [2, 4])
def test_the_archive_is_partitioned_by_date_and_export_loads_every_event_once(tmp_path: Path, version: int) -> None:
    """Schema 2 bytes (no typed square, kind or board) and schema 4 bytes give the same tables."""
    raws = _golden(version)
    root = tmp_path / "archive"
    for i in range(0, len(raws), 250):
        archive.write_file(root, raws[i : i + 250])
    archive.write_file(root, raws[200:260])  # a crash between writing and acking: written twice
    dates = sorted(p.name for p in root.iterdir())
    assert dates == ["date=2026-11-30", "date=2026-12-01"]
    result = _export(tmp_path / "a.duckdb", root)
    recorded = _recorded(version)
    assert (result.events, result.dead_letters, result.position) == (len(recorded), 0, len(raws))
    con = duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT (table_id, seq)) FROM events").fetchone() == (
            len(recorded),
            len(recorded),
        )
        by_type = dict(con.execute("SELECT type, count(*) FROM events GROUP BY type").fetchall())
        for kind, n in by_type.items():
            table = "".join("_" + c.lower() if c.isupper() else c for c in kind).lstrip("_")
            assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone() == (n,), kind
        want_moves = sum(1 for r in recorded if r["event"]["type"] == "Moved")  # type: ignore[index]
        assert by_type["Moved"] == want_moves
        # the typed columns hold the event's values (G7 rent: PaymentMade with its amount)
        first_rent = next(r for r in recorded if r["event"]["type"] == "PaymentMade")  # type: ignore[index]
        row = con.execute(
            "SELECT debtor, creditor, amount, reason FROM payment_made WHERE table_id = ? AND seq = ?",
            [first_rent["table_id"], first_rent["seq"]],
        ).fetchone()
        ev = first_rent["event"]
        assert row == (ev["debtor"], ev["creditor"], ev["amount"], ev["reason"])  # type: ignore[index]
        games = con.execute(
            "SELECT table_id, ruleset, mode, players, finished, end_reason FROM games ORDER BY 1"
        ).fetchall()
        assert games == [
            ("golden-hasbro", "hasbro", "hasbro", 2, True, "last_player"),
            ("golden-online", "online", "classic", 2, True, "last_player"),
        ]
        (rents, rent_total) = con.execute("SELECT count(*), sum(amount) FROM rents").fetchone() or (0, 0)
        paid = [r["event"] for r in recorded if r["event"]["type"] == "PaymentMade" and r["event"]["reason"] == "rent"]  # type: ignore[index]
        assert (rents, rent_total) == (len(paid), sum(p["amount"] for p in paid))  # type: ignore[index]
        assert con.execute("SELECT count(*) FROM rents WHERE square IS NULL OR colour_group IS NULL").fetchone() == (0,)
        # schema 4: every payment says where it arose and what for; the typed square of a rent is the
        # square the payer's token stands on (what schema 2 readers had to infer from Moved)
        inferred, kinds = con.execute(
            "SELECT count(*) FILTER (WHERE square_inferred), count(*) FILTER (WHERE kind LIKE 'PAYMENT_REASON_%') "
            "FROM payments"
        ).fetchone() or (0, 0)
        assert kinds == by_type["PaymentMade"]  # schema 2: the kind from its string
        assert inferred == (by_type["PaymentMade"] if version == 2 else 0)
        if version >= 4:
            wrong = con.execute(
                "SELECT count(*) FROM rents r ASOF JOIN moved m ON r.table_id = m.table_id AND r.payer = m.seat "
                "AND r.seq >= m.seq WHERE m.to_square != r.square"
            ).fetchone()
            assert wrong == (0,)
            squares = dict(con.execute("SELECT kind, count(DISTINCT square) FROM payments GROUP BY 1").fetchall())
            assert squares.get("PAYMENT_REASON_TAX", 0) <= 2 and squares["PAYMENT_REASON_RENT"] > 5
        groups = con.execute("SELECT DISTINCT group_name FROM rents_by_group WHERE colour_group > 0").fetchall()
        assert groups and all(name for (name,) in groups)
        assert con.execute("SELECT count(*) FROM auctions").fetchone() == (by_type["AuctionStarted"],)
    finally:
        con.close()
    again = _export(tmp_path / "a.duckdb", root)  # nothing new: nothing doubled
    assert (again.messages, again.events) == (0, 0)


def test_undecodable_messages_go_to_the_dead_letter_table_and_the_export_goes_on(tmp_path: Path) -> None:
    raws = _golden()[:50]
    pre_freeze = common_pb2.EventBatch.FromString(raws[10].data)
    for env in pre_freeze.events:
        env.schema_version = 1
    bad = [
        Raw(51, "monopoly.table.x.events", raws[0].published, b"\xff\xff\x00corrupt"),
        Raw(52, "monopoly.table.y.events", raws[0].published, pre_freeze.SerializeToString()),
        Raw(53, "monopoly.table.z.events", raws[0].published, _future_type()),
    ]
    good = [Raw(54, raws[49].subject, raws[49].published, raws[49].data)]  # a re-publish: counted once
    root = tmp_path / "archive"
    archive.write_file(root, raws + bad + good)
    result = _export(tmp_path / "d.duckdb", root)
    assert result.dead_letters == 3 and "dead_letters" in result.summary()
    con = duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True)
    try:
        dead = con.execute("SELECT stream_seq, subject, error, data FROM dead_letters ORDER BY 1").fetchall()
        assert [d[0] for d in dead] == [51, 52, 53]
        assert "schema version 1" in dead[1][2]
        assert dead[0][3] == b"\xff\xff\x00corrupt"
        n_events = sum(len(common_pb2.EventBatch.FromString(r.data).events) for r in raws)
        assert con.execute("SELECT count(*) FROM events").fetchone() == (n_events,)
        assert con.execute("SELECT max(stream_seq) FROM events").fetchone() == (50,)
    finally:
        con.close()


def test_an_export_resumes_after_its_position_and_takes_each_sequence_once(tmp_path: Path) -> None:
    raws = _golden()
    root = tmp_path / "archive"
    archive.write_file(root, raws[:400])
    first = _export(tmp_path / "r.duckdb", root)
    archive.write_file(root, raws[350:])  # the archiver went on (and rewrote a few around a crash)
    second = _export(tmp_path / "r.duckdb", root)
    assert first.position == 400 and second.position == len(raws)
    assert first.events + second.events == len(_recorded())
    assert second.messages == len(raws) - 400
    assert sources.archive_total(root, 0) == len(raws) + 50


def test_the_report_writes_every_plot_and_a_page(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    archive.write_file(root, _golden())
    _export(tmp_path / "p.duckdb", root)
    page = report.report(tmp_path / "p.duckdb", tmp_path / "report")
    text = page.read_text()
    for name in report.PLOTS:
        png = tmp_path / "report" / f"{name}.png"
        assert png.stat().st_size > 5000, name
        assert f'src="{name}.png"' in text
    assert "1812 events" in text and "2 finished games" in text


@pytest.mark.parametrize("batch", [1, 7])
def test_small_batches_give_the_same_tables(tmp_path: Path, batch: int) -> None:
    root = tmp_path / "archive"
    raws = _golden()[:120]
    archive.write_file(root, raws)
    result = _export(tmp_path / "s.duckdb", root, batch=batch)
    assert result.events == sum(len(common_pb2.EventBatch.FromString(r.data).events) for r in raws)


def test_an_upgraded_reader_exporting_again_recovers_what_an_older_one_dead_lettered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/SCHEMA.md's promise: a message of an event type the reader did not know is dead-lettered,
    and once the reader knows it, the next export decodes it into the file (once) and it leaves the
    dead letters."""
    from analytics import rows

    raws = _golden()
    root = tmp_path / "archive"
    archive.write_file(root, raws)
    older_types = {name: d for name, d in rows.event_types().items() if name != "card_drawn"}
    with monkeypatch.context() as older:
        older.setattr(rows, "event_types", lambda: older_types)
        first = _export(tmp_path / "u.duckdb", root)
    assert first.dead_letters > 0
    second = _export(tmp_path / "u.duckdb", root)
    assert second.messages == 0 and first.events + second.events == len(_recorded())
    con = duckdb.connect(str(tmp_path / "u.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM dead_letters").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM events").fetchone() == (len(_recorded()),)
        assert con.execute("SELECT count(*) FROM card_drawn").fetchone()[0] > 0  # type: ignore[index]
    finally:
        con.close()
    assert _export(tmp_path / "u.duckdb", root).events == 0  # nothing twice
