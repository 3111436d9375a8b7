"""Issue 6 end to end: from the queue to the ratings, on real NATS and Postgres.

Four players register with matchmaking and enqueue for Classic; a table forms;
bots play it to its end through the real APIs with the seat tokens matchmaking
issued (the auction, trade and casino services run its sub-protocols); the
rating service learns who sat where from matchmaking's `match.formed` (player
ids), judges the game on the table's `GameEnded` and moves each player's
rating once, in the order of places; the same `GameEnded` published again
changes nothing. The session platform lowers R1's minimum real time
(RATING_MIN_REAL_MINUTES) so a game of bots, some seconds long, is rated.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from nats.js import JetStreamContext

from client import BotTable, SubProtocolStubs, platform_channel
from client.matchmaking import MatchmakingClient, SeatTicket
from client.platform import Platform
from monopoly.v1 import common_pb2, rating_pb2, rating_pb2_grpc, table_pb2_grpc
from servicekit import auth, bus, signals

from .helpers import judged

pytestmark = pytest.mark.integration

#: The rating service's durable consumer of the table stream.
RATING_DURABLE = "rating-table-signals"


@pytest.fixture
async def rating(platform: Platform) -> AsyncIterator[rating_pb2_grpc.RatingServiceStub]:
    channel = platform_channel(platform.target("rating"))
    try:
        yield rating_pb2_grpc.RatingServiceStub(channel)
    finally:
        await channel.close()


@pytest.fixture
async def mm(platform: Platform) -> AsyncIterator[MatchmakingClient]:
    async with MatchmakingClient(platform.target("matchmaking")) as client:
        yield client


async def consumed(js: JetStreamContext, stream_seq: int, timeout: float = 30) -> None:
    """Wait until the rating service's table-signal consumer acked every message up to `stream_seq`."""
    deadline = time.monotonic() + timeout
    while True:
        info = await js.consumer_info(bus.TABLE_SIGNALS.name, RATING_DURABLE)
        if info.ack_floor is not None and (info.ack_floor.stream_seq or 0) >= stream_seq:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{RATING_DURABLE} did not ack stream seq {stream_seq} within {timeout:.0f} s")
        await asyncio.sleep(0.1)


def seat_tokens(platform: Platform, seats: list[SeatTicket]) -> dict[int, str]:
    """Matchmaking's seat tokens of our players; a seat taken by a ticket an earlier test left in the
    queue gets a token signed with the platform's key, so the bots can play it too."""
    tokens = {s.seat: s.seat_token for s in seats}
    secret = platform.token_secret
    for s in seats[0].match.seats:
        if s.seat not in tokens:
            tokens[s.seat] = auth.issue(secret, seats[0].table_id, s.seat, s.player_id or s.display_name)
    return tokens


async def test_four_players_queue_play_and_each_rating_moves_once_in_the_order_of_places(
    platform: Platform,
    mm: MatchmakingClient,
    stub: table_pb2_grpc.TableServiceStub,
    rating: rating_pb2_grpc.RatingServiceStub,
    js: JetStreamContext,
    pool: asyncpg.Pool,
) -> None:
    tag = uuid.uuid4().hex[:6]
    players = [await mm.register(f"{who}-{tag}") for who in ("ann", "ben", "cat", "dan")]
    seats = await mm.queue_and_wait(players, "classic", timeout=30)
    table_id = seats[0].table_id
    assert {s.table_id for s in seats} == {table_id}
    match = seats[0].match
    assert match.mode == "classic" and match.kind == "queue" and match.rated
    assert not any(s.is_bot for s in match.seats)
    ours = {s.player.player_id: s.seat for s in seats}  # player id -> seat

    services = SubProtocolStubs.connect({n: platform.target(n) for n in ("auction", "trade", "casino")})
    try:
        game = BotTable(stub, table_id=table_id, tokens=seat_tokens(platform, seats), services=services, seed=6)
        state = await asyncio.wait_for(game.play(), 60)
    finally:
        await services.close()
    assert state.finished and state.winner >= 0

    result = await judged(rating, table_id)
    assert result.mode == "classic" and result.rated and result.pool == "ffa" and result.reason == "", result.reason
    assert result.rounds == state.round and result.real_ms > 0
    by_seat = {e.seat: e for e in result.players}
    # keyed by matchmaking's player ids, not by the names seated at the table
    for player_id, seat in ours.items():
        assert by_seat[seat].player == player_id
    async with pool.acquire() as conn:
        formed = await conn.fetchval("SELECT kind FROM rating.matches WHERE table_id = $1", table_id)
    assert formed == "queue"

    # the order of places: the winner 1st, the first out last (D5); a round-cap end ranks the rest
    n = len(by_seat)
    assert by_seat[state.winner].place == 1
    for i, seat in enumerate(state.eliminated):
        assert by_seat[seat].place == n - i
    by_place = sorted(result.players, key=lambda e: e.place)
    gains = [e.mu_after - e.mu_before for e in by_place]
    assert gains == sorted(gains, reverse=True) and gains[0] > 0 > gains[-1], gains
    deltas = [e.ordinal_delta for e in by_place]
    assert deltas[0] == max(deltas) and deltas[-1] == min(deltas)
    if state.eliminated:  # the first out lost the most
        assert by_seat[state.eliminated[0]].mu_after - by_seat[state.eliminated[0]].mu_before == min(gains)

    async def snapshot() -> dict[str, tuple[rating_pb2.Profile, list[rating_pb2.HistoryEntry]]]:
        out = {}
        for player_id in ours:
            prof = await rating.GetProfile(rating_pb2.GetProfileRequest(player=player_id), timeout=10)
            hist = await rating.History(rating_pb2.HistoryRequest(player=player_id), timeout=10)
            out[player_id] = (prof, list(hist.entries))
        return out

    before = await snapshot()
    for player_id, (prof, hist) in before.items():  # each rating changed exactly once
        entry = by_seat[ours[player_id]]
        [ffa] = [r for r in prof.ratings if r.pool == "ffa"]
        assert ffa.games == 1 and ffa.mu == pytest.approx(entry.mu_after) and entry.mu_before == pytest.approx(25.0)
        assert prof.games == 1 and prof.rated_games == 1 and prof.xp == entry.xp > 0
        [h] = hist
        assert h.table_id == table_id and h.rated and h.ordinal_delta == pytest.approx(entry.ordinal_delta)

    # the leaderboard shows them under the names they played with
    board = await rating.Leaderboard(rating_pb2.LeaderboardRequest(pool="ffa", page_size=100), timeout=10)
    names = {e.player: e.display_name for e in board.entries}
    for ticket in seats:
        if ticket.player.player_id in names:
            assert names[ticket.player.player_id] == ticket.player.display_name

    # the same GameEnded published again (a new message id: JetStream keeps it; the service must not)
    last = await js.get_last_msg(bus.TABLE_SIGNALS.name, signals.subject("lifecycle", table_id))
    batch = common_pb2.EventBatch.FromString(last.data)
    assert "GameEnded" in [e.type for e in batch.events]
    ack = await js.publish(signals.subject("lifecycle", table_id), last.data, headers={"Nats-Msg-Id": uuid.uuid4().hex})
    await consumed(js, ack.seq)
    assert await snapshot() == before
    assert await judged(rating, table_id) == result


async def test_matchmaking_matches_on_the_rating_service_s_ratings(
    mm: MatchmakingClient, rating: rating_pb2_grpc.RatingServiceStub, pool: asyncpg.Pool
) -> None:
    """The band compares current ratings: Enqueue asks the rating service (openskill's start for a new player)."""
    newcomer = await mm.register(f"eve-{uuid.uuid4().hex[:6]}")
    await mm.enqueue(newcomer, "duel")
    try:
        async with pool.acquire() as conn:
            mu, sigma = await conn.fetchrow(
                "SELECT rating, rating_sigma FROM matchmaking.players WHERE player_id = $1", newcomer.player_id
            )
        assert (mu, sigma) == pytest.approx((25.0, 25.0 / 3))
        # A rated player queues with the rating it earned (its rating row written as a rated game would).
        veteran = await mm.register(f"vera-{uuid.uuid4().hex[:6]}")
        async with pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO rating.ratings (player, pool, mu, sigma, ordinal, games) "
                "VALUES ($1, 'ffa', $2, $3, $4, 3)",
                veteran.player_id,
                31.5,
                4.0,
                31.5 - 3 * 4.0,
            )
        try:
            await mm.enqueue(veteran, "classic")
            async with pool.acquire() as conn:
                stored = await conn.fetchrow(
                    "SELECT rating, rating_sigma FROM matchmaking.players WHERE player_id = $1", veteran.player_id
                )
            await mm.cancel(veteran)
            assert (stored["rating"], stored["rating_sigma"]) == pytest.approx((31.5, 4.0))
        finally:
            async with pool.acquire() as conn:
                await conn.execute("DELETE FROM rating.ratings WHERE player = $1", veteran.player_id)
    finally:
        await mm.cancel(newcomer)
