"""Bots that play through the engine's commands: for simulation, fuzzing and load tests."""

from .base import Bot
from .heuristic import JAIL_POLICIES, HeuristicBot
from .random_legal import RandomBot

BOTS: dict[str, type[Bot]] = {"heuristic": HeuristicBot, "random": RandomBot}


def make_bot(kind: str, seed: int) -> Bot:
    try:
        return BOTS[kind](seed)
    except KeyError:
        raise ValueError(f"unknown bot {kind!r}; known: {', '.join(sorted(BOTS))}") from None


__all__ = ["BOTS", "JAIL_POLICIES", "Bot", "HeuristicBot", "RandomBot", "make_bot"]
