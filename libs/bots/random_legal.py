"""A bot that plays a uniformly random legal command: a fuzzer for the rules."""

from __future__ import annotations

import random

from engine import Bid, Command, RuleViolation, Surrender, TableState, check, legal_commands


class RandomBot:
    """Random legal play; surrenders only rarely so games explore the board."""

    surrender_odds = 0.001

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: TableState, seat: int) -> Command:
        commands = legal_commands(state, seat)
        if not commands:
            raise ValueError(f"seat {seat} has nothing to do in phase {state.phase}")
        playing = [c for c in commands if not isinstance(c, Surrender)]
        if playing and self.rng.random() >= self.surrender_odds:
            commands = playing
        command = self.rng.choice(commands)
        if isinstance(command, Bid) and self.rng.random() < 0.3:
            raised = Bid(seat, command.amount + 100 * self.rng.randrange(1, 4))
            try:
                check(state, raised)
            except RuleViolation:
                return command
            return raised
        return command
