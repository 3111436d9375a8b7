"""The dice are SplitMix64 draws, bit for bit, in the pure-Python and the native build."""

from __future__ import annotations

import random

from engine import rng

MASK = (1 << 64) - 1


def reference_draw(seed: int, counter: int) -> int:
    z = (seed + (counter + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def reference_dice(seed: int, counter: int) -> tuple[int, int]:
    return ((reference_draw(seed, counter) * 6) >> 64) + 1, ((reference_draw(seed, counter + 1) * 6) >> 64) + 1


def test_dice_are_two_draws_of_the_stream() -> None:
    rnd = random.Random(2026)
    cases = [(rnd.getrandbits(64), rnd.randrange(1 << 24)) for _ in range(20_000)]
    edges = (0, 1, (1 << 63) - 1, 1 << 63, MASK)
    cases += [(seed, counter) for seed in edges for counter in (*range(200), (1 << 63) - 2, MASK - 1)]
    for seed, counter in cases:
        assert rng.dice(seed, counter) == reference_dice(seed, counter), (seed, counter)
        assert rng.dice(seed, counter)[0] == rng.die(seed, counter)


def test_dice_of_seeds_outside_64_bits_wrap_like_the_stream() -> None:
    for seed in (-1, -(1 << 63), 1 << 64, (1 << 70) + 5):
        for counter in range(50):
            assert rng.dice(seed, counter) == reference_dice(seed, counter)
