"""The edge checks of request fields (servicekit.validate) and the classification of outages."""

from __future__ import annotations

import asyncpg
import nats.errors
import pytest

from monopoly.v1 import table_pb2
from servicekit import grpcserver, validate
from servicekit.errors import BadRequest, unreachable


@pytest.mark.parametrize(
    "raw",
    [
        *("a\x00", "a\nb", "a\rb", "\x1b[31mred", "a\u202eb", "a\u2066b", "\u200b", "\u200b\u200d\u2060", " ", ""),
        "x" * 11,
        *("\u3164", "\u3164\u3164", "\u115f\u1160", "\uffa0", "\u2800"),  # letters and a symbol that draw nothing
    ],
)
def test_names_that_are_control_or_invisible_are_refused(raw: str) -> None:
    with pytest.raises(BadRequest):
        validate.name(raw, "display_name", 10)


@pytest.mark.parametrize(
    ("raw", "kept"),
    [("  ann ", "ann"), ("Ame\u0301lie", "Am\u00e9lie"), ("\U0001f468\u200d\U0001f469", "\U0001f468\u200d\U0001f469")],
)
def test_names_are_nfc_normalised_and_stripped(raw: str, kept: str) -> None:
    assert validate.name(raw, "display_name", 10) == kept


def test_a_table_id_is_given_and_no_longer_than_any_table_s() -> None:
    assert validate.table_id("a" * 64) == "a" * 64
    with pytest.raises(BadRequest, match="table_id is required"):
        validate.table_id("")
    with pytest.raises(BadRequest, match="table_id is at most 64 characters, not 65"):
        validate.table_id("a" * 65)


def test_a_status_message_is_cut_to_at_most_1000_bytes_saying_how_much_was_left_out() -> None:
    text = "é" * 1_000  # 2,000 bytes
    cut = grpcserver.details_of(ValueError(text))
    assert len(cut.encode()) <= grpcserver.MAX_DETAILS and cut.endswith(" more bytes)")
    assert grpcserver.details_of(ValueError("short")) == "short"


def test_seeds_fit_a_bigint() -> None:
    assert validate.seed(2**63 - 1) == 2**63 - 1
    for bad in (2**63, 2**64 - 1, -1):
        with pytest.raises(BadRequest):
            validate.seed(bad)


@pytest.mark.parametrize(
    "text",
    ["[" * 200_000 + "]" * 200_000, '{"a": ' + "{" * 9 + "}" * 9 + "}", '{"a\\u0000": 1}', "{\x00}", "[1]", "{", "1"],
)
def test_settings_json_too_deep_with_nul_or_not_an_object_is_refused(text: str) -> None:
    with pytest.raises(BadRequest):
        validate.json_object(text, "settings_json")


def test_settings_json_brackets_inside_strings_do_not_count() -> None:
    assert validate.json_object('{"a": "[[[[[[[[[[[[[\\"{{{{{{{{{{"}', "s") == {"a": '[[[[[[[[[[[[["{{{{{{{{{{'}
    assert validate.json_object("", "s") == {}


def test_a_nul_anywhere_in_a_request_is_refused() -> None:
    validate.no_nul(table_pb2.CreateTableRequest(mode="classic", players=["a", "b"]))
    with pytest.raises(BadRequest, match="players"):
        validate.no_nul(table_pb2.CreateTableRequest(mode="classic", players=["a", "b\x00"]))
    request = table_pb2.SubmitCommandRequest(table_id="t")
    request.command.roll.seat = 0
    validate.no_nul(request)
    request.command_id = "x\x00"
    with pytest.raises(BadRequest, match="command_id"):
        validate.no_nul(request)


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(111, "refused"),
        FileNotFoundError(2, "/tmp/.s.PGSQL.5432"),
        asyncpg.ConnectionDoesNotExistError("closed"),
        asyncpg.CannotConnectNowError("starting up"),
        asyncpg.AdminShutdownError("terminating"),
        asyncpg.exceptions.InternalClientError("cannot switch to state 12; another operation (2) is in progress"),
        nats.errors.NoServersError(),
        nats.errors.ConnectionClosedError(),
    ],
)
def test_outages_are_unreachable_not_internal(exc: BaseException) -> None:
    assert unreachable(exc)


@pytest.mark.parametrize(
    "exc", [ValueError("x"), asyncpg.UniqueViolationError("dup"), asyncpg.QueryCanceledError("timeout")]
)
def test_errors_of_a_request_are_not_outages(exc: BaseException) -> None:
    assert not unreachable(exc)
