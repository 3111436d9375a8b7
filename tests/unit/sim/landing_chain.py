"""The exact long-run landing shares of the hasbro game: a Markov chain over dice rolls.

One step of the chain is one dice roll; its state is where that roll leaves the token once the
move is fully resolved, as `monopoly simulate --landing-stats` counts it:

* ``(square, doubles)`` outside jail, `doubles` the doubles rolled so far in this turn when the
  next roll is a re-roll (1 or 2), else 0 (the next roll starts a new turn, G3);
* ``("jail", k)`` in jail after `k` failed rolls (J2-J4; with the "pay" policy the player pays at
  the start of the next turn, so only k = 0 occurs).

The transitions follow the engine's rules: a third doubles goes to jail without resolving the
square (G4); the Go To Jail square and cards send to jail (G7, J1); doubles in jail free the
player, who moves and does not roll again (J3); the third failed roll pays the fine and moves by
that roll (J4). Card effects come from the engine's own decks (C1, C2, `engine.cards`): a card
that moves the token (advance, nearest railroad or utility, back 3 with whatever the new square
does, go to jail) moves it; every other card leaves it on the card square.

A deck is drawn as a uniformly random card of those in it. A Get Out of Jail Free card a player
keeps is out of its deck (C3) until used, so the chain takes, per deck, whether that card is in
the deck (16 cards) or held (15): the simulation's long-run shares lie between these chains.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine import Effect, Kind, TableConfig, hasbro
from engine.cards import Card

JAIL = 10
Outcome = int  # a square 0-39, or JAILED
JAILED = -1


def _nearest(config: TableConfig, start: int, kind: Kind) -> int:
    squares = config.board.squares
    return next((start + step) % 40 for step in range(1, 41) if squares[(start + step) % 40].kind is kind)


def _deck(cards: Iterable[Card], jail_card_held: bool) -> list[Card]:
    return [c for c in cards if not (jail_card_held and c.effect is Effect.JAIL_FREE)]


class LandingChain:
    def __init__(self, policy: str, config: TableConfig | None = None, held: tuple[bool, bool] = (False, False)):
        if policy not in ("pay", "wait"):
            raise ValueError(policy)
        self.policy = policy
        self.config = config or hasbro()
        self.chance = _deck(self.config.chance_deck, held[0])
        self.chest = _deck(self.config.chest_deck, held[1])
        self.states: list[tuple[object, int]] = [(sq, d) for sq in range(40) for d in range(3)]
        self.states += [("jail", k) for k in range(3 if policy == "wait" else 1)]
        self.index = {s: i for i, s in enumerate(self.states)}

    # -- where a token that arrives on a square comes to rest --------------------------
    def resolve(self, square: int) -> dict[Outcome, float]:
        kind = self.config.board.squares[square].kind
        if kind is Kind.GO_TO_JAIL:
            return {JAILED: 1.0}
        if kind is Kind.CHANCE or kind is Kind.CHEST:
            deck = self.chance if kind is Kind.CHANCE else self.chest
            out: dict[Outcome, float] = {}
            for card in deck:
                for where, p in self._card(card, square).items():
                    out[where] = out.get(where, 0.0) + p / len(deck)
            return out
        return {square: 1.0}

    def _card(self, card: Card, square: int) -> dict[Outcome, float]:
        e = card.effect
        if e is Effect.ADVANCE_TO:
            return self.resolve(card.target)
        if e is Effect.GO_TO_JAIL:
            return {JAILED: 1.0}
        if e is Effect.NEAREST_RAILROAD:
            return {_nearest(self.config, square, Kind.RAILROAD): 1.0}
        if e is Effect.NEAREST_UTILITY or e is Effect.NEAREST_UTILITY_THROW:
            return {_nearest(self.config, square, Kind.UTILITY): 1.0}
        if e is Effect.BACK:
            return self.resolve((square - card.amount) % 40)
        return {square: 1.0}

    # -- the chain ----------------------------------------------------------------------
    def _after_move(self, out: dict[int, float], p: float, square: int, doubles: int) -> None:
        for where, q in self.resolve(square % 40).items():
            state = ("jail", 0) if where == JAILED else (where, doubles)
            i = self.index[state]
            out[i] = out.get(i, 0.0) + p * q

    def row(self, state: tuple[object, int]) -> dict[int, float]:
        where, count = state
        out: dict[int, float] = {}
        if where == "jail" and self.policy == "pay":
            where, count = JAIL, 0  # paid at the start of the turn: a normal roll from square 10
        for a in range(1, 7):
            for b in range(1, 7):
                p = 1 / 36
                if where == "jail":
                    if a == b or count == 2:  # J3: doubles free; J4: the third failure pays; both move
                        self._after_move(out, p, JAIL + a + b, 0)
                    else:
                        i = self.index[("jail", count + 1)]
                        out[i] = out.get(i, 0.0) + p
                    continue
                assert isinstance(where, int)
                if a == b and count == 2:  # G4: third doubles, straight to jail
                    i = self.index[("jail", 0)]
                    out[i] = out.get(i, 0.0) + p
                    continue
                self._after_move(out, p, where + a + b, count + 1 if a == b else 0)
        return out

    def stationary(self) -> list[float]:
        """Solve pi P = pi, sum(pi) = 1 by Gaussian elimination (dense, a few hundred states)."""
        n = len(self.states)
        # Equations: for each j, sum_i pi_i (P_ij - [i == j]) = 0; the last one replaced by sum pi = 1.
        a = [[0.0] * (n + 1) for _ in range(n)]
        for i, state in enumerate(self.states):
            for j, p in self.row(state).items():
                a[j][i] += p
            a[i][i] -= 1.0
        a[n - 1] = [1.0] * n + [1.0]
        for col in range(n):
            pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
            a[col], a[pivot] = a[pivot], a[col]
            lead = a[col][col]
            for r in range(n):
                if r != col and a[r][col]:
                    f = a[r][col] / lead
                    row_r, row_c = a[r], a[col]
                    for c in range(col, n + 1):
                        row_r[c] -= f * row_c[c]
        return [a[i][n] / a[i][i] for i in range(n)]

    def shares(self) -> dict[str, float]:
        """Long-run share (percent) of rolls ending on each square "0"-"39" and in "jail"."""
        pi = self.stationary()
        out = {str(sq): 0.0 for sq in range(40)}
        out["jail"] = 0.0
        for (where, _), p in zip(self.states, pi, strict=True):
            out["jail" if where == "jail" else str(where)] += 100 * p
        return out


def envelope(policy: str) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """The shares with both jail cards in their decks, and the lowest and highest share of each
    state over the four deck compositions (each jail card in its deck or held)."""
    chains = [LandingChain(policy, held=(c, h)).shares() for c in (False, True) for h in (False, True)]
    low = {k: min(ch[k] for ch in chains) for k in chains[0]}
    high = {k: max(ch[k] for ch in chains) for k in chains[0]}
    return chains[0], low, high


def occupation(chain: LandingChain, most: int) -> list[list[float]]:
    """Per number of rolls m = 0..`most`: the expected observations per state ("0"-"39", then
    jail, as 41 numbers) of a token that starts on GO at the start of a turn and rolls m times:
    the finite-game counterpart of `shares`, with the transient of starting on GO."""
    n = len(chain.states)
    rows = [list(chain.row(s).items()) for s in chain.states]
    target = [40 if where == "jail" else int(where) for where, _ in chain.states]  # type: ignore[call-overload]
    v = [0.0] * n
    v[chain.index[(0, 0)]] = 1.0
    cum = [0.0] * 41
    out = [list(cum)]
    for _ in range(most):
        nxt = [0.0] * n
        for i, p in enumerate(v):
            if p:
                for j, q in rows[i]:
                    nxt[j] += p * q
        v = nxt
        for i, p in enumerate(v):
            cum[target[i]] += p
        out.append(list(cum))
    return out


def expected_counts(table: list[list[float]], rolls: Iterable[int]) -> list[float]:
    """Expected observations per state for tokens rolling `rolls` times each (see `occupation`)."""
    total = [0.0] * 41
    for m in rolls:
        total = [a + b for a, b in zip(total, table[m], strict=True)]
    return total
