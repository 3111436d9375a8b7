"""The casino service's pure parts: a bet's outcome (K2-K4), ledger verification, wall deadlines."""

from __future__ import annotations

import dataclasses

from engine.casino import draw
from engine.config import CasinoRules
from monopoly.v1 import common_pb2
from services.casino.bets import outcome
from services.casino.handlers import wall_deadline
from services.casino.store import Bet
from services.casino.verify import differences, recompute

RULES = CasinoRules()


def seed_where(hit: bool) -> int:
    return next(s for s in range(1, 100_000) if draw(s, 0, RULES)[1] == hit)


def open_bet(numbers: tuple[int, ...], seed: int, pool: int) -> Bet:
    return Bet("t:5", "t", 5, 1, "open", None, 15000, 0, False, seed=seed, counter=0, numbers=numbers, pool_before=pool)


def test_a_hit_pays_6000_over_k_stake_included() -> None:
    seed = seed_where(False)
    die, _ = draw(seed, 0, RULES)
    for numbers, pays in (((die,), 6000), ((die, die % 6 + 1), 3000), ((die, die % 6 + 1, (die + 1) % 6 + 1), 2000)):
        b = outcome(open_bet(numbers, seed, 1500), RULES)
        assert (b.status, b.die, b.payout, b.jackpot, b.pool_add, b.pool_after) == ("settled", die, pays, 0, 500, 2000)
    miss = tuple(n for n in range(1, 7) if n != die)[:3]
    assert outcome(open_bet(miss, seed, 0), RULES).payout == 0


def test_a_jackpot_pays_the_whole_pool_with_this_bets_addition() -> None:
    seed = seed_where(True)
    b = outcome(open_bet((1,), seed, 2500), RULES)
    assert (b.jackpot_hit, b.jackpot, b.pool_after) == (True, 3000, 0)


def test_verify_recomputes_the_ledger_and_finds_tampering() -> None:
    b = outcome(open_bet((2, 5), seed_where(True), 500), RULES)
    row = {f.name: getattr(b, f.name) for f in dataclasses.fields(b)}
    assert differences(row) == []
    assert recompute(row)["jackpot"] == 1000
    assert differences({**row, "payout": row["payout"] + 1})
    assert differences({**row, "die": row["die"] % 6 + 1})
    assert differences({**row, "counter": 2}) or draw(row["seed"], 2, RULES) == (row["die"], row["jackpot_hit"])


def test_wall_deadline_of_a_game_deadline() -> None:
    env = common_pb2.Envelope(occurred_at=common_pb2.OccurredAt(game_ms=10_000, clock_scale=10, wall_unix_ms=1_000_000))
    assert wall_deadline(env, 85_000) == 1_007_500  # 75 game seconds at x10 = 7.5 s
