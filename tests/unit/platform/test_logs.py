"""servicekit.logs: JSON or text lines with the service, instance and what the task works on, at the
configured level, with tokens and secrets scrubbed."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from servicekit import auth, logs

SECRET = "a-real-token-key-" + "x" * 16


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    out = io.StringIO()
    yield out
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def _configure(out: io.StringIO, **env: str) -> None:
    handler = logs.configure("table", [SECRET, "pgpass-123456"], {"INSTANCE": "table-7d9f-abc", **env})
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)


def test_json_lines_carry_service_instance_and_the_bound_table(captured: io.StringIO) -> None:
    _configure(captured, LOG_FORMAT="json")
    log = logging.getLogger("table")
    token = logs.bind(table_id="t1", seq=42, trace="cmd-9")
    try:
        log.info("committed %d events", 3)
    finally:
        logs.unbind(token)
    log.warning("unbound", extra={"table_id": "t2"})
    first, second = (json.loads(line) for line in captured.getvalue().splitlines())
    assert first["message"] == "committed 3 events" and first["level"] == "INFO"
    assert (first["service"], first["instance"], first["logger"]) == ("table", "table-7d9f-abc", "table")
    assert (first["table_id"], first["seq"], first["trace"]) == ("t1", 42, "cmd-9")
    assert second["table_id"] == "t2" and "seq" not in second
    assert first["ts"].endswith("Z")


async def test_each_task_has_its_own_context(captured: io.StringIO) -> None:
    _configure(captured, LOG_FORMAT="json")
    log = logging.getLogger("table")

    async def actor(table_id: str) -> None:
        logs.bind(table_id=table_id)
        await asyncio.sleep(0)
        log.info("tick")

    await asyncio.gather(asyncio.create_task(actor("a")), asyncio.create_task(actor("b")))
    log.info("outside")
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert sorted(r.get("table_id", "-") for r in lines) == ["-", "a", "b"]


def test_tokens_secrets_and_url_passwords_never_reach_a_line(captured: io.StringIO) -> None:
    _configure(captured, LOG_FORMAT="json")
    seat_token = auth.issue(SECRET, "t1", 0, "alice")
    log = logging.getLogger("table")
    log.info("request %s", {"seat_token": seat_token, "table_id": "t1"})
    log.info("connecting to postgresql://monopoly:s3cr3t-pw@db:5432/monopoly")
    log.info("key is %s, db password pgpass-123456", SECRET)
    try:
        raise ValueError(f"bad token {seat_token}")
    except ValueError:
        log.exception("failed")
    text = captured.getvalue()
    for secret in (seat_token, SECRET, "s3cr3t-pw", "pgpass-123456", seat_token.split(".")[1]):
        assert secret not in text
    assert text.count(logs.REDACTED) == 5  # the token twice, the URL password, the key, the db password
    assert "postgresql://monopoly:[redacted]@db:5432/monopoly" in text
    assert all(json.loads(line) for line in text.splitlines() if line.startswith("{"))


def test_text_format_and_level(captured: io.StringIO) -> None:
    _configure(captured, LOG_FORMAT="text", LOG_LEVEL="warning")
    log = logging.getLogger("auction")
    log.info("hidden")
    token = logs.bind(table_id="t9")
    log.warning("shown")
    logs.unbind(token)
    (line,) = captured.getvalue().splitlines()
    assert line.endswith("auction WARNING shown [table_id=t9]")


@pytest.mark.parametrize("env", [{"LOG_FORMAT": "xml"}, {"LOG_LEVEL": "loud"}])
def test_a_wrong_setting_stops_the_service_with_its_name(env: dict[str, str]) -> None:
    with pytest.raises(SystemExit, match=next(iter(env))):
        logs.configure("table", env=env)


def test_the_database_password_is_found() -> None:
    assert logs.database_password("postgresql://u:p%40ss@h:5432/db") == "p%40ss"
    assert logs.database_password("postgresql://postgres:@/monopoly?host=/tmp") == ""
