"""Signed seat tokens: who may act for which seat, checked without a lookup."""

from __future__ import annotations

import pytest

from servicekit import auth
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
