"""Is the engine compiled? The optional mypyc build (`make compile`) and its freshness check.

`make compile` puts C extensions (.so) next to the sources of the engine, the
bots and the simulator's game loop; Python then imports them ahead of the .py files. A build older than
its sources would silently run old rules, so the packages refuse to import
one: rebuild it (`make compile`) or delete it (`make uncompile`). The build
is one unit (the engine, the bots, the loop), checked as a whole when this module is
imported, which the engine package does first.
"""

from __future__ import annotations

import importlib.machinery
import os

_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # ".cpython-311-x86_64-linux-gnu.so": this interpreter's
_LIBS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The packages of the native build (setup.py).
PACKAGES = ("engine", "bots", "sim")


def compiled_modules(package_dir: str) -> list[str]:
    """The modules of a package directory that this interpreter imports from a native build."""
    return sorted(name.removesuffix(_SUFFIX) for name in os.listdir(package_dir) if name.endswith(_SUFFIX))


def check_fresh(package_dir: str) -> None:
    """Raise ImportError if a module's source changed after its native build."""
    for module in compiled_modules(package_dir):
        source = os.path.join(package_dir, module + ".py")
        built = os.path.join(package_dir, module + _SUFFIX)
        if os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(built):
            raise ImportError(
                f"{source} changed after the native build of it (make compile): "
                "run `make compile` to rebuild, or `make uncompile` to use the pure-Python modules"
            )


def is_compiled() -> bool:
    """True when the rules engine runs from the mypyc build."""
    from . import game

    return not game.__file__.endswith(".py") if game.__file__ else False


for _package in PACKAGES:
    check_fresh(os.path.join(_LIBS, _package))
