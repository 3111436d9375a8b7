"""Signed seat tokens: who may act for which seat, checked without a lookup, by the server interceptor."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest

from monopoly.v1 import matchmaking_pb2, table_pb2, table_pb2_grpc
from servicekit import auth, grpcserver
from servicekit.errors import Forbidden, Unauthenticated

KEY = "test-key"


def test_a_token_carries_its_table_seat_player_and_role() -> None:
    token = auth.issue(KEY, "t1", 2, "ada", now=1_000, ttl_s=60)
    claims = auth.verify(KEY, token, now=1_030)
    assert (claims.table_id, claims.seat, claims.player, claims.role, claims.expires) == (
        "t1",
        2,
        "ada",
        "player",
        1_060,
    )
    claims.require_seat("t1", 2)


def test_the_same_claims_give_the_same_token() -> None:
    assert auth.issue(KEY, "t1", 0, "a", now=5) == auth.issue(KEY, "t1", 0, "a", now=5)
    assert auth.issue(KEY, "t1", 0, "a", now=5) != auth.issue(KEY, "t1", 1, "a", now=5)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "garbage",
        "a.b",
        auth.issue("another-key", "t1", 0, "a"),  # forged: signed with another key
    ],
)
def test_malformed_or_forged_tokens_are_unauthenticated(token: str) -> None:
    with pytest.raises(Unauthenticated):
        auth.verify(KEY, token)


def test_a_tampered_claim_breaks_the_signature() -> None:
    body, _, sig = auth.issue(KEY, "t1", 0, "a").partition(".")
    other_body = auth.issue(KEY, "t1", 3, "a").partition(".")[0]
    with pytest.raises(Unauthenticated):
        auth.verify(KEY, f"{other_body}.{sig}")
    assert auth.verify(KEY, f"{body}.{sig}").seat == 0


def test_an_expired_token_is_unauthenticated() -> None:
    token = auth.issue(KEY, "t1", 0, "a", now=1_000, ttl_s=60)
    with pytest.raises(Unauthenticated, match="expired"):
        auth.verify(KEY, token, now=1_061)


def test_a_token_acts_only_for_its_seat_at_its_table() -> None:
    claims = auth.verify(KEY, auth.issue(KEY, "t1", 1, "a"))
    with pytest.raises(Forbidden):
        claims.require_seat("t1", 2)
    with pytest.raises(Forbidden):
        claims.require_seat("t2", 1)
    with pytest.raises(Forbidden):
        claims.require_service()


def test_spectators_only_watch_and_services_act_at_any_table() -> None:
    spectator = auth.verify(KEY, auth.issue(KEY, "t1", -1, "fan", role="spectator"))
    spectator.require_table("t1")
    with pytest.raises(Forbidden):
        spectator.require_seat("t1", -1)
    service = auth.verify(KEY, auth.service_token(KEY, "trade"))
    service.require_service()
    service.require_table("any-table")
    with pytest.raises(ValueError):
        auth.issue(KEY, "t1", 0, "a", role="admin")


# -- the server interceptor: tokens verified before any handler runs ---------------------------


def test_the_token_field_comes_from_the_request_descriptor() -> None:
    assert auth.token_field(table_pb2.SubmitCommandRequest()) == "seat_token"
    assert auth.token_field(table_pb2.WatchTableRequest()) == "seat_token"
    assert auth.token_field(table_pb2.JoinTableRequest()) == "service_token"
    assert auth.token_field(matchmaking_pb2.EnqueueRequest()) == "player_token"
    assert auth.token_field(matchmaking_pb2.CreateCustomTableRequest()) == "host_token"
    assert auth.token_field(table_pb2.GetTableRequest()) is None
    assert auth.token_field(table_pb2.CreateTableRequest()) is None


def test_verify_request_names_the_missing_field_and_passes_requests_without_one() -> None:
    with pytest.raises(Unauthenticated, match="service_token is required"):
        auth.verify_request(KEY, table_pb2.JoinTableRequest(table_id="t1"))
    assert auth.verify_request(KEY, table_pb2.GetTableRequest(table_id="t1")) is None
    token = auth.issue(KEY, "t1", 1, "ada")
    claims = auth.verify_request(KEY, table_pb2.WatchTableRequest(table_id="t1", seat_token=token))
    assert claims is not None and (claims.table_id, claims.seat) == ("t1", 1)


def test_current_claims_refuses_a_call_nothing_verified() -> None:
    with pytest.raises(Unauthenticated, match="no verified token"):
        auth.current_claims()
    reset = auth.set_current_claims(auth.verify(KEY, auth.service_token(KEY, "x")))
    try:
        assert auth.current_claims().role == "service"
    finally:
        auth.reset_current_claims(reset)
    with pytest.raises(Unauthenticated):
        auth.current_claims()


class _Echo(table_pb2_grpc.TableServiceServicer):
    """Handlers that only report the claims the interceptor left them."""

    async def JoinTable(
        self, request: table_pb2.JoinTableRequest, context: grpc.aio.ServicerContext
    ) -> table_pb2.JoinTableResponse:
        claims = auth.current_claims()
        claims.require_service()
        return table_pb2.JoinTableResponse(seat_token=claims.player, seat=request.seat)

    async def GetTable(
        self, request: table_pb2.GetTableRequest, context: grpc.aio.ServicerContext
    ) -> table_pb2.TableView:
        try:
            phase = auth.current_claims().player  # no token field: nothing verified, nothing left over
        except Unauthenticated:
            phase = "no claims"
        return table_pb2.TableView(table_id=request.table_id, phase=phase)

    async def WatchTable(
        self, request: table_pb2.WatchTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        claims = auth.current_claims()
        claims.require_table(request.table_id)
        for i in range(3):
            yield table_pb2.WatchTableResponse(snapshot=table_pb2.TableView(table_id=claims.player, seq=i))
            claims = auth.current_claims()  # still this call's claims between items


@pytest.fixture(scope="module")
def echo_target() -> Iterator[str]:
    """A server of `_Echo` behind `start_server`'s interceptors, on its own loop in a thread."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stop = asyncio.Event()
    target: list[str] = []

    async def main() -> None:
        server, port, _ = await grpcserver.start_server(
            "127.0.0.1",
            0,
            [lambda s: table_pb2_grpc.add_TableServiceServicer_to_server(_Echo(), s)],
            ["monopoly.v1.TableService"],
            token_secret=KEY,
        )
        target.append(f"127.0.0.1:{port}")
        started.set()
        await stop.wait()
        await server.stop(None)

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert started.wait(10)
    yield target[0]
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)
    loop.close()


def _code(call: object) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        call()  # type: ignore[operator]
    return info.value.code()  # type: ignore[attr-defined,no-any-return]


def _stubs(target: str) -> tuple[grpc.Channel, table_pb2_grpc.TableServiceStub]:
    channel = grpc.insecure_channel(target)
    return channel, table_pb2_grpc.TableServiceStub(channel)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "garbage",
        auth.issue("another-key", "*", -1, "svc", role="service"),  # forged
        auth.issue(KEY, "*", -1, "svc", role="service", now=1_000, ttl_s=60),  # expired
    ],
)
def test_the_interceptor_refuses_missing_forged_and_expired_tokens(echo_target: str, token: str) -> None:
    channel, stub = _stubs(echo_target)
    with channel:
        join = table_pb2.JoinTableRequest(table_id="t1", seat=0, service_token=token)
        with pytest.raises(grpc.RpcError) as info:
            stub.JoinTable(join, timeout=5)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
        assert info.value.details()  # type: ignore[attr-defined]
        watch = table_pb2.WatchTableRequest(table_id="t1", seat_token=token)
        assert _code(lambda: list(stub.WatchTable(watch, timeout=5))) == grpc.StatusCode.UNAUTHENTICATED


def test_the_handler_reads_the_verified_claims(echo_target: str) -> None:
    channel, stub = _stubs(echo_target)
    with channel:
        joined = stub.JoinTable(
            table_pb2.JoinTableRequest(table_id="t1", seat=2, service_token=auth.service_token(KEY, "bots")), timeout=5
        )
        assert (joined.seat_token, joined.seat) == ("bots", 2)
        items = list(
            stub.WatchTable(
                table_pb2.WatchTableRequest(table_id="t1", seat_token=auth.issue(KEY, "t1", 1, "ada")), timeout=5
            )
        )
        assert [(i.snapshot.table_id, i.snapshot.seq) for i in items] == [("ada", 0), ("ada", 1), ("ada", 2)]


def test_a_valid_token_without_the_right_claims_is_permission_denied(echo_target: str) -> None:
    channel, stub = _stubs(echo_target)
    with channel:
        player = auth.issue(KEY, "t1", 0, "ada")
        join = table_pb2.JoinTableRequest(table_id="t1", seat=0, service_token=player)
        assert _code(lambda: stub.JoinTable(join, timeout=5)) == grpc.StatusCode.PERMISSION_DENIED
        watch = table_pb2.WatchTableRequest(table_id="t2", seat_token=player)
        assert _code(lambda: list(stub.WatchTable(watch, timeout=5))) == grpc.StatusCode.PERMISSION_DENIED


def test_requests_without_a_token_field_pass_untouched(echo_target: str) -> None:
    channel, stub = _stubs(echo_target)
    with channel:
        stub.JoinTable(
            table_pb2.JoinTableRequest(table_id="t1", service_token=auth.service_token(KEY, "bots")), timeout=5
        )
        view = stub.GetTable(table_pb2.GetTableRequest(table_id="t1"), timeout=5)
        assert (view.table_id, view.phase) == ("t1", "no claims")
