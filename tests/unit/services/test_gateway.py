"""The gateway's pure parts: the protocol's checks (api), the commands a browser may send and what
it is shown of a table (views)."""

from __future__ import annotations

import json
import types

import pytest

from engine import BuyProperty, Roll, apply, classic, legal_commands, new_game
from services.gateway import api, views
from services.gateway.handlers import parse_command


def error_of(text: str | bytes) -> api.GatewayError:
    with pytest.raises(api.GatewayError) as caught:
        api.parse(text)
    return caught.value


def test_requests_are_parsed_by_op_and_anything_else_is_invalid_argument() -> None:
    register = api.parse(json.dumps({"id": 3, "op": "register", "name": "ada"}))
    assert isinstance(register, api.Register) and register.name == "ada" and register.id == 3
    for text, says in (
        ("[1, 2]", "message"),
        ("{", "json"),
        (json.dumps({"op": "nope"}), "op"),
        (json.dumps({"op": "register"}), "name"),
        (json.dumps({"op": "register", "name": "a", "extra": 1}), "extra"),
        (json.dumps({"op": "enqueue", "player_token": "a.b", "mode": "chess"}), "mode"),
        (json.dumps({"op": "enqueue", "player_token": "a b", "mode": "speed"}), "player_token"),
        (json.dumps({"op": "watch", "table_id": "t", "token": "a.b", "from_seq": -1}), "from_seq"),
        (json.dumps({"op": "custom_create", "player_token": "a.b", "seats": 9}), "seats"),
    ):
        error = error_of(text)
        assert error.code == "INVALID_ARGUMENT" and says in error.message.lower(), (text, error.message)
    assert "binary" in error_of(b"{}").message
    assert "larger" in error_of(json.dumps({"op": "register", "name": "x" * api.MAX_MESSAGE_BYTES})).message


def test_an_unreadable_message_is_answered_by_its_id_when_it_has_one() -> None:
    assert api.request_id(json.dumps({"id": 5, "op": "?"})) == 5
    assert api.request_id("{garbage") is None
    assert api.request_id(json.dumps({"id": True})) is None
    assert api.request_id("[" * 5000) is None  # nested too deep for the parser: no id, no crash
    assert api.request_id(json.dumps({"id": 2**63, "op": "?"})) is None  # no JSON number the answer could carry


def test_a_message_id_is_a_javascript_safe_integer_or_a_short_string() -> None:
    """An id the answer could not carry (orjson encodes 64-bit integers at most; a browser reads 2**53)
    is refused with the message, not found unanswerable once the command ran."""
    assert api.parse(json.dumps({"id": 2**53 - 1, "op": "register", "name": "a"})).id == 2**53 - 1
    for bad in (2**53, -(2**64), "x" * 65):
        error = error_of(json.dumps({"id": bad, "op": "register", "name": "a"}))
        assert error.code == "INVALID_ARGUMENT" and "id" in error.message, bad


def test_the_rate_limit_allows_a_burst_then_the_sustained_rate() -> None:
    now = [0.0]
    limit = api.RateLimit(rate=10, burst=5, clock=lambda: now[0])
    assert [limit.take() for _ in range(6)] == [True] * 5 + [False]
    now[0] += 0.1  # one token back
    assert limit.take() and not limit.take()
    now[0] += 100
    assert sum(limit.take() for _ in range(10)) == 5  # never more than the burst


def test_a_command_takes_the_seat_of_the_token_and_only_player_commands_pass() -> None:
    assert parse_command({"type": "Roll"}, 2) == Roll(2)
    for data, says in (
        ({"type": "Roll", "seat": 2}, "seat token"),
        ({"type": "Tick", "now": 5}, "not a player command"),
        ({"type": ["Roll"]}, "not a player command"),
        ({"type": "SettleAuction"}, "not a player command"),
        ({"type": "Build", "square": "3"}, "Build"),
        ({"type": "Build", "square": 3, "level": 1}, "level"),
        ({"type": "PlaceBet", "numbers": list(range(50))}, "at most"),
        ({"type": "Bid", "amount": 10**12}, "range"),
    ):
        with pytest.raises(api.GatewayError) as caught:
            parse_command(data, 0)
        assert caught.value.code == "INVALID_ARGUMENT" and says in caught.value.message, data


def test_the_view_offers_the_actor_its_legal_commands_and_a_spectator_none() -> None:
    state, _ = new_game(classic(), ["a", "b", "c"], seed=4)
    actor = state.actor
    offered = views.legal(state, actor)
    assert {"type": "Roll"} in offered  # G2: the turn starts with a roll
    assert {"type": "ProposeTrade"} in offered  # T1: before rolling the current player may propose
    assert all("seat" not in c for c in offered)
    assert views.legal(state, -1) == []
    other = (actor + 1) % 3
    assert {"type": "Roll"} not in views.legal(state, other)
    view = views.table_view(state)
    assert view["actor"] == actor and len(view["players"]) == 3 and len(view["owner"]) == 40
    assert len(views.board(state)) == 40
    # Play to a purchase offer: the buttons are the engine's legal commands there (P1).
    for _ in range(200):
        if state.phase.value == "buy":
            break
        apply(state, legal_commands(state, state.actor)[0])
    assert state.phase.value == "buy"
    types = {c["type"] for c in views.legal(state, state.actor)}
    assert {"BuyProperty", "DeclineProperty"} <= types
    assert BuyProperty.__name__ in views.PLAYER_COMMANDS and "ExecuteTrade" not in views.PLAYER_COMMANDS


def test_registrations_are_limited_per_client_address_over_all_its_connections() -> None:
    """The gateway registers players with its own token, which matchmaking's per-caller quota does
    not limit; so the gateway holds each client address to that quota itself (20/s, bursts of 200)."""
    now = [0.0]
    limits = api.ClientLimits(clock=lambda: now[0])
    assert sum(limits.take("10.0.0.1") for _ in range(250)) == api.REGISTER_BURST
    assert limits.take("10.0.0.2")  # another client has its own
    now[0] += 1.0
    assert sum(limits.take("10.0.0.1") for _ in range(50)) == api.REGISTER_RATE_PER_S


async def test_a_session_over_its_clients_registration_quota_is_refused_before_any_call() -> None:
    from services.gateway.handlers import Session

    async def push(message: dict[str, object]) -> None: ...

    backends = types.SimpleNamespace(table=None, matchmaking=None)  # never called
    session = Session(backends, "k" * 32, push, may_register=lambda: False)  # type: ignore[arg-type]
    with pytest.raises(api.GatewayError) as caught:
        await session.handle(api.parse(json.dumps({"id": 1, "op": "register", "name": "flood"})))
    assert caught.value.code == "RESOURCE_EXHAUSTED"


def test_a_client_address_holds_at_most_its_cap_of_connections() -> None:
    limits = api.ClientLimits()
    assert [limits.open("10.0.0.1", 2) for _ in range(3)] == [True, True, False]
    assert limits.open("10.0.0.2", 2)  # another client has its own
    limits.close("10.0.0.1")
    assert limits.open("10.0.0.1", 2)
    assert all(limits.open("10.0.0.3", 0) for _ in range(100))  # 0: no cap
    for _ in range(100):
        limits.close("10.0.0.3")
    assert "10.0.0.3" not in limits.connections


def test_behind_a_trusted_proxy_the_client_is_the_last_address_it_did_not_add() -> None:
    """An ingress in front: every browser would share its address (one cap for all of them)."""
    trusted = api.networks("10.0.0.0/8, 192.168.1.7")
    assert api.client_address("10.1.2.3", ["203.0.113.9"], trusted) == "203.0.113.9"
    # a client writing its own X-Forwarded-For is not believed: the proxy appends the real peer last
    assert api.client_address("10.1.2.3", ["1.1.1.1, 203.0.113.9"], trusted) == "203.0.113.9"
    assert api.client_address("10.1.2.3", ["198.51.100.4, 10.2.0.1"], trusted) == "198.51.100.4"  # two proxies
    assert api.client_address("203.0.113.5", ["1.1.1.1"], trusted) == "203.0.113.5"  # not from a proxy
    assert api.client_address("10.1.2.3", [], trusted) == "10.1.2.3"
    assert api.client_address("10.1.2.3", ["203.0.113.9"], ()) == "10.1.2.3"  # none trusted: the peer


def test_a_watch_refused_by_a_quota_is_followed_again_after_the_servers_hint() -> None:
    """Many spectators reconnecting at once (a failover) meet the stream-open quota: the gateway waits
    as told (`retry_after_s`) and follows the table again, where it used to give the browser up."""
    import grpc

    from servicekit.routing import retry_after_s

    def refused(*trailing: tuple[str, str]) -> grpc.aio.AioRpcError:
        return grpc.aio.AioRpcError(
            grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), "quota"
        )

    assert retry_after_s(refused(("retry-after-ms", "1200")), 0.5) == 1.2
    assert retry_after_s(refused(("retry-after-ms", "60000")), 0.5) == 5.0
    assert retry_after_s(refused(), 0.5) == 0.5
