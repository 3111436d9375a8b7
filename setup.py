"""Optional native build of the rules engine and the bots with mypyc.

The project metadata lives in pyproject.toml; this file only adds C extensions,
and only when asked. A plain `pip install -e .` builds nothing and the engine
runs as pure Python. `make compile` runs

    MONOPOLY_COMPILE=1 python setup.py build_ext --inplace

which compiles the modules below with mypyc (from the dev dependencies) and puts
the .so files next to their sources in libs/, where the editable install picks
them up ahead of the .py files. `make uncompile` deletes them again.
MONOPOLY_COMPILE=narrow builds only the rules and the bots (for comparisons).
"""

from __future__ import annotations

import os

from setuptools import setup

#: The rules (the facade game.py, the rule areas and the shared flow below them) and the bots.
RULES = [
    "libs/engine/game.py",
    "libs/engine/clock.py",
    "libs/engine/turn.py",
    "libs/engine/delegated.py",
    "libs/engine/jail.py",
    "libs/engine/properties.py",
    "libs/engine/buildings.py",
    "libs/engine/mortgages.py",
    "libs/engine/debts.py",
    "libs/engine/decks.py",
    "libs/engine/position.py",
    "libs/engine/flow.py",
]
NARROW = [
    *RULES,
    "libs/bots/base.py",
    "libs/bots/heuristic.py",
    "libs/bots/random_legal.py",
]
#: ...and the value classes they build and read: the events, the state, the board and the
#: cards, with the pure sub-protocol modules (their commands stay plain Python classes).
#: event_values.py (generated) reads every event's fields for the simulator's events hash;
#: sim/loop.py is the simulator's game loop around the rules and the bots.
#: rng.py is compiled here for `dice`, which the native build runs on mypyc's wrapping
#: 64-bit integers (its other functions gain little: their arithmetic exceeds 64 bits).
#: Interpreted: codec.py (it reads the field types from the sources, since mypyc erases
#: the runtime annotations of the classes it compiles); commands.py (a command must take a
#: wrongly typed field for the rules to refuse it with RuleViolation, where a native class
#: raises TypeError); config.py (`custom` refuses a wrongly typed host setting with
#: ValueError, where a compiled function raises TypeError; compiled, it saves only ~4%).
WIDE = [
    *NARROW,
    "libs/engine/state.py",
    "libs/engine/events.py",
    "libs/engine/auction.py",
    "libs/engine/casino.py",
    "libs/engine/trade.py",
    "libs/engine/board.py",
    "libs/engine/cards.py",
    "libs/engine/rng.py",
    "libs/engine/event_values.py",
    "libs/sim/loop.py",
]

ext_modules = []
_mode = os.environ.get("MONOPOLY_COMPILE", "")
if _mode in ("1", "narrow"):
    from mypyc.build import mypycify

    # The group's shared library lands inside the engine package (libs/engine/native_build__mypyc.*.so),
    # where the editable install finds it; a top-level name would land at the repository root,
    # which is not on the import path of the installed commands.
    ext_modules = mypycify(WIDE if _mode == "1" else NARROW, opt_level="3", group_name="engine.native_build")

setup(ext_modules=ext_modules)
