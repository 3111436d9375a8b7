"""The rating service end to end on real NATS and Postgres (R1, R2).

Most games here are synthetic: batches of engine events in the table's own
envelopes published as the table's signals (`servicekit.signals.split`),
exactly as the table's outbox relay publishes them, so the consumer is tested as the table feeds it
with games of any length, real duration and cast. One game is played to its
end by bots through the table service.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from nats.js import JetStreamContext

from client import BotTable, platform_channel
from client.platform import Platform
from engine import BetSettled, Event, GameEnded, PlayerBankrupt, TableCreated, TurnEnded, TurnStarted, preset
from engine.events import TurnOrderSet
from monopoly.v1 import common_pb2, matchmaking_pb2, rating_pb2, rating_pb2_grpc, table_pb2_grpc
from servicekit import signals
from servicekit.wire import envelope

from .helpers import judged

pytestmark = pytest.mark.integration

MINUTE = 60_000
TIMEOUT = 60.0
SCALE = 60  # the synthetic games' clock scale: game time runs 60x the wall time


@pytest.fixture(scope="module")
def rating_platform(platform: Platform) -> Platform:
    """The session's platform (one instance of each service per NATS: they share their durable consumers)."""
    return platform


@pytest.fixture(scope="module")
async def rating(rating_platform: Platform) -> AsyncIterator[rating_pb2_grpc.RatingServiceStub]:
    channel = platform_channel(rating_platform.target("rating"))
    try:
        yield rating_pb2_grpc.RatingServiceStub(channel)
    finally:
        await channel.close()


def names(*who: str) -> tuple[str, ...]:
    """Player names of this run (the service's state outlives test runs)."""
    tag = uuid.uuid4().hex[:6]
    return tuple(f"{w}-{tag}" for w in who)


class SyntheticGame:
    """A game as the table would publish it: one batch per committed command."""

    def __init__(
        self,
        players: tuple[str, ...],
        *,
        mode: str = "classic",
        rounds: int = 12,
        real_ms: int = 15 * MINUTE,
        elimination: tuple[int, ...] | None = None,
        jackpot_seat: int | None = None,
        out_in_round: dict[int, int] | None = None,
    ) -> None:
        self.table_id = f"syn-{uuid.uuid4().hex[:12]}"
        self.players = players
        self.mode = mode
        self.rounds = rounds
        self.real_ms = real_ms
        n = len(players)
        #: seats in order of elimination (D5); the seat left wins
        self.elimination = elimination if elimination is not None else tuple(range(n - 1, 0, -1))
        self.winner = next(s for s in range(n) if s not in self.elimination)
        places = [0] * n
        places[self.winner] = 1
        for i, seat in enumerate(self.elimination):
            places[seat] = n - i
        self.places = tuple(places)
        self.jackpot_seat = jackpot_seat
        #: seats (not the last to go) that go out in the given round rather than at the end
        self.out_in_round = out_in_round or {}
        self.seq = 0
        self.start_wall = int(time.time() * 1000) - real_ms
        self.batches: list[common_pb2.EventBatch] = self._build()

    def _batch(self, wall_ms: int, *events: Event) -> common_pb2.EventBatch:
        game_ms = (wall_ms - self.start_wall) * SCALE
        envs = []
        for event in events:
            self.seq += 1
            envs.append(envelope(self.table_id, self.seq, event, game_ms, SCALE, wall_ms))
        return common_pb2.EventBatch(events=envs)

    def _build(self) -> list[common_pb2.EventBatch]:
        n = len(self.players)
        order = tuple(range(n))
        out = [
            self._batch(
                self.start_wall,
                TableCreated(preset(self.mode), 1234, self.players),
                TurnOrderSet(order),
                TurnStarted(0, 1),
            )
        ]
        step = self.real_ms // (self.rounds + 2)
        for r in range(2, self.rounds + 1):
            wall = self.start_wall + step * (r - 1)
            out.append(self._batch(wall, TurnEnded(n - 1), TurnStarted(0, r)))
            if self.jackpot_seat is not None and r == 2:
                out.append(self._batch(wall, BetSettled(self.jackpot_seat, (2, 5), 3, True, 0, 4500, 0)))
            for seat, out_round in self.out_in_round.items():
                if out_round == r:
                    out.append(self._batch(wall, PlayerBankrupt(seat, -1, self.places[seat])))
        end = self.start_wall + self.real_ms
        *early, last = self.elimination
        for i, seat in enumerate(early):
            if seat in self.out_in_round:
                continue
            out.append(self._batch(end - 1000 + i, PlayerBankrupt(seat, -1, self.places[seat])))
        out.append(
            self._batch(
                end,
                PlayerBankrupt(last, self.winner, self.places[last]),
                GameEnded(self.winner, self.places, "last_player", self.real_ms * SCALE, SCALE),
            )
        )
        return out

    async def publish(
        self, js: JetStreamContext, batches: list[common_pb2.EventBatch] | None = None, again: bool = False
    ) -> None:
        """The batches' signals, as the table publishes them; `again`: under new message ids, so
        JetStream keeps them and the service sees a redelivery."""
        for batch in self.batches if batches is None else batches:
            for subject, msg_id, body in signals.split(batch.events, [e.SerializeToString() for e in batch.events]):
                await js.publish(subject, body, headers={"Nats-Msg-Id": uuid.uuid4().hex if again else msg_id})


async def recorded(pool: asyncpg.Pool, table_id: str, rounds: int, timeout: float = TIMEOUT) -> None:
    """Wait until the rating service recorded the table up to `rounds`."""
    deadline = time.monotonic() + timeout
    while True:
        async with pool.acquire() as conn:
            have = await conn.fetchval("SELECT rounds FROM rating.tables WHERE table_id = $1", table_id)
        if have is not None and have >= rounds:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"table {table_id} not recorded to round {rounds} within {timeout:.0f} s")
        await asyncio.sleep(0.05)


async def profile(rating: rating_pb2_grpc.RatingServiceStub, player: str) -> rating_pb2.Profile:
    return await rating.GetProfile(rating_pb2.GetProfileRequest(player=player), timeout=10)


async def history(rating: rating_pb2_grpc.RatingServiceStub, player: str) -> list[rating_pb2.HistoryEntry]:
    return list((await rating.History(rating_pb2.HistoryRequest(player=player), timeout=10)).entries)


def ffa(p: rating_pb2.Profile) -> rating_pb2.PoolRating | None:
    return next((r for r in p.ratings if r.pool == "ffa"), None)


async def test_a_qualifying_classic_game_rates_each_player_once_in_the_order_of_places(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    players = names("ann", "ben", "cat", "dan")
    # eliminated: dan (seat 3) first, then ann (0), then cat (2): ben (1) wins
    game = SyntheticGame(players, elimination=(3, 0, 2), jackpot_seat=2)
    await game.publish(js)
    result = await judged(rating, game.table_id)
    assert result.rated and result.pool == "ffa" and result.reason == ""
    assert result.rounds == 12 and result.real_ms == 15 * MINUTE
    by_place = sorted(result.players, key=lambda e: e.place)
    assert [e.player for e in by_place] == [players[1], players[2], players[0], players[3]]
    assert [e.seat for e in by_place] == [1, 2, 0, 3]
    gains = [e.mu_after - e.mu_before for e in by_place]
    assert gains == sorted(gains, reverse=True) and gains[0] > 0 > gains[-1]
    assert [e.xp for e in by_place] == [124, 84, 64, 49]  # 100/60/40/25 + 2 x 12 rounds
    assert by_place[0].achievements == ["first_win"]
    assert by_place[1].achievements == ["jackpot"]  # cat, seat 2, hit the jackpot

    for entry in result.players:
        p = await profile(rating, players[entry.seat])
        pool = ffa(p)
        assert pool is not None and pool.games == 1 and pool.mu == pytest.approx(entry.mu_after)
        assert p.xp == entry.xp and p.rated_games == 1 and p.games == 1
        assert {q.quest: q.progress for q in p.quests}["play_3"] == 1
        [h] = await history(rating, players[entry.seat])
        assert h.rated and h.table_id == game.table_id and h.ordinal_delta == pytest.approx(entry.ordinal_delta)

    ranked: list[str] = []  # the four in the leaderboard's order, page after page (others rate players too)
    for page in range(100):
        request = rating_pb2.LeaderboardRequest(pool="ffa", page=page, page_size=100)
        board = await rating.Leaderboard(request, timeout=10)
        assert board.total >= 4
        ranked += [e.player for e in board.entries if e.player in players]
        if len(ranked) == 4 or not board.entries:
            break
    assert sorted(ranked) == sorted(players)
    assert ranked.index(players[1]) < ranked.index(players[3])  # the winner above the last


async def test_R3_xp_counts_the_rounds_a_player_played_not_the_whole_game(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    """A player who leaves in round 3 of a 30-round game gets the round bonus of 3 rounds, not the
    game's (leaving is bankruptcy to the bank, R3); one out in round 26 has the capped 50."""
    players = names("ann", "ben", "cat", "dan")
    game = SyntheticGame(players, rounds=30, elimination=(3, 0, 2), out_in_round={3: 3, 0: 26})
    await game.publish(js)
    result = await judged(rating, game.table_id)
    assert result.rated and result.rounds == 30
    xp = {e.seat: e.xp for e in result.players}
    assert xp == {1: 150, 2: 110, 0: 90, 3: 25 + 2 * 3}
    await game.publish(js, game.batches, again=True)  # a redelivery keeps the rounds first recorded
    sentinel = SyntheticGame(names("s1", "s2"))
    await sentinel.publish(js)
    await judged(rating, sentinel.table_id)
    assert {e.seat: e.xp for e in (await judged(rating, game.table_id)).players} == xp
    assert (await profile(rating, players[3])).xp == 31


async def test_interleaved_games_read_in_one_fetch_are_each_judged_on_their_own_rounds(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    """R1 over games whose signals arrive interleaved, as thousands of tables publish them: the
    consumer reads them a fetch at a time and writes their rounds together, yet each game is judged
    on its own rounds, written before its GameEnded is read."""
    long_game = SyntheticGame(names("ann", "ben", "cat", "dan"), rounds=14)
    short_game = SyntheticGame(names("eve", "fay", "gus", "hal"), rounds=6)  # R1: under 10 rounds
    third = SyntheticGame(names("ivy", "jon", "kim", "lou"), rounds=11)
    games = (long_game, short_game, third)
    interleaved = [
        (game, batch)
        for i in range(max(len(g.batches) for g in games))
        for game in games
        if i < len(game.batches)
        for batch in [game.batches[i]]
    ]
    for game, batch in interleaved:
        await game.publish(js, [batch])
    long_result, short_result, third_result = [await judged(rating, g.table_id) for g in games]
    assert long_result.rated and long_result.rounds == 14
    assert third_result.rated and third_result.rounds == 11
    assert not short_result.rated and short_result.rounds == 6 and "R1" in short_result.reason


async def test_the_same_game_ended_delivered_again_changes_nothing(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    players = names("eve", "fay", "gus")
    game = SyntheticGame(players)
    await game.publish(js)
    first = await judged(rating, game.table_id)
    assert first.rated
    before = [await profile(rating, p) for p in players]

    last = game.batches[-1]
    await game.publish(js, [last], again=True)  # a new message id: JetStream does not drop it, the service must
    await game.publish(js, game.batches[:1])  # and a TableCreated again (dropped as a duplicate id)
    await game.publish(js, game.batches[:1], again=True)
    sentinel = SyntheticGame(names("s1", "s2"))
    await sentinel.publish(js)
    await judged(rating, sentinel.table_id)  # the redelivered batches came before it on the stream

    assert [await profile(rating, p) for p in players] == before
    again = await judged(rating, game.table_id)
    assert again == first
    for p in players:
        assert len(await history(rating, p)) == 1


async def test_R2_a_custom_game_gives_half_xp_and_no_rating_nor_achievements(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    players = names("hal", "ivy", "jon")
    game = SyntheticGame(players, mode="custom", rounds=20, jackpot_seat=0)
    await game.publish(js)
    result = await judged(rating, game.table_id)
    assert not result.rated and result.reason.startswith("R2")
    by_place = sorted(result.players, key=lambda e: e.place)
    assert [e.xp for e in by_place] == [(100 + 40) // 2, (60 + 40) // 2, (40 + 40) // 2]
    for entry in result.players:
        assert not entry.rated and entry.achievements == [] and entry.mu_after == 0
        p = await profile(rating, players[entry.seat])
        assert p.ratings == [] and p.achievements == [] and p.xp == entry.xp
        assert all(q.progress == 0 for q in p.quests)
        [h] = await history(rating, players[entry.seat])
        assert not h.rated and "R2" in h.reason


def min_real_ms(platform: Platform) -> int:
    """R1's minimum real time of a rated game as the platform's rating service is configured
    (RATING_MIN_REAL_MINUTES; the session lowers it so games played by bots can be rated)."""
    return round(float(platform.processes["rating"].env.get("RATING_MIN_REAL_MINUTES", "10")) * MINUTE)


@pytest.mark.parametrize(
    ("cast", "rounds", "real_ms", "why"),
    [
        (("kim", "bot-lee", "max"), 12, 15 * MINUTE, "R1: bot players (bot-lee"),
        (("kim", "lee", "max"), 9, 15 * MINUTE, "R1: 9 rounds (at least 10)"),
        (("kim", "lee", "max"), 12, None, "real minutes (at least "),
    ],
    ids=["bot", "9-rounds", "shorter-than-the-real-minutes"],
)
async def test_R1_games_that_fail_it_are_not_rated_and_history_says_why(
    rating_platform: Platform,
    rating: rating_pb2_grpc.RatingServiceStub,
    js: JetStreamContext,
    cast: tuple[str, ...],
    rounds: int,
    real_ms: int | None,
    why: str,
) -> None:
    if real_ms is None:  # 90 % of the configured minimum: 9 real minutes under R1's default
        minimum = min_real_ms(rating_platform)
        assert minimum > 0, "the platform's rating service rates games of any length"
        real_ms = minimum * 9 // 10
        why = f"real minutes (at least {minimum / MINUTE:g})"
    tag = uuid.uuid4().hex[:6]
    players = tuple(f"{c}-{tag}" for c in cast)
    game = SyntheticGame(players, rounds=rounds, real_ms=real_ms)
    await game.publish(js)
    result = await judged(rating, game.table_id)
    assert not result.rated and why in result.reason, result.reason
    assert re.search(r"R1: \d+(\.\d+)? real minutes" if "real minutes" in why else "R1: ", result.reason)
    for p in players:
        [h] = await history(rating, p)
        assert not h.rated and why in h.reason and h.xp == 0
        prof = await profile(rating, p)
        assert prof.ratings == [] and prof.xp == 0 and prof.games == 1 and prof.rated_games == 0


async def publish_formed(
    js: JetStreamContext, game: SyntheticGame, ids: tuple[str, ...], bots: frozenset[int], rated: bool
) -> None:
    """Matchmaking's `match.formed` for a synthetic table: seat i is player ids[i] ("" for a bot)."""
    event = matchmaking_pb2.MatchEvent(event_id=f"{game.table_id}:formed", type="formed", wall_unix_ms=game.start_wall)
    m = event.match
    m.table_id, m.mode, m.kind, m.rated, m.status, m.seat = game.table_id, game.mode, "queue", rated, "live", -1
    m.formed_unix_ms = game.start_wall
    for seat, (pid, name) in enumerate(zip(ids, game.players, strict=True)):
        m.seats.add(seat=seat, player_id=pid, display_name=name, is_bot=seat in bots, team=-1)
    await js.publish(
        f"monopoly.match.{game.table_id}.formed", event.SerializeToString(), headers={"Nats-Msg-Id": event.event_id}
    )


async def test_a_table_matchmaking_filled_with_bots_is_unrated_and_keyed_by_player_id(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    players = names("ula", "bot-1", "vic")  # vic registered as a bot: flagged, whatever the name
    ids = (f"p-{uuid.uuid4().hex[:8]}", "", f"p-{uuid.uuid4().hex[:8]}")
    game = SyntheticGame(players)
    await publish_formed(js, game, ids, frozenset({1, 2}), rated=False)
    await game.publish(js)
    result = await judged(rating, game.table_id)
    assert not result.rated and f"R1: bot players ({players[1]}, {players[2]})" in result.reason, result.reason
    assert [e.player for e in sorted(result.players, key=lambda e: e.seat)] == [ids[0], players[1], ids[2]]
    [h] = await history(rating, ids[0])
    assert not h.rated and "R1: bot players" in h.reason
    assert await history(rating, players[0]) == []  # not keyed by the display name


async def test_a_match_formed_after_the_table_was_created_keys_the_game_by_player_id(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    players = names("wes", "bot-xan", "yul")  # a human named like a bot: matchmaking's flags decide
    ids = tuple(f"p-{uuid.uuid4().hex[:8]}" for _ in players)
    game = SyntheticGame(players)
    await game.publish(js, game.batches[:-1])
    await publish_formed(js, game, ids, frozenset(), rated=True)
    await game.publish(js, game.batches[-1:])
    result = await judged(rating, game.table_id)
    assert result.rated and result.reason == "", result.reason
    for entry in result.players:
        assert entry.player == ids[entry.seat]
        prof = await profile(rating, ids[entry.seat])
        assert prof.rated_games == 1 and prof.xp == entry.xp


async def test_a_duel_is_not_rated_but_grants_the_duel_achievement(
    rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext
) -> None:
    players = names("nia", "oz", "pat")
    game = SyntheticGame(players, mode="duel")
    await game.publish(js)
    result = await judged(rating, game.table_id)
    assert not result.rated and "R1: duel mode" in result.reason
    winner = next(e for e in result.players if e.place == 1)
    assert winner.xp == 0 and sorted(winner.achievements) == ["duel_win", "first_win"]


async def test_ratings_survive_a_crash_of_the_rating_service_mid_stream(
    rating_platform: Platform, rating: rating_pb2_grpc.RatingServiceStub, js: JetStreamContext, pool: asyncpg.Pool
) -> None:
    players = names("qin", "rex", "sam", "tom")
    games = [SyntheticGame(players, elimination=tuple((k + i) % 4 for i in range(3))) for k in range(4)]
    for g in games[:2]:
        await g.publish(js)
    await judged(rating, games[1].table_id)
    await games[2].publish(js, games[2].batches[:5])  # TableCreated and rounds 2-5
    await recorded(pool, games[2].table_id, rounds=5)  # so nothing waits out the ack wait (30 s)
    await rating_platform.processes["rating"].kill()  # SIGKILL, mid-game
    await games[2].publish(js, games[2].batches[5:])
    await games[3].publish(js)
    await rating_platform.processes["rating"].start()
    # a batch the killed process fetched and did not ack would come again after the ack wait
    results = [await judged(rating, g.table_id, timeout=90) for g in games]
    assert all(r.rated for r in results)

    for player in players:
        entries = await history(rating, player)
        assert sorted(h.table_id for h in entries) == sorted(g.table_id for g in games)
        # each game applied once, on the result of the one before (whatever order the service took)
        by_start = {round(h.mu_before, 9): h for h in entries}
        assert len(by_start) == 4
        mu, chain = 25.0, []
        while round(mu, 9) in by_start:
            chain.append(by_start.pop(round(mu, 9)))
            mu = chain[-1].mu_after
        assert len(chain) == 4, [(h.mu_before, h.mu_after) for h in entries]
        p = await profile(rating, player)
        pool_rating = ffa(p)
        assert (
            pool_rating is not None and pool_rating.games == 4 and pool_rating.mu == pytest.approx(chain[-1].mu_after)
        )
        assert p.xp == sum(h.xp for h in entries) and p.games == 4
        assert {q.quest: q.completed for q in p.quests}["play_3"]
    async with pool.acquire() as conn:
        verdicts = await conn.fetchval(
            "SELECT count(*) FROM rating.rated_games WHERE table_id = ANY($1::text[])", [g.table_id for g in games]
        )
    assert verdicts == 4


async def test_a_bot_game_played_through_the_table_is_judged_and_not_rated(
    rating: rating_pb2_grpc.RatingServiceStub, stub: table_pb2_grpc.TableServiceStub
) -> None:
    game = BotTable(stub, seed=21, players=2)
    await game.create()
    state = await asyncio.wait_for(game.play(), 120)
    assert state.finished
    result = await judged(rating, game.table_id)
    assert not result.rated and "R1: bot players (heuristic-0, heuristic-1)" in result.reason
    assert result.mode == "classic" and result.rounds == state.round
    assert sorted((e.seat, e.place) for e in result.players) == sorted(
        (p.seat, p.place if p.bankrupt else 1) for p in state.players
    )
    assert all(e.xp == 0 and not e.achievements for e in result.players)
