"""Signed seat tokens: who may act for which seat, checked without a lookup, by the server interceptor."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from monopoly.v1 import auction_pb2, casino_pb2, matchmaking_pb2, rating_pb2, table_pb2, table_pb2_grpc, trade_pb2
from servicekit import access, auth, credentials, grpcserver, settings
from servicekit.errors import Forbidden, Unauthenticated
from servicekit.settings import MissingSecret

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
        base64.urlsafe_b64encode(b"[" * 5000).decode().rstrip("=") + ".sig",  # nested too deep to parse
        base64.urlsafe_b64encode(b'{"k":' * 3000).decode().rstrip("=") + ".sig",
        auth.issue(KEY, "t1", 0, "a") + "é",  # not ASCII: compare_digest would raise TypeError
        auth.issue(KEY, "t1", 0, "a").replace(".", ".é", 1),
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
        auth.issue(KEY, "*", -1, "svc", role="service") + "é",  # not ASCII: not INTERNAL
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


def test_requests_without_a_token_field_carry_it_in_the_call_metadata(echo_target: str) -> None:
    channel, stub = _stubs(echo_target)
    with channel:
        request = table_pb2.GetTableRequest(table_id="t1")
        assert _code(lambda: stub.GetTable(request, timeout=5)) == grpc.StatusCode.UNAUTHENTICATED
        seat = auth.metadata(auth.issue(KEY, "t1", 1, "ada"))
        view = stub.GetTable(request, timeout=5, metadata=seat)
        assert (view.table_id, view.phase) == ("t1", "ada")
        other_table = auth.metadata(auth.issue(KEY, "t2", 1, "ada"))
        assert _code(lambda: stub.GetTable(request, metadata=other_table)) == grpc.StatusCode.PERMISSION_DENIED
        account = auth.metadata(auth.issue(KEY, "*", -1, "p-1", role="account"))  # a player's identity: no table
        assert _code(lambda: stub.GetTable(request, metadata=account)) == grpc.StatusCode.PERMISSION_DENIED
        forged = auth.metadata(auth.operator_token("another-key-of-16+", "mallory"))
        assert _code(lambda: stub.GetTable(request, metadata=forged)) == grpc.StatusCode.UNAUTHENTICATED
        operator = auth.metadata(auth.operator_token(KEY, "ops"))
        assert stub.GetTable(request, timeout=5, metadata=operator).phase == "ops"


def test_a_method_the_policy_does_not_list_is_denied_to_everyone(
    echo_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(access.POLICY, "/monopoly.v1.TableService/GetTable")
    channel, stub = _stubs(echo_target)
    with channel:
        operator = auth.metadata(auth.operator_token(KEY, "ops"))
        call = lambda: stub.GetTable(table_pb2.GetTableRequest(table_id="t1"), timeout=5, metadata=operator)  # noqa: E731
        assert _code(call) == grpc.StatusCode.PERMISSION_DENIED


def test_every_method_of_every_service_has_one_line_in_the_access_policy() -> None:
    methods = {
        f"/{service.full_name}/{method.name}"
        for module in (table_pb2, matchmaking_pb2, auction_pb2, trade_pb2, casino_pb2, rating_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    }
    platform = {m for m in access.POLICY if m.startswith("/monopoly.")}
    assert methods == platform
    assert all(access.ANYONE not in access.POLICY[m].who for m in methods)  # every platform call needs a token
    creating = access.POLICY["/monopoly.v1.TableService/CreateTable"]
    assert set(creating.who) == {access.OPERATOR, access.SERVICE}


# -- keys: none by default, rotation, the data folder's own ------------------------------------


def test_a_token_names_its_key_and_a_rotation_accepts_the_old_and_the_new() -> None:
    old = auth.Keyring.parse("k1:" + "a" * 32)
    rotating = auth.Keyring.parse(f"k2:{'b' * 32},k1:{'a' * 32}")
    new = auth.Keyring.parse("k2:" + "b" * 32)
    before = auth.issue(old, "t1", 0, "ada")
    after = auth.issue(rotating, "t1", 0, "ada")
    assert auth.verify(rotating, before).player == auth.verify(rotating, after).player == "ada"
    assert auth.verify(new, after).seat == 0  # the first key signs
    with pytest.raises(Unauthenticated, match="does not hold"):
        auth.verify(new, before)  # the rotation is over: the old key's tokens are refused


def test_no_key_no_service_and_weak_or_public_keys_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MissingSecret, match="TOKEN_SECRET is not set"):
        settings.token_secret({})
    with pytest.raises(MissingSecret, match="at least 16"):
        settings.token_secret({"TOKEN_SECRET": "short"})
    with pytest.raises(MissingSecret, match="public"):
        settings.token_secret({"TOKEN_SECRET": "monopoly-dev-secret-change-me"})  # the former default
    for pattern in ("k" * 32, "changeme" * 3, "1234" * 5, "ab" * 12):
        with pytest.raises(MissingSecret, match="random"):
            settings.token_secret({"TOKEN_SECRET": pattern})
    with pytest.raises(MissingSecret, match="random"):
        settings.token_secret({"TOKEN_SECRETS": "new:" + "x" * 32 + ",old:3f9a1c7e5b2d40868e1f6a2c9d3b7e05"})
    assert settings.token_secret({"TOKEN_SECRET": "3f9a1c7e5b2d4086"})  # 16 random hex digits pass
    dev = settings.token_secret({"MONOPOLY_DEV": "1", "XDG_STATE_HOME": str(tmp_path)})
    assert dev == settings.token_secret({"MONOPOLY_DEV": "1", "XDG_STATE_HOME": str(tmp_path)})  # per machine
    assert (tmp_path / "monopoly" / auth.SECRET_FILE).stat().st_mode & 0o777 == 0o600


def test_a_data_folder_keeps_its_random_key_readable_by_its_owner_only(tmp_path: Path) -> None:
    first = auth.data_dir_secret(tmp_path / "a")
    assert first == auth.data_dir_secret(tmp_path / "a") and len(first) == 64
    assert first != auth.data_dir_secret(tmp_path / "b")
    assert (tmp_path / "a" / auth.SECRET_FILE).stat().st_mode & 0o777 == 0o600
    assert first not in repr(auth.Keyring.of(first))  # a key never reaches a log line


def test_a_stream_checks_each_token_signature_once_but_its_expiry_and_the_policy_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    play = "/monopoly.v1.TableService/Play"
    verified: dict[str, auth.Claims] = {}
    now = 1_000_000.0
    monkeypatch.setattr(grpcserver.time, "time", lambda: now)
    token = auth.issue(KEY, "t1", 0, "ada", now=int(now), ttl_s=60)
    request = table_pb2.SubmitCommandRequest(table_id="t1", seat_token=token)
    assert grpcserver.authorize(KEY, play, request, verified=verified) == auth.verify(KEY, token, now=now)
    assert list(verified) == [token]
    elsewhere = table_pb2.SubmitCommandRequest(table_id="t2", seat_token=token)
    with pytest.raises(Forbidden):  # the policy still reads every request
        grpcserver.authorize(KEY, play, elsewhere, verified=verified)
    forged = auth.issue("another-key", "t1", 0, "ada", now=int(now))
    forged_request = table_pb2.SubmitCommandRequest(table_id="t1", seat_token=forged)
    with pytest.raises(Unauthenticated):
        grpcserver.authorize(KEY, play, forged_request, verified=verified)
    assert forged not in verified
    now += 61
    with pytest.raises(Unauthenticated, match="expired"):  # kept, but expired since
        grpcserver.authorize(KEY, play, request, verified=verified)


def test_nul_in_a_string_field_is_refused_as_the_request_is_decoded(echo_target: str) -> None:
    channel, stub = _stubs(echo_target)
    with channel:
        operator = auth.metadata(auth.operator_token(KEY, "ops"))
        request = table_pb2.GetTableRequest(table_id="t\x00")
        assert _code(lambda: stub.GetTable(request, timeout=5, metadata=operator)) == grpc.StatusCode.INVALID_ARGUMENT
        watch = table_pb2.WatchTableRequest(table_id="t1\x00", seat_token=auth.issue(KEY, "t1", 1, "ada"))
        assert _code(lambda: list(stub.WatchTable(watch, timeout=5))) == grpc.StatusCode.INVALID_ARGUMENT


def test_a_token_channel_carries_its_token_on_every_call_unless_the_call_brings_its_own(echo_target: str) -> None:
    async def main() -> tuple[str, str, list[str]]:
        async with credentials.channel(echo_target, auth.operator_token(KEY, "ops")) as channel:
            stub = table_pb2_grpc.TableServiceStub(channel)
            carried = await stub.GetTable(table_pb2.GetTableRequest(table_id="t1"), timeout=5)
            own = auth.metadata(auth.issue(KEY, "t1", 1, "ada"))
            brought = await stub.GetTable(table_pb2.GetTableRequest(table_id="t1"), timeout=5, metadata=own)
            watch = table_pb2.WatchTableRequest(table_id="t1", seat_token=auth.issue(KEY, "t1", 1, "bo"))
            items = [i.snapshot.table_id async for i in stub.WatchTable(watch, timeout=5)]
            return carried.phase, brought.phase, items

    assert asyncio.run(main()) == ("ops", "ada", ["bo", "bo", "bo"])


def test_a_renewed_token_is_issued_again_once_half_its_life_is_gone() -> None:
    now = [1_000.0]
    issued: list[int] = []

    def make(ttl_s: int) -> str:
        issued.append(ttl_s)
        return auth.issue(KEY, "*", -1, f"svc-{len(issued)}", role="service", ttl_s=ttl_s, now=now[0])

    token = auth.RenewedToken(make, ttl_s=600, clock=lambda: now[0])
    first = token()
    now[0] += 299
    assert token() == first and issued == [600]
    now[0] += 1
    second = token()
    assert second != first and issued == [600, 600]
    assert auth.verify(KEY, second, now=now[0] + 599).player == "svc-2"  # valid its whole life from now


async def test_a_channel_carries_the_token_its_source_gives_now(echo_target: str) -> None:
    """A service's channels carry a renewed token (`auth.RenewedToken`): a call after the renewal
    carries the new one, so a service that runs for days is never refused for its own token's age."""
    now = [0.0]
    names = iter(["ops-1", "ops-2"])
    token = auth.RenewedToken(
        lambda ttl: auth.issue(KEY, "*", -1, next(names), role="operator", ttl_s=ttl), ttl_s=3600, clock=lambda: now[0]
    )
    async with credentials.channel(echo_target, token) as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        request = table_pb2.GetTableRequest(table_id="t1")
        assert (await stub.GetTable(request, timeout=5)).phase == "ops-1"
        now[0] += 1800
        assert (await stub.GetTable(request, timeout=5)).phase == "ops-2"


def test_health_watch_streams_the_status_through_the_interceptors(echo_target: str) -> None:
    """grpc-health's `Watch` writes with `context.write` and returns: the interceptors' wrappers iterate
    response streams, and failed it with INTERNAL (and a traceback in the log) for every caller."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(echo_target) as channel:
        call = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
        first = next(call)
        call.cancel()
    assert first.status == health_pb2.HealthCheckResponse.SERVING
