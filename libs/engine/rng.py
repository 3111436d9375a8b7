"""Counter-based randomness whose whole state is two integers in the table state.

SplitMix64 over a counter: draw ``i`` of a table is ``mix(seed + (i + 1) * GAMMA)``.
Nothing hidden lives outside the state, a snapshot is two ints, and an event
that consumed ``k`` draws is replayed by advancing the counter by ``k`` without
re-rolling anything.
"""

from __future__ import annotations

from collections.abc import Sequence

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def draw(seed: int, counter: int) -> int:
    """The 64-bit value of draw number ``counter`` of the stream ``seed``."""
    z = (seed + (counter + 1) * _GAMMA) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def below(seed: int, counter: int, n: int) -> int:
    """A uniform integer in ``[0, n)`` from one draw (multiply-shift; bias < 2**-58)."""
    return (draw(seed, counter) * n) >> 64


def die(seed: int, counter: int, faces: int = 6) -> int:
    """One die face in ``1..faces`` from one draw."""
    return ((draw(seed, counter) * faces) >> 64) + 1


def dice(seed: int, counter: int) -> tuple[int, int]:
    """Two six-sided dice from draws `counter` and `counter + 1` (one call: the hot path)."""
    z1 = (seed + (counter + 1) * _GAMMA) & _MASK
    z2 = (z1 + _GAMMA) & _MASK
    z1 = ((z1 ^ (z1 >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z2 = ((z2 ^ (z2 >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z1 = ((z1 ^ (z1 >> 27)) * 0x94D049BB133111EB) & _MASK
    z2 = ((z2 ^ (z2 >> 27)) * 0x94D049BB133111EB) & _MASK
    return (((z1 ^ (z1 >> 31)) * 6) >> 64) + 1, (((z2 ^ (z2 >> 31)) * 6) >> 64) + 1


def shuffled(items: Sequence[int], seed: int, counter: int) -> tuple[int, ...]:
    """Fisher-Yates shuffle consuming ``len(items) - 1`` draws from ``counter`` on."""
    out = list(items)
    k = counter
    for i in range(len(out) - 1, 0, -1):
        j = below(seed, k, i + 1)
        k += 1
        out[i], out[j] = out[j], out[i]
    return tuple(out)


def shuffle_draws(n: int) -> int:
    """How many draws :func:`shuffled` consumes for ``n`` items."""
    return max(n - 1, 0)


def table_seed(seed: int) -> int:
    """Spread a user seed (any int) over 64 bits so nearby seeds give unrelated games."""
    return draw(seed & _MASK, 0x5EED)
