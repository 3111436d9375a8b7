"""Counter-based randomness whose whole state is two integers in the table state.

SplitMix64 over a counter: draw ``i`` of a table is ``mix(seed + (i + 1) * GAMMA)``.
Nothing hidden lives outside the state, a snapshot is two ints, and an event
that consumed ``k`` draws is replayed by advancing the counter by ``k`` without
re-rolling anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mypy_extensions import i64

_MASK: Final = (1 << 64) - 1
_GAMMA: Final = 0x9E3779B97F4A7C15
#: Compiled with mypyc (make compile): `dice` then runs on native 64-bit integers.
_NATIVE: Final = not __file__.endswith(".py")


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
    if _NATIVE:
        z: i64 = _signed(seed) + (_signed(counter) + 1) * _GAMMA_I64
        return _native_die(z), _native_die(z + _GAMMA_I64)
    z1 = (seed + (counter + 1) * _GAMMA) & _MASK
    z2 = (z1 + _GAMMA) & _MASK
    z1 = ((z1 ^ (z1 >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z2 = ((z2 ^ (z2 >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z1 = ((z1 ^ (z1 >> 27)) * 0x94D049BB133111EB) & _MASK
    z2 = ((z2 ^ (z2 >> 27)) * 0x94D049BB133111EB) & _MASK
    return (((z1 ^ (z1 >> 31)) * 6) >> 64) + 1, (((z2 ^ (z2 >> 31)) * 6) >> 64) + 1


# -- the native build: the same draws on wrapping 64-bit integers (mypyc's i64) ---------
# Only compiled code calls these: interpreted, an i64 is an unbounded int and would not wrap.

_GAMMA_I64: Final = _GAMMA - (1 << 64)
_MIX1_I64: Final = 0xBF58476D1CE4E5B9 - (1 << 64)
_MIX2_I64: Final = 0x94D049BB133111EB - (1 << 64)


def _signed(value: int) -> i64:
    """`value` modulo 2**64, as the signed 64-bit integer of the same bits."""
    u = value & _MASK
    return u - (1 << 64) if u >= (1 << 63) else u


def _native_die(z: i64) -> int:
    """A die from the (wrapped) 64-bit counter value `z`: SplitMix64's mix, then `(x * 6) >> 64`."""
    z = (z ^ ((z >> 30) & 0x3FFFFFFFF)) * _MIX1_I64  # `& ...`: a logical shift of the signed value
    z = (z ^ ((z >> 27) & 0x1FFFFFFFFF)) * _MIX2_I64
    z = z ^ ((z >> 31) & 0x1FFFFFFFF)
    high = (z >> 32) & 0xFFFFFFFF
    low = z & 0xFFFFFFFF
    return int(((6 * high + ((6 * low) >> 32)) >> 32) + 1)  # (x * 6) >> 64 without overflow


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
