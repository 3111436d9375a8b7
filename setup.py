"""Optional native build of the rules engine and the bots with mypyc.

The project metadata lives in pyproject.toml; this file only adds C extensions,
and only when asked. A plain `pip install -e .` builds nothing and the engine
runs as pure Python. `make compile` runs

    MONOPOLY_COMPILE=1 python setup.py build_ext --inplace

which compiles the modules below with mypyc (from the dev dependencies) and puts
the .so files next to their sources in libs/, where the editable install picks
them up ahead of the .py files. `make uncompile` deletes them again.
"""

from __future__ import annotations

import os

from setuptools import setup

#: The modules compiled: the rules (game.py) and the bots. rng.py stays interpreted: its
#: 64-bit arithmetic overflows mypyc's fast integers and runs no faster compiled. The value
#: classes (events, commands, state, config) stay interpreted: mypyc erases their field
#: types (tuple[int, ...] becomes tuple) that the codec and the proto generator read,
#: and it would turn a wrongly typed field into a TypeError where the rules raise
#: RuleViolation. Compiled code reads them through plain attribute access.
COMPILED = [
    "libs/engine/game.py",
    "libs/bots/base.py",
    "libs/bots/heuristic.py",
    "libs/bots/random_legal.py",
]

ext_modules = []
if os.environ.get("MONOPOLY_COMPILE") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED, opt_level="3", group_name="monopoly_native")

setup(ext_modules=ext_modules)
