"""Landing statistics (issue 7 item 4): the simulator's shares against the exact Markov chain.

The reference is `landing_chain`: the chain over (square, doubles so far, jail) with the card
effects of the engine's C1-C2 decks. It reproduces the long-run shares published for the classic
game (jail about 9.4% of rolls when waiting for doubles, 3.9% when paying at once; Illinois
Avenue the most landed-on property, about 3.0% and 3.2%).

The simulated games here are long (150 rounds, nobody short of money, so no bankruptcy cuts a
token's path short and every roll is one observation), played by a minimal driver with the jail
policy under test and counted by the simulator's own `observe_roll`. Their expected counts are
the chain's, started on GO, for each token's number of rolls (`expected_counts`), so the
transient of starting on GO is not mistaken for an error. The one thing the chain cannot follow
is a kept Get Out of Jail Free card (C3: out of its deck while held), so each state may also
lie anywhere between the shares of the four deck compositions (each jail card in or out).

Tolerance: each state's count is a sum of ~N indicator observations; its binomial standard error
is sqrt(N p (1 - p)). Observations of one token are correlated (a stay in jail lasts up to three
rolls), so the error is also estimated from the spread between independent games (the count of a
game minus its expectation), and the larger of the two is used. A state fails at 4.5 standard
errors beyond the deck-composition envelope: with 41 states and two policies that is a chance of
about 6e-4 of a false failure, while any error in the rules (a wrong card target, a missed
re-roll, jail counted on square 10) moves a share by tens of standard errors at this sample size
(N ~ 60,000 rolls per policy: the standard error of a 2.5% share is about 0.064 points).
"""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from engine import BuyProperty, EndTurn, PassBid, Pay, PayJailFine, Phase, Roll, UseJailCard, apply, hasbro, new_game
from monopoly_cli.main import main
from sim.loop import observe_roll
from sim.runner import LANDING_KEYS, game_seed

from .landing_chain import LandingChain, expected_counts, occupation

GAMES = 90
PLAYERS = 4
ROUNDS = 150
Z = 4.5


def _play(policy: str, seed: int) -> tuple[list[int], list[int]]:
    """One long game; per state the observations, and per seat the rolls."""
    config = hasbro(starting_cash=10**7, round_cap=ROUNDS)
    state, _ = new_game(config, [f"p{i}" for i in range(PLAYERS)], seed)
    landing = [0] * 41
    rolls = Counter[int]()
    rolling = -1
    while not state.finished:
        seat = state.actor
        phase = state.phase
        player = state.players[seat]
        if phase is Phase.PRE_ROLL:
            if player.in_jail and not state.rolled and policy == "pay":
                command = UseJailCard(seat) if player.jail_cards else PayJailFine(seat)
            else:
                command = Roll(seat)
        elif phase is Phase.BUY:
            command = BuyProperty(seat)
        elif phase is Phase.PAYMENT:
            command = Pay(seat)
        elif phase is Phase.AUCTION:
            command = PassBid(seat)
        else:
            command = EndTurn(seat)
        apply(state, command)
        if type(command) is Roll:
            rolls[seat] += 1
            rolling = seat
        if rolling >= 0:
            rolling = observe_roll(state, rolling, landing)
    return landing, [rolls[s] for s in range(PLAYERS)]


@pytest.mark.parametrize("policy", ["wait", "pay"])
def test_landing_shares_match_the_markov_chain(policy: str) -> None:
    chain = LandingChain(policy)
    games = [_play(policy, game_seed(2026, i)) for i in range(GAMES)]
    counts = [sum(g[0][i] for g in games) for i in range(41)]
    n = sum(counts)
    assert n == sum(sum(g[1]) for g in games), "one observation per dice roll"
    table = occupation(chain, max(m for g in games for m in g[1]))
    per_game = [expected_counts(table, g[1]) for g in games]
    expected = [sum(e[i] for e in per_game) for i in range(41)]
    assert math.isclose(sum(expected), n)
    base = chain.shares()
    others = [LandingChain(policy, held=h).shares() for h in ((True, False), (False, True), (True, True))]
    failures = []
    worst = 0.0
    for i, key in enumerate(LANDING_KEYS):
        p = expected[i] / n
        binomial = math.sqrt(n * p * (1 - p))
        residuals = [g[0][i] - e[i] for g, e in zip(games, per_game, strict=True)]
        spread = math.sqrt(sum(r * r for r in residuals) * GAMES / (GAMES - 1))
        se = max(binomial, spread)
        # the held-card envelope, in counts: the same shift of the long-run share
        shifts = [(o[key] - base[key]) * n / 100 for o in others]
        low = expected[i] + min(0.0, *shifts)
        high = expected[i] + max(0.0, *shifts)
        outside = max(low - counts[i], counts[i] - high, 0.0)
        if se:
            worst = max(worst, outside / se)
        if outside > Z * se:
            failures.append(f"{key}: {counts[i]} not in [{low:.0f}, {high:.0f}] +- {Z} x {se:.1f}")
    print(f"{policy}: {n} rolls, worst state {worst:.2f} standard errors outside the envelope")
    assert not failures, failures


def test_chain_has_the_published_shape() -> None:
    """Jail is the most frequent state; Illinois Avenue the most landed-on property; nothing
    ever rests on Go To Jail; waiting in jail roughly doubles the jail share."""
    wait, pay = LandingChain("wait").shares(), LandingChain("pay").shares()
    for shares in (wait, pay):
        assert math.isclose(sum(shares.values()), 100)
        assert shares["30"] == 0
        properties = [str(sq) for sq in hasbro().board.purchasable]
        assert max(properties, key=shares.__getitem__) in ("24", "5")  # Illinois (or Reading with a card)
        assert max(shares, key=shares.__getitem__) == "jail"
    assert 9.2 < wait["jail"] < 9.6 and 3.8 < pay["jail"] < 4.1
    assert 2.9 < wait["24"] < 3.1 and 3.1 < pay["24"] < 3.3


def test_simulate_landing_stats_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["simulate", "--ruleset", "hasbro", "--games", "6", "--seed", "11", "--landing-stats", "--json"]
    assert main([*args, "--jail-policy", "wait"]) == 0
    summary = json.loads(capsys.readouterr().out)
    landing = summary["landing"]
    assert list(landing) == [*(str(i) for i in range(40)), "jail"]
    assert math.isclose(sum(landing.values()), 100, abs_tol=0.01)
    assert summary["landing_rolls"] == summary["rolls"] > 0  # every roll is one observation
    assert landing["30"] == 0 and landing["jail"] > 0


def test_online_summary_has_no_landing_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--games", "2", "--seed", "1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "landing" not in summary
